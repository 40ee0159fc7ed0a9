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
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Final, Protocol

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
"""Waiting claims tried again per sweep (oldest first)."""


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

    def __init__(self, ledger: Ledger, prover: Prover, credited_by: str | None) -> None:
        self.ledger, self.prover, self.credited_by = ledger, prover, credited_by

    def run(self, addresses: Iterable[str], start: int | None,
            store: CallbackStore | None) -> list[ChainTransfer]:
        """Retry the waiting claims, then read the store from ``start`` (None: the ledger's
        offset, which then moves); the transfers credited, in order."""
        from airflow_provider_tronenergy.callbacks.access import open_store

        wanted = frozenset(addresses)
        if not wanted:  # no deposit addresses: read nothing, so the offset passes nothing
            return []
        credited = self.retry(wanted)
        store = store if store is not None else open_store(None)
        after = self.ledger.offset() if start is None else start
        upto = store.max_id()
        passed = 0
        while after < upto:
            page = [t for t in store.list_transfers(after_id=after, limit=SWEEP_PAGE)
                    if t.id <= upto]
            after = page[-1].id if len(page) == SWEEP_PAGE else upto
            deposits = [Said.of(t) for t in page if t.to_address in wanted]
            passed += len(page) - len(deposits)
            if start is not None:  # an earlier stretch: what has a claim was judged already
                with self.ledger.engine.connect() as conn:
                    seen = claims.known(conn, [s.tx_hash for s in deposits])
                deposits = [s for s in deposits if s.tx_hash not in seen]
            credited += self.write(self._prove(deposits, wanted),
                                    after if start is None else None)
        if passed:
            log.info("%d stored transfers up to id %d are into no deposit address: not "
                     "credited", passed, upto)
        return credited

    def retry(self, wanted: frozenset[str]) -> list[ChainTransfer]:
        """Prove the waiting claims again; credit those the chain now proves."""
        with self.ledger.engine.connect() as conn:
            pending = claims.waiting(conn, RETRY_LIMIT)
        if not pending:
            return []
        return self.write(self._prove(pending, wanted), None)

    def _prove(self, said: Sequence[Said], wanted: frozenset[str]) -> list[tuple[Said, Verdict]]:
        return [(s, self.prover.prove(s, wanted)) for s in said]

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
