"""A placed purchase's figures in integer columns of the journal: what a period's sums read.

The result a purchase records (``purchase.run``) is JSON text: exact, but a year of them is
100,000 documents to parse for one sum. So ``record_placed`` also writes four integers
(sun and energy, never floats), and a period's money is one indexed ``SUM`` (the Energy
page). A purchase a person resolved with only its order id has no figures (NULL).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Final

import sqlalchemy as sa

from airflow_provider_tronenergy.money.quote import ACTIVATION_COST

COLUMNS: Final = ("energy", "cost_sun", "burn_sun", "activation_sun")
"""Energy bought; TRX paid (activation included), burning the energy would have cost, and
of the cost what activating the recipient took (a smart-buy that activated), in sun."""
SUN_PER_TRX: Final = Decimal(1_000_000)


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
