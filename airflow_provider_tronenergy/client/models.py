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
from datetime import datetime
from decimal import Decimal
from enum import Enum
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

from airflow_provider_tronenergy.client import ranges
from airflow_provider_tronenergy.client.errors import UnexpectedResponseError
from airflow_provider_tronenergy.client.reader import EMPTY, Reader


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


def _extra() -> Any:
    return field(default_factory=lambda: EMPTY, hash=False, repr=False)


def _meta(check: ranges.Check | None = None, *, absent: Any = MISSING) -> Mapping[str, Any]:
    """A field's reading rules: its ``check`` (``ranges``), and what an absent key reads as.

    ``absent``: a required field that reads as this ("" or 0) when the answer leaves it out.
    """
    return MappingProxyType({"check": check, "absent": absent})


def _order_status(r: Reader, key: str) -> OrderStatus:
    raw = r.text(key)
    try:
        return OrderStatus(raw)
    except ValueError:
        raise UnexpectedResponseError(f"{r.what}.{key}: unknown order status {raw[:40]!r}") \
            from None


# How a field is read, by its annotation.
_READERS: dict[str, Callable[..., Any]] = {
    "str": Reader.text, "str | None": Reader.opt_text,
    "int": Reader.integer, "int | None": Reader.opt_integer,
    "Decimal": Reader.decimal, "Decimal | None": Reader.opt_decimal,
    "bool": Reader.flag, "datetime | None": Reader.opt_moment,
    "tuple[str, ...]": Reader.str_tuple, "OrderStatus": _order_status,
}
_Step = tuple[str, Callable[..., Any], tuple[Any, ...], "ranges.Check | None"]
_PLANS: dict[type, tuple[str, tuple[_Step, ...]]] = {}


def _plan(cls: type[_Read]) -> tuple[str, tuple[_Step, ...]]:
    """The name errors use (``SmartPurchase``: "smart purchase") and each field's reader."""
    if cls not in _PLANS:
        steps: list[_Step] = []
        for item in fields(cls):  # type: ignore[arg-type]
            absent = item.metadata.get("absent", MISSING)
            if absent is MISSING:
                absent = item.default
            default = () if absent is None or absent is MISSING else (absent,)
            if item.name != "extra":
                steps.append((item.name, _READERS[str(item.type)], default,
                              item.metadata.get("check")))
        steps.sort(key=lambda step: step[0] not in cls._read_first)
        _PLANS[cls] = re.sub(r"(?<!^)(?=[A-Z])", " ", cls.__name__).lower(), tuple(steps)
    return _PLANS[cls]


class _Read(_Model):
    """Read field by field, each by its annotation, from the key of its name."""

    _read_first: ClassVar[tuple[str, ...]] = ()  # fields read before the rest

    @classmethod
    def from_data(cls: type[M], data: Any) -> M:
        what, steps = _plan(cls)
        r = Reader(data, what)
        values = {}
        for name, read, default, check in steps:
            value = values[name] = read(r, name, *default)
            reason = check(value) if check is not None and value is not None else None
            if reason:
                raise UnexpectedResponseError(f"{what}.{name}: {reason}")
        values["extra"] = r.extra()
        result = cls(**values)
        reason = result._inconsistent()
        if reason:
            raise UnexpectedResponseError(f"{what}: {reason}")
        return result

    def _inconsistent(self) -> str | None:
        """What contradicts itself across fields, if anything."""
        return None


M = TypeVar("M", bound=_Read)


