"""Per payout batch: what it rented and paid, what it saved, who approved it, its DAG run.

The ``payout batch ready`` events are the source here: only they hold who approved a
batch and which run prepared it (Airflow's database keeps them; the page's app reads
them, :mod:`.events`). What the chain then charged the batch's payouts comes from the
payout journal (their receipts, by ``batch_id``), and the run that sent them from its
claims. Activations too are counted from the events: a batch activates its recipients
with the activate operator, which keeps no journal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Final

import sqlalchemy as sa

from airflow_provider_tronenergy.money.burn import DEFAULT_PRICES, MAX_PRICE_SUN, SUN
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.payout.attempts import PayoutState
from airflow_provider_tronenergy.payout.journal import RECEIPT_COLUMNS, PayoutJournal
from airflow_provider_tronenergy.payout.receipts import CONFIRMED_ON, confirmation
from airflow_provider_tronenergy.ui.period import Period, utc_text
from airflow_provider_tronenergy.ui.purchases import Day

BATCH_ROWS: Final = 100
"""Batches listed, newest first; the totals count every batch of the period."""
APPROVAL: Final = ("required", "approved", "by", "at", "timed_out")
FIELDS: Final = ("batch_id", "sender", "recipients", "energy_bought", "energy_cost",
                 "activations", "activation_cost", "activation_sun", "total_cost",
                 "burn_cost_bought", "saving", "approval")
"""The values of an event's extra the page reads (``recipients``: how many;
``activation_sun``: its ``prices``')."""


@dataclass(frozen=True)
class BatchEvent:
    """One ``payout batch ready`` event: the figures the page shows, when, which run.

    Made from an event's whole extra (:meth:`of`), or from the few values the app has
    the metadata database extract (:meth:`read`, :mod:`.events`: a big batch's extra
    lists every recipient, too much to load for a year of events).
    """

    at_ms: int
    batch_id: str | None = None
    sender: str | None = None
    recipients: int | None = None
    energy: int = 0
    energy_trx: str = "0"
    activations: int = 0
    activation_trx: str = "0"
    activation_sun: int | None = None
    """Burning one activation's worth, at the prices the batch was planned with."""
    total_trx: str = "0"
    burn_trx: str = "0"
    saving_trx: str = "0"
    approval: Mapping[str, Any] = field(default_factory=dict)
    dag_id: str | None = None
    run_id: str | None = None

    @classmethod
    def of(cls, extra: Mapping[str, Any], at_ms: int, dag_id: str | None = None,
           run_id: str | None = None) -> BatchEvent:
        """From the event's extra as ``payout.ready.batch_ready`` wrote it."""
        recipients, prices = extra.get("recipients"), extra.get("prices")
        values = {name: extra.get(name) for name in FIELDS}
        values["recipients"] = len(recipients) if isinstance(recipients, list) else None
        values["activation_sun"] = (prices.get("activation_sun")
                                    if isinstance(prices, Mapping) else None)
        return cls.read(at_ms, dag_id, run_id, values)

    @classmethod
    def read(cls, at_ms: int, dag_id: str | None, run_id: str | None,
             values: Mapping[str, Any]) -> BatchEvent:
        """From :data:`FIELDS` by name (any may be missing or malformed: then none)."""
        approval = values.get("approval")
        return cls(
            at_ms=at_ms, dag_id=dag_id, run_id=run_id,
            batch_id=_text(values.get("batch_id")), sender=_text(values.get("sender")),
            recipients=_count(values.get("recipients")),
            energy=_count(values.get("energy_bought")) or 0,
            energy_trx=_trx(values.get("energy_cost")),
            activations=_count(values.get("activations")) or 0,
            activation_trx=_trx(values.get("activation_cost")),
            activation_sun=_count(values.get("activation_sun")),
            total_trx=_trx(values.get("total_cost")),
            burn_trx=_trx(values.get("burn_cost_bought")),
            saving_trx=_trx(values.get("saving")),
            approval=({key: approval.get(key) for key in APPROVAL}
                      if isinstance(approval, Mapping) else {}))


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _count(value: Any) -> int | None:
    if value is None or isinstance(value, (bool, float)):
        return None
    try:
        count = int(str(value))
    except ValueError:
        return None
    return count if count >= 0 else None


def _trx(value: Any) -> str:
    """TRX as exact decimal text; a malformed or missing figure is 0 (never a float)."""
    if value in (None, "") or isinstance(value, (bool, float)):
        return "0"
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return "0"
    return text(amount) if amount.is_finite() else "0"


