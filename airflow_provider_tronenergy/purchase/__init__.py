"""One energy purchase as a plain object: the four modes' requests and the life around them.

``modes`` (request builders: buy, buy-count, auto-buy, smart-buy), ``run``
(:class:`Purchase`: decide, quote, guard, claim, place, record), ``results`` (what a
purchase reports) and ``outcomes`` (the stops a caller acts on, the words a person
reads). The operators build a :class:`Purchase` and call it; waiting and asking a person
stay with them.
"""

from __future__ import annotations

from airflow_provider_tronenergy.purchase.modes import AutoBuy, Buy, BuyCount, Mode, SmartBuy
from airflow_provider_tronenergy.purchase.outcomes import (
    ON_AMBIGUOUS,
    RESOLVE_COMMAND,
    EnergyCheck,
    EnergyGone,
    PurchaseRetry,
    PurchaseStopped,
    UnknownOutcome,
)
from airflow_provider_tronenergy.purchase.run import Purchase, Settings, journal_for, refused

__all__ = [
    "ON_AMBIGUOUS",
    "RESOLVE_COMMAND",
    "AutoBuy",
    "Buy",
    "BuyCount",
    "EnergyCheck",
    "EnergyGone",
    "Mode",
    "Purchase",
    "PurchaseRetry",
    "PurchaseStopped",
    "Settings",
    "SmartBuy",
    "UnknownOutcome",
    "journal_for",
    "refused",
]
