"""Property tests: envelope parsing never crashes, and the address codec is tight."""

from __future__ import annotations

import contextlib
import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_provider_tronenergy.client import (
    TronEnergyError,
    UnexpectedResponseError,
    ValidationError,
    models,
)
from airflow_provider_tronenergy.client import validation as check
from airflow_provider_tronenergy.client.core import Call, RequestCore
from airflow_provider_tronenergy.client.models import (
    Account,
    Activation,
    AddressCheck,
    MonitoredAddressPage,
    MonitorRegistration,
    MonitorStats,
    Order,
    Price,
    Purchase,
    SmartPurchase,
    TransferEvent,
)
from support.clients import API_KEY, API_SECRET
from tronenergy_protocol.address import (
    ALPHABET,
    AddressError,
    decode_address,
    encode_address,
)
from tronenergy_protocol.codes import ErrorCode

CORE = RequestCore("http://127.0.0.1:1/v1", API_KEY, API_SECRET)

PARSERS: list[tuple[Any, bool | None]] = [
    (Account.from_data, False), (Price.from_data, False), (Purchase.from_data, False),
    (SmartPurchase.from_data, False), (Activation.from_data, True),
    (AddressCheck.from_data, False), (Order.from_data, False),
    (MonitorRegistration.from_data, False), (MonitorStats.from_data, False),
    (lambda data: MonitoredAddressPage.from_data(data, page=1, page_size=20), False),
    (lambda data: data, None), (lambda data: None, False),
]
FIELD_NAMES = [
    "order_id", "tx_hash", "cost", "energy_amount", "status", "rent_time", "created_at",
    "updated_at", "activated", "address", "is_activated", "need_activate", "transfer_count",
    "balance", "available_balance", "frozen_amount", "pending_orders_count", "user_id",
    "username", "recharge_address", "price_65k_1hour", "price_per_10k", "min_energy",
    "max_energy", "energy_per_transfer", "total", "addresses", "label", "tokens", "is_active",
    "total_callbacks", "last_callback_at", "webhook_url", "message", "kind",
    "activation_cost", "to_address", "target_address", "total_addresses",
]

scalars = (
    st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30)
    | st.sampled_from(["pending", "success", "2025-01-01T00:00:00Z", "1.5", "", "NaN",
                       "1e999999", "T" * 34, API_KEY, f"echo {API_SECRET}"])
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=8), children,
                      max_size=6),
    max_leaves=25,
)
codes = st.sampled_from([*map(int, ErrorCode), 0, 10000]) | json_values
envelopes = st.fixed_dictionaries(
    {},
    optional={"success": st.booleans() | json_values, "code": codes,
              "message": st.text(max_size=40) | st.just(API_KEY) | json_values,
              "data": json_values},
)
bodies = (
    envelopes.map(lambda value: json.dumps(value).encode())
    | json_values.map(lambda value: json.dumps(value).encode())
    | st.binary(max_size=60)
    | st.sampled_from([b"", b"NaN", b'{"success": true, "data": Infinity}', b"[" * 5000,
                       b'{"success":true,"code":10000,"data":{"cost":1e999999999}}'])
)
statuses = st.sampled_from([200, 201, 204, 301, 400, 401, 402, 404, 409, 418, 429, 500, 503]) \
    | st.integers(min_value=100, max_value=599)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(body=bodies, status=statuses, parser=st.sampled_from(PARSERS),
       retry_after=st.none() | st.text(max_size=12))
def test_any_answer_gives_a_result_or_a_clear_error(
    body: bytes, status: int, parser: tuple[Any, bool | None], retry_after: str | None
) -> None:
    parse, flat = parser
    call: Call[Any] = Call("POST", "/energy/buy", parse, flat=flat)
    headers = {} if retry_after is None else {"Retry-After": retry_after}
    try:
        CORE.decode(call, CORE.prepare(call), status, headers, body)
    except TronEnergyError as error:
        text = str(error)
        assert text and f"HTTP {status}" in text and "POST /v1/energy/buy" in text
        assert API_KEY not in text and API_SECRET not in text
        assert not isinstance(error, ValidationError)
    else:
        assert 200 <= status < 300, "a failure status must never read as success"


