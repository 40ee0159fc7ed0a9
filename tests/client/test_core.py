"""The shared core without a network: signing vectors, exact bytes, models, no Airflow."""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import hmac
import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import airflow_provider_tronenergy.client as client_package
from airflow_provider_tronenergy.client import (
    Order,
    OrderStatus,
    Purchase,
    Timeout,
    TransferEvent,
    UnexpectedResponseError,
    models,
)
from airflow_provider_tronenergy.client.core import Call, RequestCore
from airflow_provider_tronenergy.client.endpoints import Endpoints
from airflow_provider_tronenergy.client.wire import encode_json, parse_retry_after
from tronenergy_protocol.signing import string_to_sign

KEY, SECRET = "test-key", "test-secret"


def fixed_core(scheme: str = "v1") -> RequestCore:
    core = RequestCore("https://api.example.com/v1/", KEY, SECRET, scheme)
    core.clock = lambda: 1700000000.9
    return core


def test_signing_vector_from_decisions() -> None:
    assert string_to_sign("v1", "1700000000", "GET", "/v1/energy/account", b"") == (
        b"1700000000\nGET\n/v1/energy/account\n")
    core = fixed_core()
    prepared = core.prepare(Endpoints().get_account())
    headers = core.headers(prepared)
    expected = hmac.new(SECRET.encode(), b"1700000000\nGET\n/v1/energy/account\n",
                        hashlib.sha256).hexdigest()
    assert headers == {"Accept": "application/json", "X-API-Key": KEY,
                       "X-Timestamp": "1700000000", "X-Signature": expected}
    assert prepared.url == "https://api.example.com/v1/energy/account"


def test_signature_covers_query_and_exact_body_bytes() -> None:
    core = fixed_core()
    price = core.prepare(Endpoints().get_price(0.08))
    assert price.target == "/v1/energy/price?rent_time=0.08"
    signed = core.headers(price)["X-Signature"]
    message = b"1700000000\nGET\n/v1/energy/price?rent_time=0.08\n"
    assert signed == hmac.new(SECRET.encode(), message, hashlib.sha256).hexdigest()
    target = "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8"
    buy = core.prepare(Endpoints().buy_energy(target, 65000, 0.25))
    assert buy.body == (b'{"target_address":"TJRabPrwbZy45sbavfcjinPJC18kjpRTv8",'
                        b'"energy_amount":65000,"rent_time":0.25}')
    headers = core.headers(buy)
    assert headers["Content-Type"] == "application/json"
    message = b"1700000000\nPOST\n/v1/energy/buy\n" + buy.body
    assert headers["X-Signature"] == hmac.new(SECRET.encode(), message,
                                              hashlib.sha256).hexdigest()


def test_ts_body_vector() -> None:
    core = fixed_core("ts.body")
    prepared = core.prepare(Endpoints().check_address("TJRabPrwbZy45sbavfcjinPJC18kjpRTv8"))
    message = b"1700000000." + prepared.body
    assert core.headers(prepared)["X-Signature"] == hmac.new(
        SECRET.encode(), message, hashlib.sha256).hexdigest()


def test_query_and_path_encoding() -> None:
    core = fixed_core()
    listing = core.prepare(Endpoints().list_monitored_addresses(2, 50, "inactive"))
    assert listing.target == "/v1/tron-monitor/addresses?page=2&page_size=50&status=inactive"
    order = core.prepare(Endpoints().get_order("a/b c?"))
    assert order.target == "/v1/energy/order/a%2Fb%20c%3F"
    generic = core.prepare(Endpoints().request(
        "get", "wallet/balance", params={"address": "T x", "n": [1, 2], "skip": None,
                                         "flag": True, "amount": Decimal("1.50")}))
    assert generic.method == "GET"
    assert generic.target == "/v1/wallet/balance?address=T%20x&n=1&n=2&flag=true&amount=1.50"


def test_encode_json_is_exact_and_compact() -> None:
    value = {"a": Decimal("0.1"), "b": [1, 2.5, True, None], "c": "é\n", "d": Decimal("1E+2")}
    assert encode_json(value) == b'{"a":0.1,"b":[1,2.5,true,null],"c":"\\u00e9\\n","d":100}'
    assert json.loads(encode_json(value), parse_float=Decimal)["a"] == Decimal("0.1")


def test_generic_request_safety_defaults() -> None:
    endpoints = Endpoints()
    assert endpoints.request("GET", "/x").safety.value == "idempotent"
    assert endpoints.request("POST", "/x").safety.value == "money"
    assert endpoints.request("DELETE", "/x").safety.value == "money"
    assert endpoints.request("POST", "/x", idempotent=True).safety.value == "idempotent"
    assert endpoints.request("GET", "/x", idempotent=False).safety.value == "money"
    assert endpoints.request("POST", "/x", json={"target_address": "Tabc"}).target == "Tabc"


@pytest.mark.parametrize(
    ("header", "expected"),
    [("5", 5.0), (" 0 ", 0.0), ("1.5", 1.5), ("-3", 0.0), ("soon", None), ("nan", None),
     ("inf", None), ("Wed, 15 Nov 2023 22:13:30 GMT", 10.0)],
)
def test_retry_after_header(header: str, expected: float | None) -> None:
    now = datetime(2023, 11, 15, 22, 13, 20, tzinfo=timezone.utc).timestamp()
    assert parse_retry_after(header, now) == expected


def test_timeout_forms() -> None:
    assert Timeout.of(3) == Timeout(3.0, 3.0)
    assert Timeout.of((1, 9)) == Timeout(1.0, 9.0)
    custom = Timeout(2, 4)
    assert Timeout.of(custom) is custom


