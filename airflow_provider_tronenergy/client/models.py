"""Typed, immutable results: exact Decimal amounts, aware datetimes, JSON-safe ``to_dict``.

Fields the service adds later land in ``extra`` instead of failing the call; a
missing or mistyped known field raises :class:`UnexpectedResponseError`, so a
wrong amount is never silently read as something else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime, timezone
from decimal import Decimal, InvalidOperation
from enum import Enum
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

from airflow_provider_tronenergy.client.errors import UnexpectedResponseError
from airflow_provider_tronenergy.protocol.numbers import parse_decimal

_EMPTY: Mapping[str, Any] = MappingProxyType({})
V = TypeVar("V")
_INT_LIMIT = 10**18  # keeps a hostile "1e999999999" from becoming a giant int


class OrderStatus(str, Enum):
    PENDING = "pending"
    PROCESSING = "processing"
    SUCCESS = "success"
    FAILED = "failed"
    CANCELLED = "cancelled"

    def is_terminal(self) -> bool:
        """True once the order can no longer change (a sensor may stop polling)."""
        return self in _TERMINAL


_TERMINAL = frozenset({OrderStatus.SUCCESS, OrderStatus.FAILED, OrderStatus.CANCELLED})


def jsonable(value: Any) -> Any:
    """JSON-safe copy: Decimal and datetime as strings, enums as values, tuples as lists."""
    if isinstance(value, Enum):  # before str: OrderStatus is a str too
        return jsonable(value.value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, Decimal):
        return format(value, "f") if value.is_finite() else str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float):
        return value
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    return str(value)


class _Model:
    """Shared ``to_dict`` for the result dataclasses."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: jsonable(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


