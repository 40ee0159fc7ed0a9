"""The energy a purchase was quoted for, in a column of its own.

A person resolving an unknown purchase with an order id has the order compared with
what the journal says was bought (:mod:`.verify`). For a mode whose request does not
state the energy (auto-buy, smart-buy, buy-count), that is the energy the price
endpoint quoted just before sending, written at the claim (``quoted_energy``).
"""

from __future__ import annotations

from typing import Final

import sqlalchemy as sa

COLUMN: Final = "quoted_energy"


def column() -> sa.Column[int]:
    """Nullable: a purchase sent without a quote has none."""
    return sa.Column(COLUMN, sa.BigInteger(), nullable=True)
