"""What a purchase's life says when it stops: an unknown outcome, energy gone, the journal down.

The words a person reads when a purchase cannot go on (the resolve command, the
time an attempt was sent); the two verdicts a purchase ends with when it cannot go on,
:class:`PurchaseStopped` (a retry would meet the same) and :class:`PurchaseRetry`
(nothing bought by this attempt; a retry may buy); and the two stops a caller acts on:
:class:`UnknownOutcome` (``on_ambiguous="ask"``: a person is to be asked) and
:class:`EnergyGone` (a placed order's energy is no longer on chain: the batch buys the
shortfall once).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

import sqlalchemy as sa

from airflow_provider_tronenergy.client import Order
from airflow_provider_tronenergy.errors import NotRetryable, Retryable, TronEnergyProviderError
from airflow_provider_tronenergy.purchase_journal import Entry

ON_AMBIGUOUS = ("fail", "rebuy", "ask")
RESOLVE_COMMAND = "tronenergy-purchases resolve"
# A purchase sent this recently may still be waiting for its answer in another worker.
IN_FLIGHT_SECONDS = 120


class PurchaseStopped(NotRetryable, RuntimeError):
    """A purchase that stops for good: a value refused, the service's refusal, an outcome
    a person must resolve; the message says what was (not) bought."""


class PurchaseRetry(Retryable, RuntimeError):
    """Nothing was bought by this attempt and a retry may buy: the journal or the service
    unreachable for now, or an ambiguous answer with ``on_ambiguous="rebuy"``."""


class UnknownOutcome(TronEnergyProviderError):
    """An attempt's outcome is unknown and ``on_ambiguous="ask"``: a person is to be asked."""

    def __init__(self, entry: Entry, cause: str = "") -> None:
        super().__init__(entry.identity)
        self.entry, self.cause = entry, cause


class EnergyGone(TronEnergyProviderError):
    """A placed, still-valid order whose energy the chain no longer shows: not reused."""

    def __init__(self, entry: Entry, energy: int, missing: int) -> None:
        super().__init__(entry.identity)
        self.entry, self.energy, self.missing = entry, energy, missing


EnergyCheck = Callable[[Entry, Order], int]
"""The energy of a reusable order (the journal's entry, the service's order) missing on chain."""


def order_energy(order: Order, entry: Entry) -> int:
    """An order's energy: the service's word, else what the journal recorded."""
    if order.energy_amount:
        return int(order.energy_amount)
    return int((entry.result or {}).get("energy_amount") or 0)


def utc(ts: float) -> str:
    """A journal time for people (UTC, seconds)."""
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


@contextmanager
def journal_errors() -> Iterator[None]:
    """A journal database failure before buying is retryable and buys nothing."""
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        raise PurchaseRetry(
            f"the purchase journal is unavailable ({type(exc).__name__}); nothing was bought "
            "by this attempt") from None


def unknown_outcome(entry: Entry) -> str:
    """Why an attempt stopped, and the two commands that let the next one go on."""
    age = time.time() - entry.sent_at
    in_flight = (f" It was sent {age:.0f} s ago and may still be in flight in another "
                 "worker: if `tronenergy-purchases show` soon says placed, just run again."
                 if age < IN_FLIGHT_SECONDS else "")
    return (
        f"Purchase {entry.identity} ({entry.description}) was sent at {utc(entry.sent_at)} "
        f"by {entry.scope} and its outcome is unknown: the service may or may not have "
        f"placed it.{in_flight} It is not placed again, in this run or any later run, until "
        "resolved. "
        f"Nothing was bought now. Look for an order for {entry.target_address} placed around "
        "that time in the service's console, then record what you found:\n"
        f"  {RESOLVE_COMMAND} '{entry.identity}' --order-id <ORDER_ID>\n"
        f"  {RESOLVE_COMMAND} '{entry.identity}' --not-placed")