class _Reader:
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

    def order_status(self, key: str) -> OrderStatus:
        raw = self.text(key)
        try:
            return OrderStatus(raw)
        except ValueError:
            raise UnexpectedResponseError(
                f"{self.what}.{key}: unknown order status {raw[:40]!r}"
            ) from None

    def str_tuple(self, key: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        value = self._value(key)
        if value is None:
            return default
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self._bad(key, "an array of strings")
        return tuple(value)

    def extra(self) -> Mapping[str, Any]:
        unknown = {k: v for k, v in self.data.items() if k not in self.known}
        return MappingProxyType(unknown) if unknown else _EMPTY


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


def _extra() -> Any:
    return field(default_factory=lambda: _EMPTY, hash=False, repr=False)


# Metadata of a required field that reads as "" or 0 when the answer leaves it out.
_EMPTY_IF_ABSENT = MappingProxyType({"absent": ""})
_ZERO_IF_ABSENT = MappingProxyType({"absent": 0})
# How a field is read, by its annotation.
_READERS: dict[str, Callable[..., Any]] = {
    "str": _Reader.text, "str | None": _Reader.opt_text,
    "int": _Reader.integer, "int | None": _Reader.opt_integer,
    "Decimal": _Reader.decimal, "Decimal | None": _Reader.opt_decimal,
    "bool": _Reader.flag, "datetime | None": _Reader.opt_moment,
    "tuple[str, ...]": _Reader.str_tuple, "OrderStatus": _Reader.order_status,
}
_Step = tuple[str, Callable[..., Any], tuple[Any, ...]]
_PLANS: dict[type, tuple[str, tuple[_Step, ...]]] = {}


def _plan(cls: type[_Read]) -> tuple[str, tuple[_Step, ...]]:
    """The name errors use (``SmartPurchase``: "smart purchase") and each field's reader."""
    if cls not in _PLANS:
        steps: list[_Step] = []
        for item in fields(cls):  # type: ignore[arg-type]
            absent = item.metadata.get("absent", item.default)
            default = () if absent is None or absent is MISSING else (absent,)
            if item.name != "extra":
                steps.append((item.name, _READERS[str(item.type)], default))
        steps.sort(key=lambda step: step[0] not in cls._read_first)
        _PLANS[cls] = re.sub(r"(?<!^)(?=[A-Z])", " ", cls.__name__).lower(), tuple(steps)
    return _PLANS[cls]


class _Read(_Model):
    """Read field by field, each by its annotation, from the key of its name."""

    _read_first: ClassVar[tuple[str, ...]] = ()  # fields read before the rest

    @classmethod
    def from_data(cls: type[M], data: Any) -> M:
        what, steps = _plan(cls)
        r = _Reader(data, what)
        values = {name: read(r, name, *default) for name, read, default in steps}
        values["extra"] = r.extra()
        return cls(**values)


M = TypeVar("M", bound=_Read)


@dataclass(frozen=True)
class Account(_Read):
    user_id: int
    username: str
    balance: Decimal
    available_balance: Decimal
    frozen_amount: Decimal
    pending_orders_count: int
    recharge_address: str
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class Price(_Read):
    price_65k_1hour: Decimal
    price_per_10k: Decimal
    energy_per_transfer: int
    min_energy: int
    max_energy: int
    rent_time: Decimal
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class Purchase(_Read):
    """Result of buy, auto-buy and buy-count; ``energy_amount`` when the service states it."""

    order_id: str
    tx_hash: str = field(metadata=_EMPTY_IF_ABSENT)
    cost: Decimal
    energy_amount: int | None = None
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class SmartPurchase(_Read):
    order_id: str
    activated: bool
    energy_amount: int
    cost: Decimal
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class Activation(_Read):
    order_id: str
    tx_hash: str = field(metadata=_EMPTY_IF_ABSENT)
    cost: Decimal
    message: str = ""
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class AddressCheck(_Read):
    address: str
    is_activated: bool
    need_activate: bool
    transfer_count: int
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class Order(_Read):
    """An order record; only id and status are guaranteed, the rest as the service tells.

    Poll until ``status.is_terminal()``; ``tx_hash`` is set once the status is success.
    """

    _read_first = ("status",)

    order_id: str
    status: OrderStatus
    tx_hash: str = ""
    cost: Decimal | None = None
    energy_amount: int | None = None
    rent_time: Decimal | None = None
    target_address: str | None = None
    to_address: str | None = None
    kind: str | None = None
    activation_cost: Decimal | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class MonitoredAddress(_Read):
    address: str
    label: str = field(metadata=_EMPTY_IF_ABSENT)
    tokens: tuple[str, ...]
    is_active: bool
    total_callbacks: int = field(metadata=_ZERO_IF_ABSENT)
    last_callback_at: datetime | None
    created_at: datetime | None
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class MonitoredAddressPage(_Model):
    total: int
    page: int
    page_size: int
    addresses: tuple[MonitoredAddress, ...]
    extra: Mapping[str, Any] = _extra()

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["addresses"] = [item.to_dict() for item in self.addresses]
        return out

    @classmethod
    def from_data(cls, data: Any, *, page: int, page_size: int) -> MonitoredAddressPage:
        r = _Reader(data, "monitored address page")
        items = r._value("addresses")
        if not isinstance(items, list):
            raise r._bad("addresses", "an array")
        return cls(
            total=r.integer("total"),
            page=page,
            page_size=page_size,
            addresses=tuple(MonitoredAddress.from_data(item) for item in items),
            extra=r.extra(),
        )


@dataclass(frozen=True)
class MonitorRegistration(_Read):
    """What the add-address call answers: the address, its state and the callback URL."""

    address: str
    status: str
    webhook_url: str = field(metadata=_EMPTY_IF_ABSENT)
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class MonitorStats(_Read):
    total_addresses: int
    active_addresses: int
    total_callbacks: int
    success_callbacks: int
    failed_callbacks: int
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class TransferEvent(_Model):
    """One ``tron.transfer`` callback; deduplicate on ``tx_hash`` (retries resend it)."""

    event: str
    timestamp: datetime
    tx_hash: str
    from_address: str
    to_address: str
    amount: Decimal
    token: str
    block_number: int
    block_timestamp: datetime
    extra: Mapping[str, Any] = _extra()

    @classmethod
    def from_payload(cls, payload: Any) -> TransferEvent:
        top = _Reader(payload, "callback")
        event = top.text("event")
        timestamp = top.moment("timestamp")
        r = _Reader(top._value("data"), "callback.data")
        result = cls(
            event=event,
            timestamp=timestamp,
            tx_hash=r.text("tx_hash"),
            from_address=r.text("from"),
            to_address=r.text("to"),
            amount=r.decimal("amount"),
            token=r.text("token"),
            block_number=r.integer("block_number"),
            block_timestamp=r.millis_datetime("block_timestamp"),
            extra=MappingProxyType({**top.extra(), **r.extra()}),
        )
        return result

    @classmethod
    def from_json(cls, body: bytes | str) -> TransferEvent:
        """Parse a callback body (verify its signature on the raw bytes first)."""
        try:
            payload = json.loads(body, parse_float=Decimal, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            raise UnexpectedResponseError(f"callback body is not valid JSON: {exc}") from None
        return cls.from_payload(payload)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")
