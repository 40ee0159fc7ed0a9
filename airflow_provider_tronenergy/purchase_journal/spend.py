"""What a purchase key has spent, read from the journal: the figure ``max_spend_trx`` is
checked against (:func:`~airflow_provider_tronenergy.money.guard.guard_spend`).

A key's spend is every attempt under it, or under it and ``:`` (its refills and top-ups:
``<key>:refill``, a plan's ``<key>:buy0``), that bought or may have bought: a placed
purchase at its recorded cost, an attempt whose outcome is unknown (``sending``, or
``abandoned`` by a rebuy) at the cost quoted before it was sent. Refused, not placed and
ended attempts bought nothing. The quote is written at the claim (``quoted_sun``, a
column of its own); a purchase priced by neither (sent unquoted, resolved by hand
without figures) is named, so the limit fails closed instead of counting it as free.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from airflow_provider_tronenergy.money.guard import Spent
from airflow_provider_tronenergy.purchase_journal.figures import SUN_PER_TRX, sun

COLUMN: Final = "quoted_sun"
SPENDING: Final = ("placed", "sending", "abandoned")
"""The states of an attempt that bought or may have bought (``store.EntryState``)."""


@dataclass(frozen=True)
class SpendCheck:
    """A spend limit at a claim: ``check`` raises when what ``roots`` spent leaves no room."""

    roots: tuple[str, ...]
    check: Callable[[Spent], None]


def column() -> sa.Column[int]:
    """The quoted cost (activation included) in sun; NULL when sent unquoted."""
    return sa.Column(COLUMN, sa.BigInteger(), nullable=True)


def quoted_sun(cost: Decimal | None) -> int | None:
    """A quote's total for the column."""
    return None if cost is None else sun(cost)


def under(entries: sa.Table, roots: Sequence[str]) -> sa.ColumnElement[bool]:
    """The attempts under any of ``roots``: the key itself or the key and ``:``."""
    identity = entries.c.identity
    return sa.or_(*(sa.or_(identity == root, identity.startswith(f"{root}:", autoescape=True))
                    for root in roots))


def spent(conn: Connection, entries: sa.Table, roots: Sequence[str]) -> Spent:
    """What the attempts under ``roots`` spent or may have spent."""
    e = entries.c
    rows = conn.execute(sa.select(e.identity, e.attempt, e.state, e.cost_sun, e[COLUMN])
                        .where(under(entries, roots), e.state.in_(SPENDING))
                        .order_by(e.id)).all()
    total, unpriced = 0, []
    for identity, attempt, state, cost, quoted in rows:
        figure = cost if state == "placed" and cost is not None else quoted
        if figure is None:
            unpriced.append(f"{identity} attempt {attempt}, {state}")
        else:
            total += int(figure)
    return Spent(total=Decimal(total) / SUN_PER_TRX, orders=len(rows),
                 unpriced=tuple(unpriced))
