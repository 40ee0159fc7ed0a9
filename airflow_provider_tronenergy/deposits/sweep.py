"""A sweep of the callback store: each callback into a deposit address proven, then credited.

The store is read from the ledger's one offset, page by page (as before proofs: the
offset is a position in the store, judged once per transfer, so it passes callbacks
into other addresses too). Each callback of a page is proven on chain
(:class:`~.proof.Prover`) outside any database transaction; then the page's credits
(the chain's transfers, through :meth:`~.ledger.DepositLedger.insert_credits`), its
claims (callbacks waiting or disputed, :mod:`.claims`) and the offset's advance commit
in one transaction. The offset moves past a waiting callback: the claims table
remembers it, and every sweep first tries the waiting claims again, so a callback seen
before its block was solid is credited by the first sweep after it is.

A sweep spends at most :attr:`ProofBudget.max_requests` node requests, proving
``concurrency`` callbacks at once (``fanout.run_batch``). Waiting claims get at most half
of it, least recently tried first; the store's new callbacks the rest, oldest first.
What the budget does not reach is carried to the next sweep: the offset stops before the
first callback not proven, so a flood of forged callbacks makes no sweep unbounded, and
real ones behind it are reached within a few sweeps, never lost.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Final, Protocol

from airflow_provider_tronenergy import fanout
from airflow_provider_tronenergy.deposits import claims
from airflow_provider_tronenergy.deposits.proof import (
    DISPUTED,
    PROVEN,
    WAITING,
    Prover,
    Said,
    Verdict,
)

if TYPE_CHECKING:
    from airflow_provider_tronenergy.callbacks.store import CallbackStore
    from airflow_provider_tronenergy.node.transfers import ChainTransfer

log = logging.getLogger(__name__)
SWEEP_PAGE: Final = 1000
"""Stored transfers read, and credited in one transaction, per page of a sweep."""
RETRY_LIMIT: Final = 1000
"""Waiting claims tried again per sweep at most (least recently tried first)."""
MAX_PER_PROOF: Final = 3
"""Node requests one proof may send: the receipt, then the transaction (TRX), the unsolid
receipt or the head (:meth:`~.proof.Prover.prove`)."""


@dataclass(frozen=True)
class ProofBudget:
    """How much one sweep may ask the node.

    :param max_requests: node requests per sweep, at most (a proof sends 1 to 3).
    :param concurrency: proofs in flight at once.
    """

    max_requests: int = 3000
    concurrency: int = 8

    def __post_init__(self) -> None:
        for name, low in (("max_requests", MAX_PER_PROOF), ("concurrency", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be a whole number of at least {low}")


class _Counted:
    """The prover's node, each request counted (from any of the sweep's threads)."""

    CALLS: Final = frozenset({"get_transfer_receipt", "get_transaction_info", "get_now_block",
                              "get_trx_transfer"})

    def __init__(self, node: Any) -> None:
        self._node = node
        self._lock = threading.Lock()
        self.used = 0

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._node, name)
        if name not in self.CALLS:
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                self.used += 1
            return found(*args, **kwargs)
        return counted


class Ledger(Protocol):
    """What a sweep needs of :class:`~.ledger.DepositLedger` (which holds the sweep)."""

    @property
    def db(self) -> Any: ...

    @property
    def engine(self) -> Any: ...

    def offset(self) -> int: ...

    def insert_credits(self, conn: Any, transfers: Sequence[ChainTransfer], *, token: str,
                       source: str, credited_by: str | None) -> list[ChainTransfer]: ...

    def move_offset(self, conn: Any, offset: int) -> None: ...


class Sweep:
    """One ``credit_from_store`` (or ``credit_earlier``) call."""

    def __init__(self, ledger: Ledger, prover: Prover, credited_by: str | None,
                 budget: ProofBudget | None = None) -> None:
        self.ledger, self.credited_by = ledger, credited_by
        self.budget = budget or ProofBudget()
        self.node = _Counted(getattr(prover, "node", None))
        # A prover without a node of its own (a test's) is counted at its worst.
        self.prover = prover.with_node(self.node) if hasattr(prover, "with_node") else prover
        self._unread = 0 if hasattr(prover, "with_node") else MAX_PER_PROOF

    @property
    def used(self) -> int:
        """Node requests this sweep has sent."""
        return self.node.used

    def _affordable(self, limit: int) -> int:
        """Proofs that may start now without passing ``limit`` requests in all."""
        return max(0, limit - self.used) // MAX_PER_PROOF

    def run(self, addresses: Iterable[str], start: int | None,
            store: CallbackStore | None) -> list[ChainTransfer]:
        """Retry the waiting claims, then read the store from ``start`` (None: the ledger's
        offset, which then moves); the transfers credited, in order."""
        from airflow_provider_tronenergy.callbacks.access import open_store

        wanted = frozenset(addresses)
        if not wanted:  # no deposit addresses: read nothing, so the offset passes nothing
            return []
        credited = self.retry(wanted, self.budget.max_requests // 2)
        store = store if store is not None else open_store(None)
        after = self.ledger.offset() if start is None else start
        upto = store.max_id()
        passed = 0
        while after < upto:
            page = [t for t in store.list_transfers(after_id=after, limit=SWEEP_PAGE)
                    if t.id <= upto]
            end = page[-1].id if len(page) == SWEEP_PAGE else upto
            deposits = [Said.of(t) for t in page if t.to_address in wanted]
            passed += len(page) - len(deposits)
            if start is not None:  # an earlier stretch: what has a claim was judged already
                with self.ledger.engine.connect() as conn:
                    seen = claims.known(conn, [s.tx_hash for s in deposits])
                deposits = [s for s in deposits if s.tx_hash not in seen]
            if start is None and not deposits:
                self.write([], end)
            while deposits:
                chunk = deposits[:self._affordable(self.budget.max_requests)]
                if not chunk:
                    break
                deposits = deposits[len(chunk):]
                # the offset stops before the first callback not proven yet
                reached = deposits[0].store_id - 1 if deposits else end
                credited += self.write(self._prove(chunk, wanted),
                                       reached if start is None else None)
            if deposits:
                log.warning("proof budget spent (%d node requests): %d or more callbacks "
                            "from store id %d are carried to the next sweep", self.used,
                            len(deposits), deposits[0].store_id)
                break
            after = end
        if passed:
            log.info("%d stored transfers up to id %d are into no deposit address: not "
                     "credited", passed, after)
        return credited

    def retry(self, wanted: frozenset[str], limit: int | None = None) -> list[ChainTransfer]:
        """Prove the waiting claims again (least recently tried first, within ``limit``
        node requests); credit those the chain now proves."""
        room = self._affordable(self.budget.max_requests if limit is None else limit)
        with self.ledger.engine.connect() as conn:
            pending = claims.waiting(conn, min(RETRY_LIMIT, room))
        if not pending:
            return []
        return self.write(self._prove(pending, wanted), None)

    def _prove(self, said: Sequence[Said], wanted: frozenset[str]) -> list[tuple[Said, Verdict]]:
        """Each proof, ``concurrency`` at once; in order."""
        self.node.used += self._unread * len(said)
        results, failures = fanout.run_batch(
            [str(i) for i in range(len(said))],
            lambda i: {"verdict": self.prover.prove(said[int(i)], wanted)},
            max_concurrency=self.budget.concurrency, log=log, verb="callbacks proven")
        if failures:  # prove() turns node failures into waiting: anything else is a bug
            raise RuntimeError(f"proving callback {said[failures[0].index].tx_hash} failed: "
                               f"{failures[0].reason}")
        return [(s, r["verdict"]) for s, r in zip(said, results, strict=True)]

    def write(self, verdicts: Sequence[tuple[Said, Verdict]],
               offset: int | None) -> list[ChainTransfer]:
        """Credits, claims and the offset's advance in one transaction."""
        if not verdicts and offset is None:
            return []
        now = datetime.now(timezone.utc).isoformat()
        credited: list[ChainTransfer] = []
        with self.ledger.db.write() as conn:
            for said, verdict in verdicts:
                if verdict.state == PROVEN and verdict.transfers:
                    credited += self.ledger.insert_credits(
                        conn, verdict.transfers, token=verdict.token, source="callback",
                        credited_by=self.credited_by)
                claims.record(conn, self.ledger.db.insert, said, verdict, now)
                _log(said, verdict)
            if offset is not None:
                self.ledger.move_offset(conn, offset)
        return credited


def _log(said: Said, verdict: Verdict) -> None:
    what = f"{said.amount} {said.token} to {said.to_address} (tx {said.tx_hash})"
    if verdict.state == DISPUTED:
        log.warning("callback DISPUTED, not credited: %s: %s%s", what, verdict.meaning,
                    f" ({verdict.detail})" if verdict.detail else "")
    elif verdict.state == WAITING:
        log.info("callback waits for the chain: %s: %s", what, verdict.meaning)
