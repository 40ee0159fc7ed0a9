"""The four purchase modes as request builders: buy, buy-count, auto-buy and smart-buy.

Each is a small frozen object holding the values as they entered (a DAG's
arguments, rendered, or a batch order) and saying only what it sends: the
validated request (JSON-safe: it is journaled), the energy to quote and the one
call that spends TRX. The life around them (journal, quote, guards, record) is
:class:`~airflow_provider_tronenergy.purchase.run.Purchase`.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from airflow_provider_tronenergy.client import (
    Purchase,
    SmartPurchase,
    TronEnergyClient,
    ValidationRules,
)
from airflow_provider_tronenergy.client import validation as checks
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.protocol.energy import ENERGY_PER_TRANSFER, transfer_energy
from airflow_provider_tronenergy.templated import as_int, optional_text


@dataclass(frozen=True)
class Mode:
    """What every mode says: its name, its target, its request, its quote, its call."""

    name: ClassVar[str] = ""
    rent_time: Any

    @property
    def target(self) -> str:
        """The address that receives the energy."""
        raise NotImplementedError

    def request(self, rules: ValidationRules) -> dict[str, Any]:
        """The purchase's validated parameters, JSON-safe (they are journaled)."""
        raise NotImplementedError

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        """(energy to buy, whether an activation is part of the purchase)."""
        raise NotImplementedError

    def place(self, client: TronEnergyClient, request: dict[str, Any]) -> Purchase | SmartPurchase:
        """Send the purchase: the one call that spends TRX."""
        raise NotImplementedError


@dataclass(frozen=True)
class Buy(Mode):
    """A fixed amount of energy to ``target_address``."""

    name: ClassVar[str] = "buy"
    target_address: Any = None
    energy_amount: Any = ENERGY_PER_TRANSFER

    @property
    def target(self) -> str:
        return str(self.target_address)

    def request(self, rules: ValidationRules) -> dict[str, Any]:
        energy = checks.energy_amount(as_int(self.energy_amount, "energy_amount"), rules)
        return {"target_address": checks.address(self.target_address, "target_address"),
                "energy_amount": energy,
                "rent_time": text(checks.rent_time(self.rent_time, rules.buy_rent_times))}

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        return int(request["energy_amount"]), False

    def place(self, client: TronEnergyClient, request: dict[str, Any]) -> Purchase:
        return client.buy_energy(request["target_address"], request["energy_amount"],
                                 Decimal(request["rent_time"]))


@dataclass(frozen=True)
class BuyCount(Mode):
    """Energy for ``count`` transfers (to addresses that already hold the token)."""

    name: ClassVar[str] = "buy_count"
    target_address: Any = None
    count: Any = 1

    @property
    def target(self) -> str:
        return str(self.target_address)

    def request(self, rules: ValidationRules) -> dict[str, Any]:
        count = checks.count(as_int(self.count, "count"), rules)
        return {"target_address": checks.address(self.target_address, "target_address"),
                "count": count,
                "rent_time": text(checks.rent_time(self.rent_time, rules.buy_count_rent_times))}

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        return int(request["count"]) * energy_per_transfer, False

    def place(self, client: TronEnergyClient, request: dict[str, Any]) -> Purchase:
        return client.buy_energy_by_count(request["target_address"], request["count"],
                                          Decimal(request["rent_time"]))


@dataclass(frozen=True)
class AutoBuy(Mode):
    """What one transfer from ``from_address`` to ``to_address`` needs (65k or 131k)."""

    name: ClassVar[str] = "auto_buy"
    from_address: Any = None
    to_address: Any = None

    @property
    def target(self) -> str:
        return str(self.from_address)

    def request(self, rules: ValidationRules) -> dict[str, Any]:
        return {"from_address": checks.address(self.from_address, "from_address"),
                "to_address": checks.address(self.to_address, "to_address"),
                "rent_time": text(checks.rent_time(self.rent_time, rules.auto_buy_rent_times))}

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        check = client.check_address(request["to_address"])
        return transfer_energy(check.transfer_count), False

    def place(self, client: TronEnergyClient, request: dict[str, Any]) -> Purchase:
        return client.auto_buy_energy(request["from_address"], request["to_address"],
                                      Decimal(request["rent_time"]))


@dataclass(frozen=True)
class SmartBuy(Mode):
    """One call: activate ``to_address`` if needed, estimate, buy for ``receiver_address``."""

    name: ClassVar[str] = "smart_buy"
    receiver_address: Any = None
    to_address: Any = None
    from_address: Any = None

    @property
    def target(self) -> str:
        return str(self.receiver_address)

    def request(self, rules: ValidationRules) -> dict[str, Any]:
        return {
            "receiver_address": checks.address(self.receiver_address, "receiver_address"),
            "to_address": checks.address(self.to_address, "to_address"),
            "from_address": checks.optional_address(optional_text(self.from_address),
                                                    "from_address"),
            "rent_time": text(checks.rent_time(self.rent_time, rules.smart_buy_rent_times)),
        }

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        check = client.check_address(request["to_address"])
        return transfer_energy(check.transfer_count), check.need_activate

    def place(self, client: TronEnergyClient, request: dict[str, Any]) -> SmartPurchase:
        return client.smart_buy_energy(request["receiver_address"], request["to_address"],
                                       request["from_address"], Decimal(request["rent_time"]))
