"""Request validation: addresses, rent_time sets, bounds, JSON types, pagination."""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from typing import Any

import pytest

from tronenergy_protocol.address import random_address

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"  # a real, valid mainnet address


def base58check(payload: bytes) -> str:
    """Encoded by hand here, independently of the codec under test."""
    raw = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    number, out = int.from_bytes(raw, "big"), ""
    while number:
        number, rest = divmod(number, 58)
        out = ALPHABET[rest] + out
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + out


def one_char_changed(address: str, index: int) -> str:
    old = address[index]
    new = ALPHABET[(ALPHABET.index(old) + 1) % 58]
    return address[:index] + new + address[index + 1:]


WRONG_PREFIX = [base58check(bytes([0x40]) + b"\xff" * 20),  # 34 chars, starts with T,
                base58check(bytes([0x42]) + b"\xff" * 20)]  # good checksum, prefix not 0x41
BAD_ADDRESSES = [
    *(one_char_changed(USDT, i) for i in (1, 10, 20, 33)),
    *WRONG_PREFIX,
    "A" + USDT[1:],  # does not start with T
    base58check(b"\x00" + b"\xff" * 20),  # a valid base58check (bitcoin-style) address
    USDT[:-1] + "0",  # 0, O, I and l are not base58
    USDT[:-1] + "O",
    USDT[:-1] + "I",
    USDT[:-1] + "l",
    USDT[:-1] + "é",
    USDT[:-1],  # 33 characters
    USDT + "1",  # 35 characters
    "",
    "T",
    "T" * 34,
    "0x" + "ab" * 20,
]


def test_the_bad_addresses_are_what_they_claim():
    assert base58check(bytes([0x41]) + bytes.fromhex(
        "a614f803b6fd780986a42c78ec9c7f77e6ded13c")) == USDT
    for address in WRONG_PREFIX:
        assert len(address) == 34 and address.startswith("T")
    for index in (1, 10, 20, 33):
        changed = one_char_changed(USDT, index)
        assert len(changed) == 34 and changed.startswith("T") and changed != USDT


@pytest.fixture(scope="module")
def ready(signed) -> dict[str, str]:
    return {"active": signed.activated(), "holder": signed.holder()}


ADDRESS_FIELDS = [
    ("/v1/energy/buy", "target_address", {}),
    ("/v1/energy/rent", "target_address", {}),
    ("/v1/energy/buy-count", "target_address", {}),
    ("/v1/energy/auto-buy", "from_address", {"to_address": "holder"}),
    ("/v1/energy/auto-buy", "to_address", {"from_address": "active"}),
    ("/v1/energy/smart-buy", "receiver_address", {"to_address": "holder"}),
    ("/v1/energy/smart-buy", "to_address", {"receiver_address": "active"}),
    ("/v1/energy/smart-buy", "from_address", {"receiver_address": "active",
                                              "to_address": "holder"}),
    ("/v1/energy/check-address", "address", {}),
    ("/v1/energy/activate", "address", {}),
    ("/v1/tron-monitor/addresses", "address", {"webhook_url": "http://127.0.0.1:9/h"}),
]


def fill(ready: dict[str, str], others: dict[str, str]) -> dict[str, Any]:
    return {k: ready.get(v, v) for k, v in others.items()}


@pytest.mark.parametrize(("path", "field", "others"), ADDRESS_FIELDS)
def test_invalid_addresses_are_40011(signed, ready, path, field, others):
    before = len(signed.orders())
    for bad in BAD_ADDRESSES:
        message = signed.post(path, {field: bad, **fill(ready, others)}).error(40011, 400)
        assert field in message, (bad, message)
    assert len(signed.orders()) == before


def test_invalid_address_in_a_path(signed):
    for bad in (one_char_changed(USDT, 5), *WRONG_PREFIX):
        signed.delete(f"/v1/tron-monitor/addresses/{bad}").error(40011, 400)


@pytest.mark.parametrize(("path", "field", "others"), ADDRESS_FIELDS)
def test_address_of_the_wrong_type_is_40010(signed, ready, path, field, others):
    for bad in (12345, ["T"], {"a": USDT}, True):
        message = signed.post(path, {field: bad, **fill(ready, others)}).error(40010, 400)
        assert field in message


def test_required_addresses(signed, ready):
    cases = [("/v1/energy/buy", {}, "target_address"),
             ("/v1/energy/auto-buy", {"to_address": ready["holder"]}, "from_address"),
             ("/v1/energy/auto-buy", {"from_address": ready["active"]}, "to_address"),
             ("/v1/energy/smart-buy", {"to_address": ready["holder"]}, "receiver_address"),
             ("/v1/energy/smart-buy", {"receiver_address": ready["active"]}, "to_address"),
             ("/v1/energy/check-address", {"address": None}, "address"),
             ("/v1/tron-monitor/addresses", {"webhook_url": "http://x.example/h"}, "address")]
    for path, body, field in cases:
        assert field in signed.post(path, body).error(40010, 400)