@dataclass(frozen=True)
class Account(_Read):
    user_id: int
    username: str
    balance: Decimal = field(metadata=_meta(ranges.balance))
    available_balance: Decimal = field(metadata=_meta(ranges.balance))
    frozen_amount: Decimal = field(metadata=_meta(ranges.balance))
    pending_orders_count: int = field(metadata=_meta(ranges.count))
    recharge_address: str
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class Price(_Read):
    price_65k_1hour: Decimal = field(metadata=_meta(ranges.cost))
    price_per_10k: Decimal = field(metadata=_meta(ranges.cost))
    energy_per_transfer: int = field(metadata=_meta(ranges.energy))
    min_energy: int = field(metadata=_meta(ranges.energy))
    max_energy: int = field(metadata=_meta(ranges.energy))
    rent_time: Decimal = field(metadata=_meta(ranges.hours))
    extra: Mapping[str, Any] = _extra()

    def _inconsistent(self) -> str | None:
        if self.min_energy > self.max_energy:
            return f"min_energy {self.min_energy:,} is above max_energy {self.max_energy:,}"
        return None


@dataclass(frozen=True)
class Purchase(_Read):
    """Result of buy, auto-buy and buy-count; ``energy_amount`` when the service states it."""

    order_id: str = field(metadata=_meta(ranges.order_id))
    tx_hash: str = field(metadata=_meta(ranges.tx_hash, absent=""))
    cost: Decimal = field(metadata=_meta(ranges.cost))
    energy_amount: int | None = field(default=None, metadata=_meta(ranges.energy))
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class SmartPurchase(_Read):
    order_id: str = field(metadata=_meta(ranges.order_id))
    activated: bool
    energy_amount: int = field(metadata=_meta(ranges.energy))
    cost: Decimal = field(metadata=_meta(ranges.cost))
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class Activation(_Read):
    order_id: str = field(metadata=_meta(ranges.order_id))
    tx_hash: str = field(metadata=_meta(ranges.tx_hash, absent=""))
    cost: Decimal = field(metadata=_meta(ranges.cost))
    message: str = ""
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class AddressCheck(_Read):
    address: str = field(metadata=_meta(ranges.address))
    is_activated: bool
    need_activate: bool
    transfer_count: int = field(metadata=_meta(ranges.count))
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class Order(_Read):
    """An order record; only id and status are guaranteed, the rest as the service tells.

    Poll until ``status.is_terminal()``; ``tx_hash`` is set once the status is success.
    """

    _read_first = ("status",)

    order_id: str = field(metadata=_meta(ranges.order_id))
    status: OrderStatus
    tx_hash: str = field(default="", metadata=_meta(ranges.tx_hash))
    cost: Decimal | None = field(default=None, metadata=_meta(ranges.balance))
    energy_amount: int | None = field(default=None, metadata=_meta(ranges.energy_or_zero))
    rent_time: Decimal | None = field(default=None, metadata=_meta(ranges.hours_or_none))
    target_address: str | None = field(default=None, metadata=_meta(ranges.address_or_empty))
    to_address: str | None = field(default=None, metadata=_meta(ranges.address_or_empty))
    kind: str | None = None
    activation_cost: Decimal | None = field(default=None, metadata=_meta(ranges.balance))
    created_at: datetime | None = None
    updated_at: datetime | None = None
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class MonitoredAddress(_Read):
    address: str = field(metadata=_meta(ranges.address))
    label: str = field(metadata=_meta(absent=""))
    tokens: tuple[str, ...]
    is_active: bool
    total_callbacks: int = field(metadata=_meta(ranges.count, absent=0))
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
        r = Reader(data, "monitored address page")
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

    address: str = field(metadata=_meta(ranges.address))
    status: str
    webhook_url: str = field(metadata=_meta(absent=""))
    extra: Mapping[str, Any] = _extra()


@dataclass(frozen=True)
class MonitorStats(_Read):
    total_addresses: int = field(metadata=_meta(ranges.count))
    active_addresses: int = field(metadata=_meta(ranges.count))
    total_callbacks: int = field(metadata=_meta(ranges.count))
    success_callbacks: int = field(metadata=_meta(ranges.count))
    failed_callbacks: int = field(metadata=_meta(ranges.count))
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
        top = Reader(payload, "callback")
        event = top.text("event")
        timestamp = top.moment("timestamp")
        r = Reader(top._value("data"), "callback.data")
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
