"""Reading one JSON object into typed values, and remembering which keys were known.

The models read their fields through :class:`Reader`, one method per annotation;
a missing or mistyped field raises :class:`UnexpectedResponseError` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from decimal import Decimal, InvalidOperation
from types import MappingProxyType
from typing import Any, TypeVar

from airflow_provider_tronenergy.client.errors import UnexpectedResponseError
from tronenergy_protocol.numbers import parse_decimal

V = TypeVar("V")
EMPTY: Mapping[str, Any] = MappingProxyType({})
_INT_LIMIT = 10**18  # keeps a hostile "1e999999999" from becoming a giant int


class Reader:
    """Reads one JSON object into typed values; remembers which keys were known."""

    def __init__(self, data: Any, what: str) -> None:
        if not isinstance(data, Mapping):
            raise UnexpectedResponseError(
                f"{what}: expected a JSON object, got {type(data).__name__}"
            )
        self.data = data
        self.what = what
        self.known: set[str] = set()

    def _bad(self, key: str, expected: str) -> UnexpectedResponseError:
        got = self.data.get(key)
        shown = "missing" if key not in self.data else f"{type(got).__name__}"
        return UnexpectedResponseError(f"{self.what}.{key}: expected {expected}, got {shown}")

    def _value(self, key: str) -> Any:
        self.known.add(key)
        return self.data.get(key)

    def opt_text(self, key: str) -> str | None:
        value = self._value(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._bad(key, "a string")
        return value

    def _need(self, value: V | None, key: str, expected: str, default: V | None = None) -> V:
        """``value``, else ``default``, else the error naming ``key``."""
        if value is not None:
            return value
        if default is None:
            raise self._bad(key, expected)
        return default

    def text(self, key: str, default: str | None = None) -> str:
        return self._need(self.opt_text(key), key, "a string", default)

    def opt_decimal(self, key: str) -> Decimal | None:
        value = self._value(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, Decimal, str)):
            raise self._bad(key, "a decimal number")
        try:
            number = parse_decimal(value, key) if isinstance(value, str) else Decimal(value)
        except (InvalidOperation, ValueError):
            raise self._bad(key, "a decimal number in ASCII digits") from None
        if not number.is_finite():
            raise self._bad(key, "a finite decimal number")
        return number

    def decimal(self, key: str) -> Decimal:
        return self._need(self.opt_decimal(key), key, "a decimal number")

    def opt_integer(self, key: str) -> int | None:
        value = self._value(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
            raise self._bad(key, "an integer")
        if isinstance(value, Decimal) and (
            not value.is_finite() or abs(value) >= _INT_LIMIT or value != value.to_integral_value()
        ):
            raise self._bad(key, "an integer")
        return int(value)

    def integer(self, key: str, default: int | None = None) -> int:
        return self._need(self.opt_integer(key), key, "an integer", default)

    def flag(self, key: str, default: bool | None = None) -> bool:
        value = self._value(key)
        if value is None and default is not None:
            return default
        if not isinstance(value, bool):
            raise self._bad(key, "true or false")
        return value

    def opt_moment(self, key: str) -> datetime | None:
        value = self._value(key)
        if value is None or value == "":
            return None
        parsed = _parse_datetime(value)
        if parsed is None:
            raise self._bad(key, "an ISO 8601 timestamp")
        return parsed

    def moment(self, key: str) -> datetime:
        return self._need(self.opt_moment(key), key, "an ISO 8601 timestamp")

    def millis_datetime(self, key: str) -> datetime:
        millis = self.integer(key)
        try:
            return datetime.fromtimestamp(millis / 1000, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            raise self._bad(key, "a time in milliseconds") from None

    def str_tuple(self, key: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        value = self._value(key)
        if value is None:
            return default
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self._bad(key, "an array of strings")
        return tuple(value)

    def extra(self) -> Mapping[str, Any]:
        unknown = {k: v for k, v in self.data.items() if k not in self.known}
        return MappingProxyType(unknown) if unknown else EMPTY


def _parse_datetime(value: Any) -> datetime | None:
    try:
        if isinstance(value, str):
            text = value.strip()
            if text[-1:] in ("Z", "z"):
                text = text[:-1] + "+00:00"
            parsed = datetime.fromisoformat(text)
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
        if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
            return datetime.fromtimestamp(float(value), tz=timezone.utc)
    except (ValueError, OverflowError, OSError, InvalidOperation):
        return None
    return None
