"""What energy cost, day by day, from the purchase journal: the provider's own record.

Every purchase any operator placed is a journal row (``placed``, with the order's cost,
its energy and what burning that energy would have cost at the prices the purchase ran
with, as integer columns beside its result:
:mod:`~airflow_provider_tronenergy.purchase_journal.figures`). The journal is the source rather
than the ``payout batch ready`` events: it holds every purchase, not only a payout
batch's; it needs neither Airflow's database nor a DAG to have published anything; and it
is where a person's resolution lands. A smart-buy that activated its recipient paid the
activation in its ``cost``: it is split out as an activation. An order that failed or was
cancelled (``ended``) was refunded and counts as nothing spent.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

import sqlalchemy as sa

from airflow_provider_tronenergy.money.burn import DEFAULT_PRICES, SUN
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.purchase_journal.store import EntryState, PurchaseJournal
from airflow_provider_tronenergy.ui.period import DAY_MS, Period

ZERO: Final = Decimal(0)
PLACED: Final = EntryState.PLACED.value


@dataclass
class Day:
    """One day's money: what was paid and what burning the same would have cost."""

    orders: int = 0
    energy: int = 0
    energy_trx: Decimal = ZERO
    energy_burn_trx: Decimal = ZERO
    activations: int = 0
    activation_trx: Decimal = ZERO
    activation_burn_trx: Decimal = ZERO
    without_figures: int = 0
    """Placed orders whose cost the journal does not hold (resolved by a person)."""

    def add_activations(self, count: int, paid: Decimal, burn: Decimal) -> None:
        """Activations paid ``paid`` in all, burning ``burn`` had they been made on chain."""
        self.activations += count
        self.activation_trx += paid
        self.activation_burn_trx += burn

    def to_dict(self, day: str) -> dict[str, Any]:
        """JSON-safe: TRX as exact decimal text."""
        spent = self.energy_trx + self.activation_trx
        burn = self.energy_burn_trx + self.activation_burn_trx
        return {"day": day, "orders": self.orders, "energy": self.energy,
                "energy_trx": text(self.energy_trx),
                "energy_burn_trx": text(self.energy_burn_trx),
                "activations": self.activations, "activation_trx": text(self.activation_trx),
                "activation_burn_trx": text(self.activation_burn_trx),
                "spent_trx": text(spent), "burn_trx": text(burn),
                "saving_trx": text(burn - spent), "without_figures": self.without_figures}


def purchase_days(journal: PurchaseJournal, period: Period) -> list[Day]:
    """One :class:`Day` per day of ``period``: the placed purchases' figures, summed per day
    by the database over the journal's period index (``purchase_journal.figures``)."""
    journal.ensure_schema()
    e = journal.entries.c
    day = (e.sent_at_ms - e.sent_at_ms % DAY_MS).label("day")
    query = sa.select(
        day, sa.func.count(), sa.func.count(e.cost_sun), sa.func.sum(e.energy),
        sa.func.sum(e.cost_sun), sa.func.sum(sa.func.coalesce(e.burn_sun, e.cost_sun)),
        sa.func.count(e.activation_sun), sa.func.sum(e.activation_sun),
    ).where(e.sent_at_ms >= period.start_ms, e.sent_at_ms < period.end_ms,
            e.state == PLACED).group_by(day)
    days = [Day() for _ in range(len(period))]
    with journal.engine.connect() as conn:
        for start, orders, priced, energy, cost, burn, activations, activation in \
                conn.execute(query):
            into = days[period.day_index(int(start))]
            into.orders += int(orders)
            into.without_figures += int(orders) - int(priced)
            into.energy += int(energy or 0)
            paid_activation = int(activation or 0) * SUN
            # An activation's cost is in its purchase's; burning it is an account's fee.
            into.energy_trx += int(cost or 0) * SUN - paid_activation
            into.energy_burn_trx += int(burn or 0) * SUN
            into.add_activations(int(activations), paid_activation,
                                 int(activations) * DEFAULT_PRICES.activation_sun * SUN)
    return days


def orders_by_state(journal: PurchaseJournal, period: Period) -> dict[str, int]:
    """How many purchase attempts sent in ``period`` stand in each journal state."""
    journal.ensure_schema()
    e = journal.entries.c
    query = sa.select(e.state, sa.func.count()).where(
        e.sent_at_ms >= period.start_ms, e.sent_at_ms < period.end_ms).group_by(e.state)
    with journal.engine.connect() as conn:
        counts = {str(state): int(n) for state, n in conn.execute(query)}
    return {state.value: counts.get(state.value, 0) for state in EntryState}