# -- models -----------------------------------------------------------------------------


def test_order_model_reads_times_status_and_extras() -> None:
    order = Order.from_data({
        "order_id": "o1", "status": "processing", "tx_hash": "", "cost": Decimal("2.925"),
        "energy_amount": 65000, "rent_time": 1,
        "target_address": "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
        "created_at": "2025-11-01T10:00:00Z", "updated_at": "2025-11-01T10:00:03.5+02:00",
        "refund": {"amount": Decimal("0.1")}, "note": "new field",
    })
    assert order.status is OrderStatus.PROCESSING and not order.status.is_terminal()
    assert order.created_at == datetime(2025, 11, 1, 10, tzinfo=timezone.utc)
    assert order.updated_at is not None
    assert order.updated_at.utcoffset() == timedelta(hours=2)
    assert dict(order.extra) == {"refund": {"amount": Decimal("0.1")}, "note": "new field"}
    as_dict = order.to_dict()
    assert as_dict["extra"] == {"refund": {"amount": "0.1"}, "note": "new field"}
    assert as_dict["cost"] == "2.925" and as_dict["rent_time"] == "1"
    assert as_dict["created_at"] == "2025-11-01T10:00:00+00:00"
    assert json.loads(json.dumps(as_dict)) == as_dict
    hash(order)  # frozen results stay hashable despite the extra mapping
    with pytest.raises(AttributeError):
        order.status = OrderStatus.SUCCESS  # type: ignore[misc]


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"order_id": "o", "status": "refunded"}, "unknown order status"),
        ({"status": "success"}, "order.order_id"),
        ({"order_id": "o", "status": "success", "cost": 1.5}, "order.cost"),
        ({"order_id": "o", "status": "success", "cost": True}, "order.cost"),
        ({"order_id": "o", "status": "success", "energy_amount": Decimal("1.5")},
         "order.energy_amount"),
        ({"order_id": "o", "status": "success", "created_at": "yesterday"}, "order.created_at"),
        ([], "expected a JSON object"),
    ],
)
def test_bad_fields_are_named(data: Any, fragment: str) -> None:
    with pytest.raises(UnexpectedResponseError, match=fragment):
        Order.from_data(data)


def test_purchase_keeps_exact_decimals() -> None:
    purchase = Purchase.from_data({"order_id": "o", "tx_hash": "", "cost": Decimal("0.1")})
    assert purchase.cost + purchase.cost + purchase.cost == Decimal("0.3")
    assert purchase.to_dict() == {"order_id": "o", "tx_hash": "", "cost": "0.1",
                                  "energy_amount": None, "extra": {}}


@pytest.mark.parametrize(
    ("model", "label", "absent"),
    [
        (models.Account, "account", {}),
        (models.Price, "price", {}),
        (models.Purchase, "purchase", {"tx_hash": ""}),
        (models.SmartPurchase, "smart purchase", {}),
        (models.Activation, "activation", {"tx_hash": "", "message": ""}),
        (models.AddressCheck, "address check", {}),
        (models.Order, "order", {"tx_hash": ""}),
        (models.MonitoredAddress, "monitored address", {"label": "", "total_callbacks": 0}),
        (models.MonitorRegistration, "monitor registration", {"webhook_url": ""}),
        (models.MonitorStats, "monitor stats", {}),
    ],
)
def test_declared_readers_cover_every_field(model: Any, label: str, absent: dict[str, Any]) -> None:
    """Each model is read from its annotations: every field has a reader, errors name the model."""
    what, steps = models._plan(model)
    assert what == label
    names = [f.name for f in dataclasses.fields(model) if f.name != "extra"]
    assert sorted(name for name, _, _, _ in steps) == sorted(names)
    assert {name: default[0] for name, _, default, _ in steps if default} == absent
    with pytest.raises(UnexpectedResponseError, match=f"^{label}: expected a JSON object"):
        model.from_data([])


def test_order_reads_status_before_the_rest() -> None:
    with pytest.raises(UnexpectedResponseError, match=r"^order\.status: expected a string"):
        Order.from_data({})


def test_transfer_event_from_callback_body() -> None:
    body = (b'{"event":"tron.transfer","timestamp":1700000000,"data":{"tx_hash":"' + b"ab" * 32
            + b'","from":"TA","to":"TB","amount":"12.345678","token":"TRX",'
            b'"block_number":68000001,"block_timestamp":1700000000123,"memo":"x"}}')
    event = TransferEvent.from_json(body)
    assert event.amount == Decimal("12.345678") and event.token == "TRX"
    assert (event.from_address, event.to_address) == ("TA", "TB")
    assert event.timestamp == datetime.fromtimestamp(1700000000, tz=timezone.utc)
    assert event.block_timestamp.microsecond == 123000
    assert dict(event.extra) == {"memo": "x"}
    assert event.to_dict()["amount"] == "12.345678"
    with pytest.raises(UnexpectedResponseError):
        TransferEvent.from_json(b"{not json")


# -- no Airflow in the client -----------------------------------------------------------


def test_client_imports_no_airflow() -> None:
    code = ("import sys, airflow_provider_tronenergy.client; "
            "bad = sorted(m for m in sys.modules if m == 'airflow' or m.startswith('airflow.')); "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    for path in Path(client_package.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n == "airflow" or n.startswith("airflow.") for n in names), path


def test_public_names_are_exported() -> None:
    for name in client_package.__all__:
        assert getattr(client_package, name) is not None
    core = RequestCore("http://h/v1", "k", "s")
    call: Call[Any] = Call("GET", "/x", lambda data: data)
    assert core.prepare(call).url == "http://h/v1/x"
