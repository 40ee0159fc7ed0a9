"""Before buying: what the purchase journal says an earlier attempt did, and what follows.

A retry, a cleared task, a new run of the same batch or a second worker asks the
journal first (shared by all workers, surviving restarts): an order placed and
still valid is reused, one that ended without delivering is bought anew, and an
attempt whose outcome nobody knows stops every later one until a person resolves
it: with ``tronenergy-purchases resolve``, or in Airflow when the operator asks
(``on_ambiguous="ask"``, :mod:`~airflow_provider_tronenergy.operators.ask`). With an
``energy_check`` (the batch purchase sets one when a node is configured), a placed
order is reused only while the chain still shows its energy: else :class:`EnergyGone`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, ClassVar

import sqlalchemy as sa
from airflow.providers.common.compat.sdk import AirflowException, AirflowFailException

from airflow_provider_tronenergy.client import (
    NotFoundError,
    Order,
    OrderStatus,
    TronEnergyClient,
    TronEnergyError,
)
from airflow_provider_tronenergy.errors import TronEnergyProviderError
from airflow_provider_tronenergy.journal import Entry, PurchaseJournal, Verdict, decide
from airflow_provider_tronenergy.money.quote import burn_cost, text

ON_AMBIGUOUS = ("fail", "rebuy", "ask")
RESOLVE_COMMAND = "tronenergy-purchases resolve"
# A purchase sent this recently may still be waiting for its answer in another worker.
IN_FLIGHT_SECONDS = 120


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


class JournalSteps:
    """The journal-reading half of a purchase (mixed into the purchase operator)."""

    mode: ClassVar[str]
    log: Any
    reuse_min_validity: float
    on_ambiguous: str
    energy_check: EnergyCheck | None = None

    def _decide(self, journal: PurchaseJournal, client: TronEnergyClient, identity: str,
                scope: str, request: dict[str, Any]) -> Entry | dict[str, Any] | None:
        """The newest attempt to buy after, or the reused result."""
        while True:
            with journal_errors():
                latest = journal.latest(identity)
            decision = decide(latest, scope=scope, now=time.time(),
                              min_validity=self.reuse_min_validity)
            entry = decision.entry
            if decision.verdict is Verdict.BUY:
                if entry is None or entry.scope != scope:
                    self._refuse_other_purchase_in_scope(journal, identity, scope)
                return entry
            assert entry is not None
            if decision.verdict is Verdict.UNKNOWN:
                if self.on_ambiguous == "ask":
                    raise UnknownOutcome(entry)
                if self.on_ambiguous != "rebuy":
                    raise AirflowFailException(unknown_outcome(entry))
                self.log.warning("purchase %s sent at %s has an unknown outcome; "
                                 "on_ambiguous='rebuy': buying again", identity,
                                 utc(entry.sent_at))
                with journal_errors():
                    journal.abandon(entry, "on_ambiguous='rebuy'")
                continue
            if entry.request != request:
                raise AirflowFailException(
                    f"purchase {identity} already placed order {entry.order_id} for different "
                    f"parameters ({entry.request}); refusing to reuse it for {request} or to "
                    "buy twice under one purchase_key. Use a new key for a new purchase.")
            reused = self._reuse(journal, client, entry, scope)
            if reused is not None:
                return reused

    def _refuse_other_purchase_in_scope(self, journal: PurchaseJournal, identity: str,
                                        scope: str) -> None:
        """A retry whose parameters changed must not buy a second, different purchase."""
        with journal_errors():
            active = journal.active_in_scope(scope)
        for other in active:
            if other.identity != identity:
                raise AirflowFailException(
                    f"an earlier try of this task instance sent a different purchase "
                    f"({other.description}, {other.state.value}, journal identity "
                    f"{other.identity}); refusing to buy another in the same task instance. "
                    "Use a new run.")

    def _reuse(self, journal: PurchaseJournal, client: TronEnergyClient, entry: Entry,
               scope: str) -> dict[str, Any] | None:
        """The earlier order's result, or None when it turned out to buy nothing."""
        assert entry.order_id is not None
        try:
            order = client.get_order(entry.order_id)
        except NotFoundError:
            raise AirflowFailException(
                f"purchase {entry.identity} is recorded as order {entry.order_id}, which the "
                "service does not know. Nothing was bought now. If that order id was entered "
                "by hand, check it in the service's console.") from None
        except TronEnergyError as exc:
            raise AirflowException(f"cannot look up order {entry.order_id}: {exc}") from None
        if order.status in (OrderStatus.FAILED, OrderStatus.CANCELLED):
            self.log.info("order %s of purchase %s ended %s: it bought nothing; buying anew",
                          entry.order_id, entry.identity, order.status.value)
            with journal_errors():
                journal.mark_ended(entry, order.status.value)
            return None
        if self.energy_check is not None:
            missing = self.energy_check(entry, order)
            if missing:
                raise EnergyGone(entry, order_energy(order, entry), missing)
        if entry.claimed_by is None:
            with journal_errors():
                claimed = journal.claim_reuse(entry, scope)
            if not claimed:
                return None  # another run took it first: decide again
        self.log.info("order %s (purchase %s, sent %s) is reused: nothing more is bought",
                      entry.order_id, entry.identity, utc(entry.sent_at))
        base = entry.result or self._result_of_order(order, entry)
        return {**base, "status": order.status.value, "tx_hash": order.tx_hash or "",
                "purchase_key": entry.identity, "reused": True}

    def _result_of_order(self, order: Order, entry: Entry) -> dict[str, Any]:
        energy = order.energy_amount
        cost = order.cost if order.cost is not None else Decimal(0)
        return {"mode": self.mode, "order_id": order.order_id,
                "target_address": order.target_address or entry.target_address,
                "energy_amount": energy, "rent_time": entry.request.get("rent_time"),
                "cost": text(cost), "burn_cost": text(burn_cost(energy)) if energy else None,
                "saving": text(burn_cost(energy) - cost) if energy else None,
                "quote": None, "dry_run": False}


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
        raise AirflowException(
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
