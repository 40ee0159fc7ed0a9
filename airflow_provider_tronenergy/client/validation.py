"""Argument checks that run before anything is sent, so a typo never costs money.

Every failure is a :class:`ValidationError` (a ``ValueError``) naming the field.
The limits are data (:class:`ValidationRules`), so a connection can follow the
real service where it differs from the spec, without a code change.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from airflow_provider_tronenergy.client.errors import ValidationError
from tronenergy_protocol.address import AddressError, decode_address
from tronenergy_protocol.energy import ENERGY_PER_TRANSFER
from tronenergy_protocol.numbers import NumberError, parse_decimal


def _decimals(*values: str) -> frozenset[Decimal]:
    return frozenset(Decimal(v) for v in values)


PRICE_RENT_TIMES = _decimals("0.08", "0.17", "1")
PURCHASE_RENT_TIMES = _decimals("0.25", "1", "24")
MONITOR_STATUSES = ("active", "inactive")


@dataclass(frozen=True)
class ValidationRules:
    """Per-endpoint rent_time sets and numeric bounds; an empty set skips that check."""

    price_rent_times: frozenset[Decimal] = PRICE_RENT_TIMES
    buy_rent_times: frozenset[Decimal] = PURCHASE_RENT_TIMES
    auto_buy_rent_times: frozenset[Decimal] = PURCHASE_RENT_TIMES
    buy_count_rent_times: frozenset[Decimal] = PURCHASE_RENT_TIMES
    smart_buy_rent_times: frozenset[Decimal] = PURCHASE_RENT_TIMES
    min_energy: int = 32_000
    max_energy: int = 5_000_000
    max_page_size: int = 100
    energy_per_transfer: int = ENERGY_PER_TRANSFER

    def __post_init__(self) -> None:
        if not 0 < self.min_energy <= self.max_energy:
            raise ValueError("ValidationRules: need 0 < min_energy <= max_energy")
        if not 0 < self.energy_per_transfer <= self.max_energy:
            raise ValueError("ValidationRules: need 0 < energy_per_transfer <= max_energy")
        if self.max_page_size < 1:
            raise ValueError("ValidationRules: max_page_size must be at least 1")

    @property
    def max_count(self) -> int:
        """The most transfers one buy-count order can hold."""
        return self.max_energy // self.energy_per_transfer


def address(value: Any, field: str) -> str:
    """A base58check TRON address (the codec the sandbox uses too)."""
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a TRON address string, not {type(value).__name__}")
    try:
        decode_address(value)
    except AddressError as exc:
        raise ValidationError(field, f"not a valid TRON address: {exc}") from None
    return value


def optional_address(value: Any, field: str) -> str | None:
    return None if value is None else address(value, field)


def rent_time(value: Any, allowed: Collection[Decimal], field: str = "rent_time") -> Decimal:
    """The rental duration in hours, as the canonical Decimal of ``allowed``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
        raise ValidationError(field, "must be a number of hours")
    try:  # text in ASCII digits only: an Arabic-Indic one is not 1 hour
        number = parse_decimal(value, field)
    except NumberError as exc:
        raise ValidationError(field, f"must be a number of hours: {exc.reason}") from None
    if number <= 0:
        raise ValidationError(field, "must be a positive number of hours")
    if not allowed:
        return number
    for candidate in allowed:
        if candidate == number:
            return candidate
    choices = ", ".join(format(v, "f") for v in sorted(allowed))
    raise ValidationError(field, f"must be one of {choices} (got {format(number, 'f')})")


def quoted_purchase_rent_time(value: Any, rules: ValidationRules,
                              field: str = "rent_time") -> Decimal:
    """A ``buy``'s duration that the price endpoint quotes too: what a purchase that reads
    its price first (the keeper's, held to a price cap) can rent. The purchase endpoints'
    set (``rules.buy_rent_times``) within the price endpoint's; an empty set skips its
    side, as everywhere."""
    number = rent_time(value, (), field)
    bought, quoted = rules.buy_rent_times, rules.price_rent_times
    both = bought & quoted if bought and quoted else bought or quoted
    if (bought or quoted) and number not in both:
        def listed(times: frozenset[Decimal]) -> str:
            return ", ".join(format(v, "f") for v in sorted(times)) or "none"

        raise ValidationError(field, (
            f"{format(number, 'f')} h is not both bought and quoted: must be one of "
            f"{listed(both)} (purchases accept {listed(bought) if bought else 'any'}, "
            f"the price endpoint quotes {listed(quoted) if quoted else 'any'})"))
    return rent_time(number, both, field)


def _integer(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, f"must be an integer, not {type(value).__name__}")
    return value


def energy_amount(value: Any, rules: ValidationRules) -> int:
    number = _integer(value, "energy_amount")
    if not rules.min_energy <= number <= rules.max_energy:
        raise ValidationError(
            "energy_amount", f"must be between {rules.min_energy} and {rules.max_energy}"
        )
    return number


def count(value: Any, rules: ValidationRules) -> int:
    """Transfers bought by count: as many as ``max_energy`` holds, as the price endpoint says."""
    number = _integer(value, "count")
    most = rules.max_count
    if not 1 <= number <= most:
        raise ValidationError(
            "count", f"must be between 1 and {most} ({rules.max_energy:,} energy at most, "
                     f"{rules.energy_per_transfer:,} a transfer)")
    return number


def page(value: Any) -> int:
    number = _integer(value, "page")
    if number < 1:
        raise ValidationError("page", "must be at least 1")
    return number


def page_size(value: Any, rules: ValidationRules) -> int:
    number = _integer(value, "page_size")
    if not 1 <= number <= rules.max_page_size:
        raise ValidationError("page_size", f"must be between 1 and {rules.max_page_size}")
    return number


def monitor_status(value: Any) -> str | None:
    if value is None:
        return None
    if value not in MONITOR_STATUSES:
        raise ValidationError("status", f"must be one of {', '.join(MONITOR_STATUSES)} or None")
    return str(value)


def order_id(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("order_id", "must be a non-empty string")
    if len(value) > 200:
        raise ValidationError("order_id", "must be at most 200 characters")
    return value


def webhook_url(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        raise ValidationError("webhook_url", "must be an http(s) URL")
    return value


def label(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError("label", "must be a string")
    return value


def tokens(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise ValidationError("tokens", "must be a non-empty list of token symbols")
    if not all(isinstance(item, str) and item.strip() for item in value):
        raise ValidationError("tokens", "must be a non-empty list of token symbols")
    return list(value)
