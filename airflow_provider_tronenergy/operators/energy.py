"""The four purchase modes: buy, buy-count, auto-buy and smart-buy.

Each says only what it sends and how to quote it; validation, the purchase
journal, the money guards and the wait live in
:class:`~airflow_provider_tronenergy.operators.purchase.TronEnergyPurchaseOperator`.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from airflow_provider_tronenergy.client import (
    Purchase,
    SmartPurchase,
    TronEnergyClient,
    ValidationRules,
)
from airflow_provider_tronenergy.client import validation as checks
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.operators.purchase import TronEnergyPurchaseOperator
from airflow_provider_tronenergy.protocol.energy import ENERGY_PER_TRANSFER, transfer_energy
from airflow_provider_tronenergy.templated import as_int, optional_text


class TronEnergyBuyOperator(TronEnergyPurchaseOperator):
    """Rent a fixed amount of energy to ``target_address``."""

    mode = "buy"
    template_fields: Sequence[str] = (*TronEnergyPurchaseOperator.template_fields,
                                      "target_address", "energy_amount")

    def __init__(self, *, target_address: str, energy_amount: int | str = ENERGY_PER_TRANSFER,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_address = target_address
        self.energy_amount = energy_amount

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


class TronEnergyBuyByCountOperator(TronEnergyPurchaseOperator):
    """Rent energy for ``count`` transfers (to addresses that already hold the token)."""

    mode = "buy_count"
    template_fields: Sequence[str] = (*TronEnergyPurchaseOperator.template_fields,
                                      "target_address", "count")

    def __init__(self, *, target_address: str, count: int | str = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_address = target_address
        self.count = count

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


class TronEnergyAutoBuyOperator(TronEnergyPurchaseOperator):
    """Rent what one transfer from ``from_address`` to ``to_address`` needs (65k or 131k)."""

    mode = "auto_buy"
    template_fields: Sequence[str] = (*TronEnergyPurchaseOperator.template_fields,
                                      "from_address", "to_address")

    def __init__(self, *, from_address: str, to_address: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.from_address = from_address
        self.to_address = to_address

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


class TronEnergySmartBuyOperator(TronEnergyPurchaseOperator):
    """One call: activate ``to_address`` if needed, estimate, buy for ``receiver_address``."""

    mode = "smart_buy"
    template_fields: Sequence[str] = (*TronEnergyPurchaseOperator.template_fields,
                                      "receiver_address", "to_address", "from_address")

    def __init__(self, *, receiver_address: str, to_address: str,
                 from_address: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.receiver_address = receiver_address
        self.to_address = to_address
        self.from_address = from_address

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


__all__ = [
    "TronEnergyAutoBuyOperator",
    "TronEnergyBuyByCountOperator",
    "TronEnergyBuyOperator",
    "TronEnergyPurchaseOperator",
    "TronEnergySmartBuyOperator",
]
