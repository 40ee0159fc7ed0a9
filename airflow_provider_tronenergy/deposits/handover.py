"""What a consumer of stored callbacks hands on: one rule for sensor, trigger and watcher.

:class:`~airflow_provider_tronenergy.sensors.transfer.TronEnergyTransferSensor` (poke by
poke), its trigger (in the triggerer's loop) and the Asset watcher's trigger all read
the callback store and decide with :class:`Handover`, so they agree on what each stored
callback means:

* ``proven=False``: a callback that matches the filter is handed on at once, as the
  callback said it (``"proven": false``: the webhook secret's word);
* ``proven=True``: a callback is handed on only once the deposit ledger credited its
  transaction into its address (the chain proved it: :mod:`.proof` through a sweep, or
  the chain scan), with the **chain's** figures (amount, sender, block, log index,
  ``"proven": true``), the filter applied to them, not to the callback's; a callback
  whose claim is disputed or dismissed is never handed on, nor one the ledger's sweeps
  have read past without a credit or a claim (a callback into no deposit address); any
  other waits (its block is not solid yet, no sweep has read it yet). The ledger is only
  read here: the ``deposit_credit`` DAG's sweeps (or the scan) write it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

import sqlalchemy as sa

from airflow_provider_tronenergy.callbacks.events import StoredTransfer, threshold_micro
from airflow_provider_tronenergy.deposits.claims import DISMISSED
from airflow_provider_tronenergy.deposits.proof import DISPUTED, WAITING
from airflow_provider_tronenergy.deposits.schema import (
    CLAIMS,
    CONSUMER,
    CREDITED,
    LOCATION,
    OFFSETS,
)

if TYPE_CHECKING:
    from airflow_provider_tronenergy.deposits.ledger import DepositLedger

HAND: Final = "hand"
WAIT: Final = "wait"
SKIP: Final = "skip"
REFUSED: Final = (DISPUTED, DISMISSED)
"""Claim states whose callback is never handed on with ``proven=True``."""
STREAM_BATCH: Final = 500
"""Stored transfers a consumer reads from the callback store at a time (a sensor's poke, a
trigger's or the watcher's read)."""


@dataclass(frozen=True)
class TransferFilter:
    """Which transfers a consumer wants; matched against the callback's figures
    (:meth:`matches`) or, with ``proven``, the chain's (:meth:`matches_chain`)."""

    addresses: frozenset[str] | None = None
    token: str | None = None
    min_micro: int | None = None
    from_address: str | None = None

    @classmethod
    def of(cls, addresses: Sequence[str] | str | None, token: str | None,
           min_amount: Decimal | str | None, from_address: str | None) -> TransferFilter:
        if isinstance(addresses, str):
            addresses = [addresses]
        return cls(
            addresses=frozenset(addresses) if addresses else None,
            token=token.upper() if token else None,
            min_micro=None if min_amount in (None, "") else threshold_micro(min_amount),
            from_address=from_address or None,
        )

    def matches(self, transfer: StoredTransfer) -> bool:
        return (self.candidate(transfer)
                and (self.min_micro is None or transfer.amount_micro >= self.min_micro)
                and (self.from_address is None or transfer.from_address == self.from_address))

    def candidate(self, transfer: StoredTransfer) -> bool:
        """Recipient and token only: what a callback's word may decide before the proof."""
        return ((self.addresses is None or transfer.to_address in self.addresses)
                and (self.token is None or transfer.token == self.token))

    def matches_chain(self, credit: dict[str, Any]) -> bool:
        """A ledger row (the chain's figures) against the filter."""
        return ((self.addresses is None or credit["to_address"] in self.addresses)
                and (self.token is None or credit["token"] == self.token)
                and (self.min_micro is None or int(credit["units"]) >= self.min_micro)
                and (self.from_address is None or credit["from_address"] == self.from_address))


@functools.lru_cache(maxsize=8)
def _ledger_for(url: str) -> DepositLedger:
    from airflow_provider_tronenergy.deposits.ledger import DepositLedger

    return DepositLedger(url)


def open_ledger() -> DepositLedger:
    """The workers' ledger (``$TRONENERGY_DEPOSITS_DB``, ``[tronenergy] deposits_ledger``),
    one per process: trigger kwargs never name it (a URL may hold a password)."""
    return _ledger_for(LOCATION.url(None))


def forget_ledgers() -> None:
    """Drop the per-process ledgers (tests)."""
    _ledger_for.cache_clear()


def chain_payload(t: StoredTransfer, credit: dict[str, Any]) -> dict[str, Any]:
    """A proven transfer: the callback's store id and arrival, every figure the chain's."""
    return {"id": t.id, "tx_hash": credit["tx_hash"], "log_index": int(credit["log_index"]),
            "from": credit["from_address"], "to": credit["to_address"],
            "amount": credit["amount"], "token": credit["token"],
            "contract": credit["contract"], "block_number": int(credit["block_number"]),
            "block_timestamp_ms": (None if credit["block_timestamp_ms"] is None
                                   else int(credit["block_timestamp_ms"])),
            "received_at": t.received_at.isoformat(), "source": credit["source"],
            "proven": True}


