"""Typed, immutable results: exact Decimal amounts, aware datetimes, JSON-safe ``to_dict``.

Fields the service adds later land in ``extra`` instead of failing the call; a
missing or mistyped known field raises :class:`UnexpectedResponseError`, so a
wrong amount is never silently read as something else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from decimal import Decimal, InvalidOperation
from enum import Enum
from types import MappingProxyType
from typing import Any

from airflow_provider_tronenergy.client.errors import UnexpectedResponseError
from airflow_provider_tronenergy.protocol.numbers import parse_decimal

_EMPTY: Mapping[str, Any] = MappingProxyType({})
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

    def text(self, key: str, default: str | None = None) -> str:
        value = self.opt_text(key)
        if value is None:
            if default is None:
                raise self._bad(key, "a string")
            return default
        return value

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
        number = self.opt_decimal(key)
        if number is None:
            raise self._bad(key, "a decimal number")
        return number

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
        number = self.opt_integer(key)
        if number is None:
            if default is None:
                raise self._bad(key, "an integer")
            return default
        return number

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
        parsed = self.opt_moment(key)
        if parsed is None:
            raise self._bad(key, "an ISO 8601 timestamp")
        return parsed

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


@dataclass(frozen=True)
class Account(_Model):
    user_id: int
    username: str
    balance: Decimal
    available_balance: Decimal
    frozen_amount: Decimal
    pending_orders_count: int
    recharge_address: str
    extra: Mapping[str, Any] = _extra()

    @classmethod
    def from_data(cls, data: Any) -> Account:
        r = _Reader(data, "account")
        return cls(
            user_id=r.integer("user_id"),
            username=r.text("username"),
            balance=r.decimal("balance"),
            available_balance=r.decimal("available_balance"),
            frozen_amount=r.decimal("frozen_amount"),
            pending_orders_count=r.integer("pending_orders_count"),
            recharge_address=r.text("recharge_address"),
            extra=r.extra(),
        )


@dataclass(frozen=True)
class Price(_Model):
    price_65k_1hour: Decimal
    price_per_10k: Decimal
    energy_per_transfer: int
    min_energy: int
    max_energy: int
    rent_time: Decimal
    extra: Mapping[str, Any] = _extra()

    @classmethod
    def from_data(cls, data: Any) -> Price:
        r = _Reader(data, "price")
        return cls(
            price_65k_1hour=r.decimal("price_65k_1hour"),
            price_per_10k=r.decimal("price_per_10k"),
            energy_per_transfer=r.integer("energy_per_transfer"),
            min_energy=r.integer("min_energy"),
            max_energy=r.integer("max_energy"),
            rent_time=r.decimal("rent_time"),
            extra=r.extra(),
        )


@dataclass(frozen=True)
class Purchase(_Model):
    """Result of buy, auto-buy and buy-count; ``energy_amount`` when the service states it."""

    order_id: str
    tx_hash: str
    cost: Decimal
    energy_amount: int | None = None
    extra: Mapping[str, Any] = _extra()

    @classmethod
    def from_data(cls, data: Any) -> Purchase:
        r = _Reader(data, "purchase")
        return cls(
            order_id=r.text("order_id"),
            tx_hash=r.text("tx_hash", ""),
            cost=r.decimal("cost"),
            energy_amount=r.opt_integer("energy_amount"),
            extra=r.extra(),
        )


@dataclass(frozen=True)
class SmartPurchase(_Model):
    order_id: str
    activated: bool
    energy_amount: int
    cost: Decimal
    extra: Mapping[str, Any] = _extra()

    @classmethod
    def from_data(cls, data: Any) -> SmartPurchase:
        r = _Reader(data, "smart purchase")
        return cls(
            order_id=r.text("order_id"),
            activated=r.flag("activated"),
            energy_amount=r.integer("energy_amount"),
            cost=r.decimal("cost"),
            extra=r.extra(),
        )


@dataclass(frozen=True)
class Activation(_Model):
    order_id: str
    tx_hash: str
    cost: Decimal
    message: str = ""
    extra: Mapping[str, Any] = _extra()

    @classmethod
    def from_data(cls, data: Any) -> Activation:
        r = _Reader(data, "activation")
        return cls(
            order_id=r.text("order_id"),
            tx_hash=r.text("tx_hash", ""),
            cost=r.decimal("cost"),
            message=r.text("message", ""),
            extra=r.extra(),
        )


@dataclass(frozen=True)
class AddressCheck(_Model):
    address: str
    is_activated: bool
    need_activate: bool
    transfer_count: int
    extra: Mapping[str, Any] = _extra()

    @classmethod
    def from_data(cls, data: Any) -> AddressCheck:
        r = _Reader(data, "address check")
        return cls(
            address=r.text("address"),
            is_activated=r.flag("is_activated"),
            need_activate=r.flag("need_activate"),
            transfer_count=r.integer("transfer_count"),
            extra=r.extra(),
        )


@dataclass(frozen=True)
class Order(_Model):
    """An order record; only id and status are guaranteed, the rest as the service tells.

    Poll until ``status.is_terminal()``; ``tx_hash`` is set once the status is success.
    """

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

    @classmethod
    def from_data(cls, data: Any) -> Order:
        r = _Reader(data, "order")
        raw_status = r.text("status")
        try:
            status = OrderStatus(raw_status)
        except ValueError:
            raise UnexpectedResponseError(
                f"order.status: unknown order status {raw_status[:40]!r}"
            ) from None
        return cls(
            order_id=r.text("order_id"),
            status=status,
            tx_hash=r.text("tx_hash", ""),
            cost=r.opt_decimal("cost"),
            energy_amount=r.opt_integer("energy_amount"),
            rent_time=r.opt_decimal("rent_time"),
            target_address=r.opt_text("target_address"),
            to_address=r.opt_text("to_address"),
            kind=r.opt_text("kind"),
            activation_cost=r.opt_decimal("activation_cost"),
            created_at=r.opt_moment("created_at"),
            updated_at=r.opt_moment("updated_at"),
            extra=r.extra(),
        )


@dataclass(frozen=True)
class MonitoredAddress(_Model):
    address: str
    label: str
    tokens: tuple[str, ...]
    is_active: bool
    total_callbacks: int
    last_callback_at: datetime | None
    created_at: datetime | None
    extra: Mapping[str, Any] = _extra()

    @classmethod
    def from_data(cls, data: Any) -> MonitoredAddress:
        r = _Reader(data, "monitored address")
        return cls(
            address=r.text("address"),
            label=r.text("label", ""),
            tokens=r.str_tuple("tokens"),
            is_active=r.flag("is_active"),
            total_callbacks=r.integer("total_callbacks", 0),
            last_callback_at=r.opt_moment("last_callback_at"),
            created_at=r.opt_moment("created_at"),
            extra=r.extra(),
        )


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
class MonitorRegistration(_Model):
    """What the add-address call answers: the address, its state and the callback URL."""

    address: str
    status: str
    webhook_url: str
    extra: Mapping[str, Any] = _extra()

    @classmethod
    def from_data(cls, data: Any) -> MonitorRegistration:
        r = _Reader(data, "monitor registration")
        return cls(
            address=r.text("address"),
            status=r.text("status"),
            webhook_url=r.text("webhook_url", ""),
            extra=r.extra(),
        )


@dataclass(frozen=True)
class MonitorStats(_Model):
    total_addresses: int
    active_addresses: int
    total_callbacks: int
    success_callbacks: int
    failed_callbacks: int
    extra: Mapping[str, Any] = _extra()

    @classmethod
    def from_data(cls, data: Any) -> MonitorStats:
        r = _Reader(data, "monitor stats")
        return cls(
            total_addresses=r.integer("total_addresses"),
            active_addresses=r.integer("active_addresses"),
            total_callbacks=r.integer("total_callbacks"),
            success_callbacks=r.integer("success_callbacks"),
            failed_callbacks=r.integer("failed_callbacks"),
            extra=r.extra(),
        )


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
