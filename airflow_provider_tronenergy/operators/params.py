"""Reading operator parameters that templates may have rendered to text.

Money is exact (``Decimal``), counts are whole numbers in ASCII digits, and a
bad value is a ``ValidationError`` naming the field, raised before any call.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from airflow_provider_tronenergy.client import ValidationError


def as_decimal(value: Any, field: str) -> Decimal:
    """Exact TRX from a number or text (templates render to text); floats via their repr."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
        raise ValidationError(field, "must be a decimal amount of TRX")
    try:
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value).strip())
    except InvalidOperation:
        raise ValidationError(field, "must be a decimal amount of TRX") from None
    if not number.is_finite() or number < 0:
        raise ValidationError(field, "must be a non-negative amount of TRX")
    return number


def as_int(value: Any, field: str) -> int:
    if isinstance(value, bool):
        raise ValidationError(field, "must be a whole number")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise ValidationError(field, "must be a whole number")


def as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)