class Handover:
    """``Handover(filter, proven=...).judge(transfers)``: hand on, wait, or skip each."""

    def __init__(self, flt: TransferFilter, *, proven: bool) -> None:
        self.filter = flt
        self.proven = proven

    def candidate(self, transfer: StoredTransfer) -> bool:
        """Worth judging at all (the rest is passed at once)."""
        return self.filter.candidate(transfer) if self.proven else self.filter.matches(transfer)

    def judge(self, transfers: Sequence[StoredTransfer]
              ) -> list[tuple[StoredTransfer, str, dict[str, Any] | None]]:
        """Each transfer with its decision (``hand``, ``wait``, ``skip``) and, for ``hand``,
        its payload; one ledger read for the lot when ``proven``."""
        if not self.proven:
            return [(t, HAND, t.to_payload()) if self.filter.matches(t) else (t, SKIP, None)
                    for t in transfers]
        wanted = [t for t in transfers if self.filter.candidate(t)]
        credits, states, swept = self._standing(sorted({t.tx_hash for t in wanted}))
        decided: list[tuple[StoredTransfer, str, dict[str, Any] | None]] = []
        for t in transfers:
            if not self.filter.candidate(t) or states.get(t.tx_hash) in REFUSED:
                decided.append((t, SKIP, None))
                continue
            rows = [c for c in credits.get(t.tx_hash, ())  # the callback's token's only: a
                    if c["to_address"] == t.to_address  # scanned TRC-20 in the same
                    and c["token"] == t.token]  # transaction is not what it said
            if not rows:  # not proven yet, or (read past, no claim) into no deposit address
                passed = t.id <= swept and states.get(t.tx_hash) != WAITING
                decided.append((t, SKIP if passed else WAIT, None))
                continue
            match = next((c for c in rows if self.filter.matches_chain(c)), None)
            decided.append((t, SKIP, None) if match is None
                           else (t, HAND, chain_payload(t, match)))
        return decided

    def first(self, transfers: Sequence[StoredTransfer]) -> tuple[dict[str, Any] | None, int]:
        """The first transfer handed on (or None), and how many lead ones are decided for
        good (skipped): a poll may start after them next time."""
        settled = 0
        still_leading = True
        for _, decision, payload in self.judge(transfers):
            if decision == HAND:
                return payload, settled
            if decision == WAIT:
                still_leading = False
            elif still_leading:
                settled += 1
        return None, settled

    @staticmethod
    def _standing(tx_hashes: list[str]
                  ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str], int]:
        """Credits and claim states of these transactions, and how far sweeps have read."""
        if not tx_hashes:
            return {}, {}, 0
        ledger = open_ledger()
        credits: dict[str, list[dict[str, Any]]] = {}
        with ledger.engine.connect() as conn:
            for row in conn.execute(sa.select(CREDITED).where(
                    CREDITED.c.tx_hash.in_(tx_hashes))
                    .order_by(CREDITED.c.tx_hash, CREDITED.c.log_index)).mappings():
                credits.setdefault(row["tx_hash"], []).append(dict(row))
            states = {tx: state for tx, state in conn.execute(
                sa.select(CLAIMS.c.tx_hash, CLAIMS.c.state).where(
                    CLAIMS.c.tx_hash.in_(tx_hashes)))}
            swept = conn.execute(sa.select(OFFSETS.c.last_id).where(
                OFFSETS.c.consumer == CONSUMER)).scalar()
        return credits, states, int(swept or 0)


class HeldStream:
    """A stream of stored transfers in id order (the watcher), with ``proven`` callbacks
    held until decided: each batch gives the payloads to hand on now and the offset that
    may be committed (never past a held callback, so a restart reads it again)."""

    def __init__(self, handover: Handover, start: int) -> None:
        self.handover = handover
        self.held: dict[int, StoredTransfer] = {}
        self.cursor = start

    def take(self, batch: Sequence[StoredTransfer]
             ) -> list[tuple[dict[str, Any] | None, int]]:
        """``(payload or None, safe offset)`` per decided transfer, in the order decided."""
        for t in batch:
            self.cursor = max(self.cursor, t.id)
        todo = [*self.held.values(), *batch]
        out: list[tuple[dict[str, Any] | None, int]] = []
        decided = self.handover.judge(todo)
        for t, decision, _ in decided:
            if decision == WAIT:
                self.held[t.id] = t
            else:
                self.held.pop(t.id, None)
        for t, decision, payload in decided:
            if decision != WAIT:
                out.append((payload, self.safe(t.id)))
        return out

    def safe(self, upto: int) -> int:
        """The highest offset that passes no held callback."""
        low = min(self.held, default=None)
        return upto if low is None else min(upto, low - 1)
