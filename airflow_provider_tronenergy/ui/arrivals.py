"""Deposits as the callback store saw them: callbacks stored per hour, redeliveries,
conflicts, and how far each consumer (a watcher, the deposit ledger) is behind the store.

A consumer's lag is what is stored after its offset: how many transfers (counted up to
:data:`COUNT_UP_TO`), and since when the oldest of them waits. The deposit ledger keeps
its offset in its own database; it is read there when one is given.
"""

from __future__ import annotations

from typing import Any, Final

import sqlalchemy as sa

from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.callbacks.store.schema import HOUR_MS
from airflow_provider_tronenergy.deposits import DepositLedger
from airflow_provider_tronenergy.ui.period import Period, utc_text

RECENT_CONFLICTS: Final = 20
OPEN_CLAIMS_SHOWN: Final = 20
COUNT_UP_TO: Final = 10_000
"""A consumer further behind is shown as "more than 10,000": counting a million rows to
say so exactly would cost the page a second; how long the oldest waits says the rest."""
LEDGER: Final = "deposit ledger (credited_deposits)"


def stored_per_hour(store: CallbackStore, period: Period) -> dict[str, Any]:
    """Transfers stored and redeliveries, per hour of ``period`` (every hour, in order,
    from ``first_hour``), from the store's hourly counts (``callbacks.store.hourly``: kept
    by the database itself, so a year is 8,760 rows, not a million)."""
    store.ensure_schema()
    counted = store.hourly.per_hour(period.start_ms, period.end_ms)
    hours = range(period.start_ms, period.end_ms, HOUR_MS)
    stored = [counted[h][0] if h in counted else 0 for h in hours]
    duplicates = [counted[h][1] if h in counted else 0 for h in hours]
    return {"first_hour": utc_text(period.start_ms), "stored_per_hour": stored,
            "duplicates_per_hour": duplicates, "stored": sum(stored),
            "duplicates": sum(duplicates)}


def conflicts(store: CallbackStore, period: Period) -> dict[str, Any]:
    """Conflicting callbacks kept in ``period``: how many, and the newest few."""
    store.ensure_schema()
    c = store.tables.conflicts.c
    in_period = sa.and_(c.received_at_ms >= period.start_ms, c.received_at_ms < period.end_ms)
    with store.engine.connect() as conn:
        count = int(conn.execute(sa.select(sa.func.count()).where(in_period)).scalar() or 0)
        rows = conn.execute(sa.select(c.tx_hash, c.fields, c.amount, c.token, c.to_address,
                                      c.received_at_ms).where(in_period)
                            .order_by(c.id.desc()).limit(RECENT_CONFLICTS)).all()
    return {"count": count, "recent": [
        {"tx_hash": tx, "fields": fields.split(","), "amount": amount, "token": token,
         "to": to, "at": utc_text(at)} for tx, fields, amount, token, to, at in rows]}


def consumer_lag(store: CallbackStore, ledger: DepositLedger | None,
                 now_ms: int) -> dict[str, Any]:
    """Each consumer's offset and what is stored after it (count, oldest waiting since)."""
    store.ensure_schema()
    o = store.tables.offsets.c
    with store.engine.connect() as conn:
        offsets = [(str(name), int(last), int(at)) for name, last, at in conn.execute(
            sa.select(o.consumer, o.last_id, o.updated_at_ms).order_by(o.consumer))]
    if ledger is not None:
        offsets.append((LEDGER, ledger.offset(), 0))
    newest = store.max_id()
    return {"newest_id": newest,
            "consumers": [_lag(store, name, last, at or None, now_ms)
                          for name, last, at in offsets]}


def _lag(store: CallbackStore, name: str, last_id: int, moved_ms: int | None,
         now_ms: int) -> dict[str, Any]:
    t = store.tables.transfers.c
    after = sa.select(t.id).where(t.id > last_id).limit(COUNT_UP_TO + 1).subquery()
    with store.engine.connect() as conn:
        behind = int(conn.execute(sa.select(sa.func.count()).select_from(after)).scalar()
                     or 0)
        oldest = conn.execute(sa.select(t.received_at_ms).where(t.id > last_id)
                              .order_by(t.id).limit(1)).scalar()
    return {"consumer": name, "offset": last_id, "behind": min(behind, COUNT_UP_TO),
            "behind_more": behind > COUNT_UP_TO,
            "oldest_waiting_since": utc_text(oldest),
            "lag_seconds": max(0, (now_ms - int(oldest)) // 1000) if oldest else 0,
            "offset_moved_at": utc_text(moved_ms)}


def deposit_claims(ledger: DepositLedger | None) -> dict[str, Any] | None:
    """Callbacks the chain has not proven: how many wait and how many are disputed, and the
    oldest open ones with the command that shows them (None without a ledger)."""
    if ledger is None:
        return None
    counts = ledger.claim_counts()
    shown = ledger.claims(limit=OPEN_CLAIMS_SHOWN)
    return {"counts": counts, "open": [
        {"tx_hash": c.tx_hash, "state": c.state, "reason": c.reason,
         "meaning": c.to_dict()["meaning"], "amount": c.said.amount, "token": c.said.token,
         "to": c.said.to_address, "last_tried": c.last_tried,
         "command": f"tronenergy-deposits show {c.tx_hash}"} for c in shown]}