@settings(max_examples=200, deadline=None)
@given(payload=json_values)
def test_model_readers_never_crash(payload: Any) -> None:
    for parse, _ in PARSERS[:10]:
        try:
            result = parse(payload)
        except TronEnergyError:
            continue
        json.dumps(result.to_dict())  # whatever was accepted serialises
    with contextlib.suppress(TronEnergyError):
        TransferEvent.from_payload(payload)


@settings(max_examples=200, deadline=None)
@given(
    amount=st.decimals(allow_nan=False, allow_infinity=False, places=6,
                       min_value=Decimal("0.000001"), max_value=Decimal("99999999999.999999")),
    extra=st.dictionaries(st.text(max_size=8).filter(lambda k: k not in FIELD_NAMES),
                          json_values, max_size=3),
)
def test_amounts_stay_exact_and_extras_survive(amount: Decimal, extra: dict[str, Any]) -> None:
    body = json.dumps({"success": True, "code": 10000, "message": "", "data": {
        "order_id": "o1", "tx_hash": "", "cost": "__AMOUNT__", **extra}})
    raw = body.replace('"__AMOUNT__"', format(amount, "f")).encode()
    call: Call[Purchase] = Call("POST", "/energy/buy", Purchase.from_data)
    purchase = CORE.decode(call, CORE.prepare(call), 200, {}, raw)
    assert purchase.cost == amount and isinstance(purchase.cost, Decimal)
    assert Decimal(purchase.to_dict()["cost"]) == amount
    assert set(purchase.extra) == set(extra)
    json.dumps(purchase.to_dict())


@settings(max_examples=200, deadline=None)
@given(amount=st.one_of(
    st.decimals(allow_nan=False, allow_infinity=False, max_value=Decimal(0)),
    st.decimals(allow_nan=False, allow_infinity=False, min_value=Decimal("1e11")),
    st.decimals(allow_nan=False, allow_infinity=False, places=9, min_value=Decimal("-1e12"),
                max_value=Decimal("1e12")).filter(lambda d: d != d.quantize(Decimal("1e-6"))),
    st.sampled_from([Decimal("1e400"), Decimal("1e-400"), Decimal("-1e400")]),
))
def test_a_cost_that_is_no_cost_is_unreadable(amount: Decimal) -> None:
    """Issue 22: not positive, not finite-and-sane, or finer than a sun: never a purchase."""
    raw = (b'{"success":true,"code":10000,"message":"","data":{"order_id":"o1","tx_hash":"",'
           b'"cost":' + str(amount).encode() + b"}}")
    call: Call[Purchase] = Call("POST", "/energy/buy", Purchase.from_data)
    with pytest.raises(UnexpectedResponseError, match=r"purchase\.cost: "):
        CORE.decode(call, CORE.prepare(call), 200, {}, raw)


@given(account_id=st.binary(min_size=20, max_size=20))
def test_address_round_trip(account_id: bytes) -> None:
    address = encode_address(account_id)
    assert len(address) == 34 and address.startswith("T")
    assert decode_address(address) == b"\x41" + account_id
    assert check.address(address, "address") == address
    assert encode_address(b"\x41" + account_id) == address


@given(account_id=st.binary(min_size=20, max_size=20), data=st.data())
def test_any_single_character_change_is_rejected(account_id: bytes, data: st.DataObject) -> None:
    address = encode_address(account_id)
    index = data.draw(st.integers(min_value=0, max_value=33), label="index")
    replacement = data.draw(
        st.sampled_from(ALPHABET + "0OIl+/ -é").filter(lambda c: c != address[index]),
        label="replacement",
    )
    changed = address[:index] + replacement + address[index + 1:]
    with pytest.raises(AddressError):
        decode_address(changed)
    with pytest.raises(ValidationError) as info:
        check.address(changed, "target_address")
    assert info.value.field == "target_address"


def test_jsonable_handles_every_model_value() -> None:
    assert models.jsonable({"a": (Decimal("1.50"), None)}) == {"a": ["1.50", None]}