def add_activations(days: list[Day], events: Sequence[BatchEvent], period: Period) -> None:
    """Add each batch's activations to the day its event was published."""
    for event in events:
        index = period.day_index(event.at_ms)
        paid = Decimal(event.activation_trx)
        if (event.activations or paid) and 0 <= index < len(days):
            price = event.activation_sun
            if price is None or price > MAX_PRICE_SUN:
                price = DEFAULT_PRICES.activation_sun
            days[index].add_activations(event.activations, paid,
                                        event.activations * price * SUN)


def batch_rows(events: Sequence[BatchEvent], payouts: PayoutJournal,
               limit: int = BATCH_ROWS) -> dict[str, Any]:
    """The newest ``limit`` batches, each with its figures and what the chain charged."""
    newest = sorted(events, key=lambda e: e.at_ms, reverse=True)[:limit]
    measured = _measured(payouts, [e.batch_id for e in newest if e.batch_id])
    rows = [_row(event, measured.get(event.batch_id or "")) for event in newest]
    return {"batches": rows, "count": len(events), "listed": len(rows)}


def _row(event: BatchEvent, measured: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "batch_id": event.batch_id, "at": utc_text(event.at_ms), "sender": event.sender,
        "recipients": event.recipients, "energy": event.energy,
        "energy_trx": event.energy_trx, "activations": event.activations,
        "activation_trx": event.activation_trx, "total_trx": event.total_trx,
        "burn_trx": event.burn_trx, "saving_trx": event.saving_trx,
        "approval": {"required": bool(event.approval.get("required")),
                     **{key: event.approval.get(key) for key in APPROVAL[1:]}},
        "dag_id": event.dag_id, "run_id": event.run_id, "sent": measured,
    }


def _measured(payouts: PayoutJournal, batch_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per batch id: its payouts' newest states, their receipts' sums (every transaction
    that reached a block, failed or not), which blocks those receipts were confirmed on
    (``confirmation``: :func:`~..payout.receipts.confirmation`), and the run that sent
    them."""
    if not batch_ids:
        return {}
    payouts.ensure_schema()
    table = payouts.attempts
    a = table.c
    wanted = a.batch_id.in_(sorted(set(batch_ids)))
    newest = sa.select(a.batch_id, a.identity, sa.func.max(a.attempt).label("attempt")).where(
        wanted).group_by(a.batch_id, a.identity).subquery()
    states = sa.select(a.batch_id, a.state, sa.func.count()).join(newest, sa.and_(
        a.batch_id == newest.c.batch_id, a.identity == newest.c.identity,
        a.attempt == newest.c.attempt)).group_by(a.batch_id, a.state)
    failed = sa.case((sa.and_(a.energy_total.is_not(None),
                              a.state != PayoutState.CONFIRMED.value), 1), else_=0)
    sums = sa.select(a.batch_id, sa.func.count(a.energy_total), sa.func.sum(failed),
                     sa.func.max(a.claimed_by),
                     *(sa.func.sum(a[name]) for name in RECEIPT_COLUMNS)).where(
        wanted).group_by(a.batch_id)
    confirmed = sa.select(a.batch_id, a[CONFIRMED_ON], sa.func.count()).where(
        wanted, a.receipt.is_not(None)).group_by(a.batch_id, a[CONFIRMED_ON])
    measured: dict[str, dict[str, Any]] = {}
    with payouts.db.engine.connect() as conn:
        for batch_id, state, count in conn.execute(states):
            row = measured.setdefault(batch_id, {"payouts": 0, "states": {}})
            row["payouts"] += int(count)
            row["states"][state] = int(count)
        for batch_id, judged, failures, claimed_by, *figures in conn.execute(sums):
            chain = {name: int(value or 0) for name, value in zip(RECEIPT_COLUMNS, figures,
                                                                   strict=True)}
            measured.setdefault(batch_id, {"payouts": 0, "states": {}}).update(
                chain={"transactions": int(judged), "failed_on_chain": int(failures or 0),
                       **chain, "trx_burned": text(chain["trx_burned_sun"] * SUN)},
                sent_by=task_of(claimed_by))
        counts: dict[str, dict[str | None, int]] = {}
        for batch_id, confirmed_on, count in conn.execute(confirmed):
            counts.setdefault(batch_id, {})[confirmed_on] = int(count)
    for batch_id, row in measured.items():
        row["confirmation"] = confirmation(counts.get(batch_id, {}))
    return measured


def task_of(scope: str | None) -> dict[str, Any] | None:
    """The task instance a journal scope names (``dag/run/task/map[/try..]``), or None."""
    if not scope:
        return None
    parts = scope.split("@", 1)[0].split("/")
    if parts and parts[-1].startswith("try"):
        parts = parts[:-1]
    if len(parts) < 4:
        return None
    dag_id, *run, task_id, map_index = parts
    try:
        index = int(map_index)
    except ValueError:
        return None
    return {"dag_id": dag_id, "run_id": "/".join(run), "task_id": task_id.split("__order_")[0],
            "map_index": index}
