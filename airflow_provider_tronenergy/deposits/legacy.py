"""Rows credited before proofs (schema version 2, ``legacy``) proven against the chain.

A legacy row credited a transaction into an address on the callback's word, keyed by the
transaction alone (``log_index`` -1, the callback's amount). :func:`prove_legacy` reads
the chain for it as a sweep reads a callback (:class:`~.proof.Prover`, the row as what
was said) and, in one transaction per row:

* **proven**: the legacy row is replaced by the chain's credits, each keyed by
  ``(tx_hash, log_index)``, the chain's figures (a transaction that paid the address
  several times is several credits); deleted and inserted together, and only if the
  legacy row is still there, so two people (or two runs) converting it credit once;
* **disputed**: the row stays (the money was credited; taking it back is a person's
  decision) and a claim is kept with the reason and the chain's view, for ``list``,
  ``show`` and ``dismiss``;
* **waiting** (the node did not answer, the block is not solid): nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import sqlalchemy as sa

from airflow_provider_tronenergy.deposits import claims
from airflow_provider_tronenergy.deposits.proof import DISPUTED, PROVEN, Said, Verdict
from airflow_provider_tronenergy.deposits.schema import CREDITED, LEGACY_INDEX

if TYPE_CHECKING:
    from airflow_provider_tronenergy.deposits.ledger import Credit, DepositLedger
    from airflow_provider_tronenergy.deposits.proof import Prover
    from airflow_provider_tronenergy.node.transfers import ChainTransfer


@dataclass(frozen=True)
class LegacyOutcome:
    """One legacy row proven: the row, the chain's verdict, the credits that replaced it."""

    row: Credit
    verdict: Verdict
    credited: tuple[ChainTransfer, ...]
    converted: bool
    """True when this call replaced the row (False: waiting, disputed, or done already)."""


def said_of(row: Credit) -> Said:
    """What a legacy row claims, as a callback would have said it (long arrived: a
    transaction the node does not know is disputed, not waited for)."""
    return Said(tx_hash=row.tx_hash, to_address=row.to_address, amount=row.amount,
                token=row.token.upper(), received_at_ms=0, from_address=row.from_address,
                block_number=row.block_number)


def legacy_rows(ledger: DepositLedger, tx_hash: str | None, limit: int) -> list[Credit]:
    return ledger.credits(tx_hash=tx_hash, limit=limit, legacy=True)


def prove_legacy(ledger: DepositLedger, prover: Prover, *, tx_hash: str | None = None,
                 addresses: frozenset[str] = frozenset(), limit: int = 100,
                 credited_by: str | None = None) -> list[LegacyOutcome]:
    """Prove legacy rows (one transaction's, or up to ``limit``) and act on each verdict."""
    outcomes = []
    for row in legacy_rows(ledger, tx_hash, limit):
        said = said_of(row)
        verdict = prover.prove(said, addresses | {row.to_address})
        outcomes.append(_apply(ledger, row, said, verdict, credited_by))
    return outcomes


def _apply(ledger: DepositLedger, row: Credit, said: Said, verdict: Verdict,
           credited_by: str | None) -> LegacyOutcome:
    now = datetime.now(timezone.utc).isoformat()
    if verdict.state not in (PROVEN, DISPUTED):
        return LegacyOutcome(row, verdict, (), False)
    with ledger.db.write() as conn:
        if verdict.state == DISPUTED:
            claims.record(conn, ledger.db.insert, said, verdict, now)
            return LegacyOutcome(row, verdict, (), False)
        gone = conn.execute(CREDITED.delete().where(
            CREDITED.c.tx_hash == row.tx_hash, CREDITED.c.log_index == LEGACY_INDEX,
            CREDITED.c.to_address == row.to_address))
        if not gone.rowcount:  # converted meanwhile (another person, another run)
            return LegacyOutcome(row, verdict, (), False)
        credited = ledger.insert_credits(conn, verdict.transfers, token=verdict.token,
                                         source="callback", credited_by=credited_by)
        claims.record(conn, ledger.db.insert, said, verdict, now)  # closes a dispute
    return LegacyOutcome(row, verdict, tuple(credited), True)


def count(ledger: DepositLedger) -> int:
    """Legacy rows left."""
    with ledger.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(CREDITED).where(
            CREDITED.c.log_index == LEGACY_INDEX)).scalar() or 0)