# -- rent_time --------------------------------------------------------------------

PURCHASES = [
    ("/v1/energy/buy", {"target_address": "active"}),
    ("/v1/energy/rent", {"target_address": "active"}),
    ("/v1/energy/buy-count", {"target_address": "active"}),
    ("/v1/energy/auto-buy", {"from_address": "active", "to_address": "holder"}),
    ("/v1/energy/smart-buy", {"receiver_address": "active", "to_address": "holder"}),
]


@pytest.mark.parametrize("rent_time", ["0.08", "0.17", "1", "1.0", "1.00"])
def test_price_accepts_its_rent_times(signed, rent_time):
    data = signed.get(f"/v1/energy/price?rent_time={rent_time}").ok()
    assert data["rent_time"] == Decimal(rent_time)


@pytest.mark.parametrize("rent_time", ["0.25", "24", "2", "0", "-1", "0.1", "abc", "NaN",
                                       "Infinity", "1e999999999", "0.080001", "%20"])
def test_price_rejects_other_rent_times(signed, rent_time):
    assert "rent_time" in signed.get(f"/v1/energy/price?rent_time={rent_time}").error(40010, 400)


@pytest.mark.parametrize(("path", "body"), PURCHASES)
def test_purchases_accept_their_rent_times(signed, ready, path, body):
    for rent_time in ("0.25", "1", "24", "24.0"):
        raw = json.dumps(fill(ready, body))[:-1] + f', "rent_time": {rent_time}}}'
        signed.post(path, raw=raw.encode()).ok()


@pytest.mark.parametrize(("path", "body"), PURCHASES)
def test_purchases_reject_other_rent_times(signed, ready, path, body):
    before = len(signed.orders())
    for rent_time in (0.08, 0.17, 2, 0, -1, 48, 0.2500001, "1", "0.25", True, [1], {"h": 1}):
        message = signed.post(path, {**fill(ready, body), "rent_time": rent_time}).error(
            40010, 400)
        assert "rent_time" in message
    assert len(signed.orders()) == before


# -- energy, count -----------------------------------------------------------------


@pytest.mark.parametrize(("energy", "ok"), [(31999, False), (32000, True), (32001, True),
                                            (4999999, True), (5000000, True),
                                            (5000001, False), (0, False), (-65000, False)])
def test_energy_bounds(signed, ready, energy, ok):
    reply = signed.post("/v1/energy/buy", {"target_address": ready["active"],
                                           "energy_amount": energy, "rent_time": 0.25})
    if ok:
        reply.ok()
    else:
        assert "energy_amount" in reply.error(40010, 400)


@pytest.mark.parametrize(("count", "ok"), [(1, True), (2, True), (76, True), (77, False),
                                           (0, False), (-1, False)])
def test_count_bounds(signed, ready, count, ok):
    reply = signed.post("/v1/energy/buy-count", {"target_address": ready["active"],
                                                 "count": count, "rent_time": 0.25})
    if ok:
        assert reply.ok()["energy_amount"] == 65000 * count
    else:
        assert "count" in reply.error(40010, 400)


# -- JSON types ---------------------------------------------------------------------


@pytest.mark.parametrize(("field", "value"), [
    ("energy_amount", "65000"), ("energy_amount", True), ("energy_amount", 65000.5),
    ("energy_amount", [65000]), ("energy_amount", {"v": 65000}),
    ("rent_time", "1"), ("rent_time", False),
])
def test_wrong_types_in_buy(signed, ready, field, value):
    body = {"target_address": ready["active"], field: value}
    assert field in signed.post("/v1/energy/buy", body).error(40010, 400)


@pytest.mark.parametrize("value", ["3", True, False, 1.5, [1], {"n": 1}])
def test_wrong_types_for_count(signed, ready, value):
    body = {"target_address": ready["active"], "count": value}
    assert "count" in signed.post("/v1/energy/buy-count", body).error(40010, 400)


def test_an_integral_number_is_an_integer(signed, ready):
    raw = f'{{"target_address": "{ready["active"]}", "energy_amount": 65000.0}}'
    assert signed.post("/v1/energy/buy", raw=raw.encode()).ok()["cost"] == Decimal("2.925")
    raw = f'{{"target_address": "{ready["active"]}", "energy_amount": 6.5e4}}'
    signed.post("/v1/energy/buy", raw=raw.encode()).ok()


