"""A placed purchase's figures in integer columns of the journal: what a period's sums read.

The result a purchase records (``purchase.run``) is JSON text: exact, but a year of them is
100,000 documents to parse for one sum. So ``record_placed`` also writes four integers
(sun and energy, never floats), and a period's money is one indexed ``SUM`` (the Energy
page). A purchase a person resolved with only its order id has no figures (NULL).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.money.quote import ACTIVATION_COST

COLUMNS: Final = ("energy", "cost_sun", "burn_sun", "activation_sun")
"""Energy bought; TRX paid (activation included), burning the energy would have cost, and
of the cost what activating the recipient took (a smart-buy that activated), in sun."""
SUN_PER_TRX: Final = Decimal(1_000_000)
BACKFILL_CHUNK: Final = 1_000


def columns() -> list[sa.Column[Any]]:
    """The four columns, nullable: a row without figures is one nobody priced."""
    return [sa.Column(name, sa.BigInteger(), nullable=True) for name in COLUMNS]


def sun(value: Any) -> int | None:
    """TRX as decimal text (or a number) in sun; None when absent or not a number."""
    if value is None or value == "" or isinstance(value, (bool, float)):
        return None
    try:
        amount = Decimal(str(value)) * SUN_PER_TRX
    except InvalidOperation:
        return None
    return int(amount.to_integral_value()) if amount.is_finite() else None


def figures(result: Mapping[str, Any] | None) -> dict[str, int | None]:
    """The columns' values for a placed purchase's ``result``."""
    if not result:
        return dict.fromkeys(COLUMNS)
    activation = None
    if result.get("activated"):
        quoted = (result.get("quote") or {}).get("activation_cost")
        activation = sun(quoted) if quoted else sun(ACTIVATION_COST)
    energy = result.get("energy_amount")
    return {"energy": int(energy) if isinstance(energy, int) and energy > 0 else None,
            "cost_sun": sun(result.get("cost")), "burn_sun": sun(result.get("burn_cost")),
            "activation_sun": activation}


def add_figures(entries: sa.Table, index: str) -> sqlstore.Step:
    """Migration step: the columns (those missing), each priced row's figures from its
    result, and the period index ``index`` over them. Additive: no result is changed."""

    def step(conn: Connection) -> None:
        sqlstore.add_missing_columns(conn, entries, COLUMNS)
        e = entries.c
        update = entries.update().where(e.id == sa.bindparam("row_id")).values(
            **{name: sa.bindparam(name) for name in COLUMNS})
        last = 0
        while True:
            rows = conn.execute(sa.select(e.id, e.result).where(
                e.id > last, e.result.is_not(None)).order_by(e.id).limit(BACKFILL_CHUNK)).all()
            if not rows:
                break
            conn.execute(update, [{"row_id": row_id, **figures(json.loads(result))}
                                  for row_id, result in rows])
            last = rows[-1][0]
        sqlstore.add_index(entries, index)(conn)

    return step
