"""Energy rented against the energy the chain charged the payouts sent, and TRX burned anyway.

From the payout journal's receipt figures (``payout.journal.RECEIPT_COLUMNS``, integers
beside each receipt): every payout transaction that reached a block in the period, failed
or not (a failed one still used energy and burned TRX), summed by the database over the
journal's period index. A payout counts on the day it was claimed for sending
(``created_at_ms``). The energy rented is the purchase journal's (:mod:`.purchases`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from airflow_provider_tronenergy.money.burn import SUN
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.payout.attempts import PayoutState
from airflow_provider_tronenergy.payout.journal import RECEIPT_COLUMNS, PayoutJournal
from airflow_provider_tronenergy.ui.period import Period


def chain_use(payouts: PayoutJournal, period: Period, energy_rented: int) -> dict[str, Any]:
    """The receipts' sums for the period, next to ``energy_rented``; attempts by state."""
    payouts.ensure_schema()
    a = payouts.attempts.c
    query = sa.select(a.state, sa.func.count(), sa.func.count(a.energy_total),
                      *(sa.func.sum(a[name]) for name in RECEIPT_COLUMNS)).where(
        a.created_at_ms >= period.start_ms, a.created_at_ms < period.end_ms).group_by(a.state)
    sums = dict.fromkeys(RECEIPT_COLUMNS, 0)
    states: dict[str, int] = {}
    transactions = failed = 0
    with payouts.db.engine.connect() as conn:
        for state, attempts, judged, *figures in conn.execute(query):
            states[str(state)] = int(attempts)
            transactions += int(judged)
            if state != PayoutState.CONFIRMED.value:  # a receipt, and not a success
                failed += int(judged)
            for name, value in zip(RECEIPT_COLUMNS, figures, strict=True):
                sums[name] += int(value or 0)
    charged = sums["energy_total"]
    return {
        "energy_rented": energy_rented, "energy_charged": charged,
        "energy_from_stake": sums["energy_from_stake"], "energy_burned": sums["energy_burned"],
        "trx_burned": text(sums["trx_burned_sun"] * SUN),
        "transactions": transactions, "failed_on_chain": failed,
        "charged_per_rented": (text((Decimal(charged) / energy_rented)
                                    .quantize(Decimal("0.0001"))) if energy_rented else None),
        "attempts_by_state": dict(sorted(states.items())),
    }
