"""The four purchase modes as request builders: buy, buy-count, auto-buy and smart-buy.

Each is a small frozen object holding the values as they entered (a DAG's
arguments, rendered, or a batch order) and saying only what it sends: the call
that spends TRX, built through the client's :class:`Endpoints` (which check every
value, once, there), the request the journal keeps of that call (JSON-safe), and
the energy to quote. Placing sends that very call: nothing is checked twice. The
life around them (journal, quote, guards, record) is
:class:`~airflow_provider_tronenergy.purchase.run.Purchase`.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from airflow_provider_tronenergy.client import Purchase, SmartPurchase, TronEnergyClient
from airflow_provider_tronenergy.client.core import Call
from airflow_provider_tronenergy.client.endpoints import Endpoints
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.templated import as_int, optional_text
from tronenergy_protocol.energy import ENERGY_PER_TRANSFER, transfer_energy

Spend = Call[Purchase | SmartPurchase]
"""The call that spends TRX, its values checked by :class:`Endpoints` when it was built."""


def _journaled(value: Any) -> Any:
    """A body value as the journal keeps it: rent_time (a Decimal) as exact text."""
    return text(value) if isinstance(value, Decimal) else value


@dataclass(frozen=True)
class Mode:
    """What every mode says: its name, its target, its call, its request, its quote."""

    name: ClassVar[str] = ""
    fields: ClassVar[tuple[str, ...]] = ()
    """The request's keys, as journaled (a key the call leaves out is kept as None)."""
    rent_time: Any

    @property
    def target(self) -> str:
        """The address that receives the energy."""
        raise NotImplementedError

    def call(self, endpoints: Endpoints) -> Spend:
        """The one call that spends TRX; ``endpoints`` checks every value (ValidationError)."""
        raise NotImplementedError

    def request(self, call: Spend) -> dict[str, Any]:
        """What the journal keeps of ``call``: its body, JSON-safe; nothing checked again."""
        return {key: _journaled(call.body.get(key)) for key in self.fields}

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        """(energy to buy, whether an activation is part of the purchase)."""
        raise NotImplementedError

    def place(self, client: TronEnergyClient, call: Spend) -> Purchase | SmartPurchase:
        """Send the purchase: ``call`` as it was built and checked, not rebuilt."""
        return client.run(call)


@dataclass(frozen=True)
class Buy(Mode):
    """A fixed amount of energy to ``target_address``."""

    name: ClassVar[str] = "buy"
    fields: ClassVar[tuple[str, ...]] = ("target_address", "energy_amount", "rent_time")
    target_address: Any = None
    energy_amount: Any = ENERGY_PER_TRANSFER

    @property
    def target(self) -> str:
        return str(self.target_address)

    def call(self, endpoints: Endpoints) -> Call[Purchase]:
        return endpoints.buy_energy(self.target_address,
                                    as_int(self.energy_amount, "energy_amount"), self.rent_time)

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        return int(request["energy_amount"]), False


@dataclass(frozen=True)
class BuyCount(Mode):
    """Energy for ``count`` transfers (to addresses that already hold the token)."""

    name: ClassVar[str] = "buy_count"
    fields: ClassVar[tuple[str, ...]] = ("target_address", "count", "rent_time")
    target_address: Any = None
    count: Any = 1

    @property
    def target(self) -> str:
        return str(self.target_address)

    def call(self, endpoints: Endpoints) -> Call[Purchase]:
        return endpoints.buy_energy_by_count(self.target_address, as_int(self.count, "count"),
                                             self.rent_time)

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        return int(request["count"]) * energy_per_transfer, False


@dataclass(frozen=True)
class AutoBuy(Mode):
    """What one transfer from ``from_address`` to ``to_address`` needs (65k or 131k)."""

    name: ClassVar[str] = "auto_buy"
    fields: ClassVar[tuple[str, ...]] = ("from_address", "to_address", "rent_time")
    from_address: Any = None
    to_address: Any = None

    @property
    def target(self) -> str:
        return str(self.from_address)

    def call(self, endpoints: Endpoints) -> Call[Purchase]:
        return endpoints.auto_buy_energy(self.from_address, self.to_address, self.rent_time)

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        check = client.check_address(request["to_address"])
        return transfer_energy(check.transfer_count), False


@dataclass(frozen=True)
class SmartBuy(Mode):
    """One call: activate ``to_address`` if needed, estimate, buy for ``receiver_address``."""

    name: ClassVar[str] = "smart_buy"
    fields: ClassVar[tuple[str, ...]] = ("receiver_address", "to_address", "from_address",
                                         "rent_time")
    receiver_address: Any = None
    to_address: Any = None
    from_address: Any = None

    @property
    def target(self) -> str:
        return str(self.receiver_address)

    def call(self, endpoints: Endpoints) -> Call[SmartPurchase]:
        return endpoints.smart_buy_energy(self.receiver_address, self.to_address,
                                          optional_text(self.from_address), self.rent_time)

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        check = client.check_address(request["to_address"])
        return transfer_energy(check.transfer_count), check.need_activate