@pytest.mark.parametrize("path", ["/v1/energy/buy", "/v1/energy/rent", "/v1/energy/auto-buy",
                                  "/v1/energy/buy-count", "/v1/energy/smart-buy",
                                  "/v1/energy/check-address", "/v1/energy/activate",
                                  "/v1/tron-monitor/addresses"])
@pytest.mark.parametrize("raw", [b"[]", b'["target_address"]', b'"text"', b"1", b"null",
                                 b"true", b"", b"  ", b"{", b"{'a': 1}", b'{"a": NaN}',
                                 b'{"a": Infinity}', b"\xff\xfe", b"\x00",
                                 b'{"a": 1}{"b": 2}', b'{"a":' * 100000])
def test_bodies_that_are_not_json_objects(signed, path, raw):
    signed.post(path, raw=raw).error(40010, 400)


def test_unknown_fields_are_ignored(signed, ready):
    extra = {"nonsense": [1, {"x": None}], "energy": "lots", "TARGET_ADDRESS": 1}
    signed.post("/v1/energy/buy", {"target_address": ready["active"], **extra}).ok()
    signed.post("/v1/energy/check-address", {"address": random_address(), **extra}).ok()
    signed.post("/v1/tron-monitor/addresses", {"address": random_address(), **extra,
                                               "webhook_url": "http://127.0.0.1:9/h"}).ok(0)


def test_an_explicit_null_means_the_default(signed, ready):
    data = signed.post("/v1/energy/buy", {"target_address": ready["active"],
                                          "energy_amount": None, "rent_time": None}).ok()
    assert data["cost"] == signed.get("/v1/energy/price").ok()["price_65k_1hour"]


# -- pagination and filters -----------------------------------------------------------


@pytest.mark.parametrize(("query", "ok"), [
    ("page_size=1", True), ("page_size=100", True), ("page_size=20", True),
    ("page_size=0", False), ("page_size=101", False), ("page_size=-1", False),
    ("page_size=abc", False), ("page_size=1.5", False), ("page_size=99999999999", False),
    ("page=1", True), ("page=999999", True), ("page=0", False), ("page=-1", False),
    ("page=x", False), ("page=%E2%91%A0", False),
    ("status=active", True), ("status=inactive", True), ("status=deleted", False),
    ("status=ACTIVE", False), ("status=active%20", False),
])
def test_list_query_parameters(signed, query, ok):
    reply = signed.get(f"/v1/tron-monitor/addresses?{query}")
    if ok:
        data = reply.ok(0)
        assert set(data) == {"total", "addresses"}
    else:
        assert query.split("=")[0] in reply.error(40010, 400)


# -- inputs that once crashed or stalled the sandbox ---------------------------------------


@pytest.mark.parametrize(("field", "text"), [
    ("label", '"\\ud800"'), ("webhook_secret", '"a\\udfffb"'),
    ("webhook_url", '"http://127.0.0.1:9/\\ud800"'), ("tokens", '["\\ud800"]'),
])
def test_lone_surrogates_are_40010(signed, field, text):
    body = {"address": random_address(), "webhook_url": "http://127.0.0.1:9/h"}
    raw = json.dumps(body)[:-1] + f', "{field}": {text}}}'
    assert field in signed.post("/v1/tron-monitor/addresses", raw=raw.encode()).error(40010, 400)


def test_lone_surrogate_in_a_control_transfer(signed):
    response = signed.session.post(
        f"{signed.root_url}/sandbox/transfers", timeout=10,
        data=json.dumps({"from": random_address(), "to": random_address(), "amount": "1",
                         "token": "\ud800"}).encode())
    assert response.status_code == 400 and response.json()["code"] == 40010


@pytest.mark.parametrize(("path", "field", "number"), [
    ("/v1/energy/buy", "energy_amount", "1e999999999"),
    ("/v1/energy/buy", "energy_amount", "-1E+999999999"),
    ("/v1/energy/buy", "energy_amount", "1e400"),
    ("/v1/energy/buy-count", "count", "1e999999999"),
    ("/v1/energy/buy-count", "count", "9" * 4299),
    ("/v1/energy/buy-count", "count", "1000000000000000"),
])
def test_huge_numbers_are_40010_at_once(signed, ready, path, field, number):
    raw = f'{{"target_address": "{ready["active"]}", "{field}": {number}}}'
    reply = signed.post(path, raw=raw.encode(), timeout=10)
    assert field in reply.error(40010, 400)
    assert len(reply.text) < 500


@pytest.mark.parametrize("number", ["1e999999999", "1e-999999999", "-0", "1E+1"])
def test_odd_rent_time_numbers(signed, ready, number):
    raw = f'{{"target_address": "{ready["active"]}", "rent_time": {number}}}'
    assert "rent_time" in signed.post("/v1/energy/buy", raw=raw.encode(), timeout=10).error(
        40010, 400)
