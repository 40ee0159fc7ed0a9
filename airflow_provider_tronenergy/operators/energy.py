"""The four purchase modes: buy, buy-count, auto-buy and smart-buy.

Each takes its mode's arguments and hands them to its request builder
(:mod:`~airflow_provider_tronenergy.purchase.modes`); the purchase's life is
:class:`~airflow_provider_tronenergy.purchase.run.Purchase`, the task's part
:class:`~airflow_provider_tronenergy.operators.purchase.TronEnergyPurchaseOperator`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow_provider_tronenergy.operators.purchase import TronEnergyPurchaseOperator
from airflow_provider_tronenergy.purchase.modes import AutoBuy, Buy, BuyCount, SmartBuy
from tronenergy_protocol.energy import ENERGY_PER_TRANSFER


class TronEnergyBuyOperator(TronEnergyPurchaseOperator):
    """Rent a fixed amount of energy to ``target_address``."""

    mode = Buy.name
    template_fields: Sequence[str] = (*TronEnergyPurchaseOperator.template_fields,
                                      "target_address", "energy_amount")

    def __init__(self, *, target_address: str, energy_amount: int | str = ENERGY_PER_TRANSFER,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_address = target_address
        self.energy_amount = energy_amount

    def order(self) -> Buy:
        return Buy(rent_time=self.rent_time, target_address=self.target_address,
                   energy_amount=self.energy_amount)


class TronEnergyBuyByCountOperator(TronEnergyPurchaseOperator):
    """Rent energy for ``count`` transfers (to addresses that already hold the token)."""

    mode = BuyCount.name
    template_fields: Sequence[str] = (*TronEnergyPurchaseOperator.template_fields,
                                      "target_address", "count")

    def __init__(self, *, target_address: str, count: int | str = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_address = target_address
        self.count = count

    def order(self) -> BuyCount:
        return BuyCount(rent_time=self.rent_time, target_address=self.target_address,
                        count=self.count)


class TronEnergyAutoBuyOperator(TronEnergyPurchaseOperator):
    """Rent what one transfer from ``from_address`` to ``to_address`` needs (65k or 131k)."""

    mode = AutoBuy.name
    template_fields: Sequence[str] = (*TronEnergyPurchaseOperator.template_fields,
                                      "from_address", "to_address")

    def __init__(self, *, from_address: str, to_address: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.from_address = from_address
        self.to_address = to_address

    def order(self) -> AutoBuy:
        return AutoBuy(rent_time=self.rent_time, from_address=self.from_address,
                       to_address=self.to_address)


class TronEnergySmartBuyOperator(TronEnergyPurchaseOperator):
    """One call: activate ``to_address`` if needed, estimate, buy for ``receiver_address``."""

    mode = SmartBuy.name
    template_fields: Sequence[str] = (*TronEnergyPurchaseOperator.template_fields,
                                      "receiver_address", "to_address", "from_address")

    def __init__(self, *, receiver_address: str, to_address: str,
                 from_address: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.receiver_address = receiver_address
        self.to_address = to_address
        self.from_address = from_address

    def order(self) -> SmartBuy:
        return SmartBuy(rent_time=self.rent_time, receiver_address=self.receiver_address,
                        to_address=self.to_address, from_address=self.from_address)


__all__ = [
    "TronEnergyAutoBuyOperator",
    "TronEnergyBuyByCountOperator",
    "TronEnergyBuyOperator",
    "TronEnergyPurchaseOperator",
    "TronEnergySmartBuyOperator",
]
