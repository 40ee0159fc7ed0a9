"""What waits for a person: purchases whose outcome is unknown, payouts that failed on chain.

Whatever the period, these are listed: each blocks its purchase or payout in every run
until someone decides. Each comes with what to do: the CLI command that records the
decision, and the task whose Required Action asks the same when its DAG asks
(``on_ambiguous="ask"``); the page links that task's Required Actions in the UI.
"""

from __future__ import annotations

import json
import shlex
from typing import Any, Final

import sqlalchemy as sa

from airflow_provider_tronenergy.payout.by_token import shown_amount
from airflow_provider_tronenergy.payout.journal import PayoutJournal, PayoutState
from airflow_provider_tronenergy.purchase_journal.store import EntryState, PurchaseJournal
from airflow_provider_tronenergy.ui.batches import task_of
from airflow_provider_tronenergy.ui.period import utc_text

LISTED: Final = 200
"""Rows listed of each kind (the count says how many wait in all)."""
IN_FLIGHT_MS: Final = 120_000
"""A purchase sent this recently may still be waiting for its answer in a worker
(``purchase.outcomes.IN_FLIGHT_SECONDS``)."""
PURCHASES_CLI: Final = "tronenergy-purchases resolve"
PAYOUTS_CLI: Final = "tronenergy-payouts resolve"


def waiting_purchases(journal: PurchaseJournal, now_ms: int) -> dict[str, Any]:
    """Purchase attempts whose outcome is unknown (``sending``), oldest first."""
    journal.ensure_schema()
    e = journal.entries.c
    sending = EntryState.SENDING.value
    with journal.engine.connect() as conn:
        count = int(conn.execute(sa.select(sa.func.count()).where(e.state == sending)).scalar()
                    or 0)
        rows = conn.execute(sa.select(
            e.identity, e.attempt, e.description, e.target_address, e.sent_at_ms, e.scope,
            e.note).where(e.state == sending).order_by(e.sent_at_ms, e.id).limit(LISTED)).all()
    listed = []
    for identity, attempt, description, target, sent_at_ms, scope, note in rows:
        quoted = shlex.quote(identity)
        listed.append({
            "identity": identity, "attempt": attempt, "description": description,
            "target_address": target, "sent_at": utc_text(sent_at_ms),
            "age_seconds": max(0, (now_ms - sent_at_ms) // 1000),
            "in_flight": now_ms - sent_at_ms < IN_FLIGHT_MS, "note": note,
            "task": task_of(scope),
            "commands": [f"{PURCHASES_CLI} {quoted} --order-id <ORDER_ID>",
                         f"{PURCHASES_CLI} {quoted} --not-placed"],
            "what": ("the service may or may not have placed it: find the order for "
                     f"{target} sent around {utc_text(sent_at_ms)} in the service's "
                     "console, then record it (or that there is none)"),
        })
    return {"count": count, "listed": listed}


def waiting_payouts(payouts: PayoutJournal) -> dict[str, Any]:
    """Payouts whose newest attempt failed on chain (``failed``), oldest first."""
    payouts.ensure_schema()
    a = payouts.attempts.c
    failed = PayoutState.FAILED.value
    with payouts.db.engine.connect() as conn:
        count = int(conn.execute(sa.select(sa.func.count()).where(a.state == failed)).scalar()
                    or 0)
        rows = conn.execute(sa.select(payouts.attempts).where(a.state == failed)
                            .order_by(a.updated_at_ms, a.id).limit(LISTED)).mappings().all()
    listed = []
    for row in rows:
        quoted = shlex.quote(row["identity"])
        receipt = _receipt(row["receipt"])
        listed.append({
            "identity": row["identity"], "attempt": row["attempt"],
            "batch_id": row["batch_id"], "recipient": row["recipient"],
            "token": row["token"], "units": row["units"],
            "amount": shown_amount(row["token"], row["units"]), "txid": row["txid"],
            "block": row["block_number"], "result": receipt.get("result"),
            "trx_burned": receipt.get("trx_burned"), "failed_at": utc_text(row["updated_at_ms"]),
            "task": task_of(row["claimed_by"]),
            "commands": [f'{PAYOUTS_CLI} {quoted} --resend --reason "..."',
                         f'{PAYOUTS_CLI} {quoted} --cancel --reason "..."'],
            "what": ("the transaction reached a block and failed "
                     f"({receipt.get('result') or 'see its receipt'}): pay it again with a "
                     "new transaction, or not at all"),
        })
    return {"count": count, "listed": listed}


def _receipt(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
