"""What each figure the service returns may be, checked where it is read.

A quote of ``price_per_10k: -5`` passes every ceiling; ``cost: "-5"`` or an empty
``order_id`` after a purchase would be recorded as bought. So each amount,
energy, count and id is checked as it is read (``models`` names the check of
each field): a figure outside its range makes the answer unreadable, which the
client turns into an unknown outcome for a money-moving call, and into a clear
error for a read. One rule per kind of figure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from tronenergy_protocol.address import is_valid_address
from tronenergy_protocol.ids import ORDER_ID, TX_HASH

SUN: Final = Decimal("0.000001")
MAX_TRX: Final = Decimal(10) ** 11
"""More TRX than exist (about 95 billion): no answer about one account reaches it."""
MAX_ENERGY: Final = 10**9
"""Far above any one order (the service sells at most a few million energy)."""
MAX_COUNT: Final = 10**9
MAX_HOURS: Final = Decimal(24 * 366)

Check = Callable[[Any], "str | None"]


def trx(*, positive: bool) -> Check:
    """A TRX amount: finite, below ``MAX_TRX``, at most 6 decimal places (whole sun)."""

    def check(value: Decimal) -> str | None:
        if not value.is_finite() or abs(value) >= MAX_TRX:
            return f"{_show(value)} is not a TRX amount (finite, under {MAX_TRX:,})"
        if positive and value <= 0:
            return f"must be a positive amount of TRX, got {_show(value)}"
        if value < 0:
            return f"must not be negative, got {_show(value)}"
        try:
            exact = value.quantize(SUN) == value
        except InvalidOperation:
            exact = False
        return None if exact else f"{_show(value)} has more than 6 decimal places (1 sun)"

    return check


def whole(*, positive: bool, limit: int) -> Check:
    """An energy amount or a count: within ``0 < n`` (or ``0 <= n``) and ``n <= limit``."""

    def check(value: int) -> str | None:
        low = 1 if positive else 0
        if not low <= value <= limit:
            return f"must be between {low:,} and {limit:,}, got {_show(value)}"
        return None

    return check


def hours(value: Decimal) -> str | None:
    """A rental duration: positive hours, at most a year."""
    if not value.is_finite() or not 0 < value <= MAX_HOURS:
        return f"must be a positive number of hours, got {_show(value)}"
    return None


def hours_or_none(value: Decimal) -> str | None:
    """An order record's duration: an activation's is 0."""
    return None if value == 0 else hours(value)


def pattern(regex: re.Pattern[str], what: str, *, empty_ok: bool = False) -> Check:
    """Text of an id's length and alphabet."""

    def check(value: str) -> str | None:
        if (empty_ok and value == "") or regex.fullmatch(value):
            return None
        return f"is not {what}: {_show(value)}"

    return check


def address(value: str) -> str | None:
    """A TRON address the service names (a check's, an order's, a watched one): full
    base58check, as every address the provider sends is checked."""
    return None if is_valid_address(value) else f"is not a TRON address: {_show(value)}"


def address_or_empty(value: str) -> str | None:
    """An address the spec does not show (an order's target and recipient): ``""`` reads as
    not given, anything else must be an address."""
    return None if value == "" else address(value)


order_id = pattern(ORDER_ID, "an order id (1-128 printable ASCII characters, no spaces)")
tx_hash = pattern(TX_HASH, "a transaction hash (64 hex digits)", empty_ok=True)
energy = whole(positive=True, limit=MAX_ENERGY)
energy_or_zero = whole(positive=False, limit=MAX_ENERGY)  # an activation's order: 0
count = whole(positive=False, limit=MAX_COUNT)
cost = trx(positive=True)
balance = trx(positive=False)


def _show(value: object) -> str:
    text = format(value, "f") if isinstance(value, Decimal) and value.is_finite() \
        and abs(value.adjusted()) < 30 else str(value)
    return repr(text if len(text) <= 40 else text[:40] + "...")
