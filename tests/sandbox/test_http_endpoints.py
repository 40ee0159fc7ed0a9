"""Every /v1 endpoint's happy path and every error code, over real HTTP.

Field names, JSON types and envelopes are checked exactly (spec section 2,
decisions.md sections 2 and 4); amounts are parsed as Decimals and compared
exactly, never as floats.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

import pytest
import requests

from tronenergy_protocol.address import is_valid_address, random_address

HEX64 = re.compile(r"^[0-9a-f]{64}$")
ORDER_FIELDS = {"order_id", "status", "tx_hash", "cost", "energy_amount", "rent_time",
                "target_address", "created_at", "updated_at"}
# Fields the sandbox adds to the order record (documented in /openapi.json).
ORDER_EXTRA_FIELDS = {"kind", "activation_cost", "to_address"}


def is_amount(value: Any) -> bool:
    """An exact JSON number: int or Decimal (parse_float=Decimal), never bool or str."""
    return type(value) in (int, Decimal)


def is_int(value: Any) -> bool:
    return type(value) is int


def utc_iso(text: Any) -> datetime:
    assert isinstance(text, str) and text.endswith("Z"), text
    moment = datetime.fromisoformat(text[:-1] + "+00:00")
    assert moment.tzinfo == timezone.utc
    return moment


# -- happy paths ------------------------------------------------------------------


def test_account_fields_types_and_exact_values(start_sandbox, signer):
    server = start_sandbox(balance=Decimal("1000"))
    data = signer(server).get("/v1/energy/account").ok(10000)
    assert set(data) == {"user_id", "username", "balance", "available_balance",
                         "frozen_amount", "pending_orders_count", "recharge_address"}
    assert is_int(data["user_id"])
    assert isinstance(data["username"], str) and "@" in data["username"]
    for name in ("balance", "available_balance", "frozen_amount"):
        assert is_amount(data[name]), name
    assert data["balance"] == Decimal("1000") and data["available_balance"] == Decimal("1000")
    assert data["frozen_amount"] == 0
    assert is_int(data["pending_orders_count"]) and data["pending_orders_count"] == 0
    assert is_valid_address(data["recharge_address"])


@pytest.mark.parametrize(
    ("query", "per_10k", "rent_time"),
    [("", Decimal("0.45"), 1), ("?rent_time=1", Decimal("0.45"), 1),
     ("?rent_time=0.08", Decimal("0.3"), Decimal("0.08")),
     ("?rent_time=0.17", Decimal("0.33"), Decimal("0.17"))],
)
def test_price_signed(signed, query, per_10k, rent_time):
    data = signed.get("/v1/energy/price" + query).ok(10000)
    assert data == {"price_65k_1hour": Decimal("2.925"), "price_per_10k": per_10k,
                    "energy_per_transfer": 65000, "min_energy": 32000, "max_energy": 5000000,
                    "rent_time": rent_time}
    assert is_amount(data["price_65k_1hour"]) and is_amount(data["price_per_10k"])
    for name in ("energy_per_transfer", "min_energy", "max_energy"):
        assert is_int(data[name])
    assert is_amount(data["rent_time"])


def test_price_with_the_key_alone(signed):
    data = signed.get("/v1/energy/price?rent_time=0.08", unsigned=True).ok(10000)
    assert data["price_per_10k"] == Decimal("0.3")


def check_purchase(data: dict[str, Any], cost: Decimal) -> None:
    assert isinstance(data["order_id"], str) and data["order_id"]
    assert data["tx_hash"] == ""  # pending: set only once the order has succeeded
    assert is_amount(data["cost"]) and data["cost"] == cost


def test_buy(signed):
    target = signed.activated()
    reply = signed.post("/v1/energy/buy", {"target_address": target})
    data = reply.ok(10000)
    assert set(data) == {"order_id", "tx_hash", "cost"}
    check_purchase(data, Decimal("2.925"))  # 65,000 energy for 1 h by default
    assert '"cost":2.925' in reply.text.replace(" ", "")  # a JSON number, not a string
    order = signed.get(f"/v1/energy/order/{data['order_id']}").ok(10000)
    assert order["target_address"] == target and order["energy_amount"] == 65000


def test_buy_with_amount_and_rent_time(signed):
    target = signed.activated()
    data = signed.post("/v1/energy/buy", {"target_address": target, "energy_amount": 32001,
                                          "rent_time": 0.25}).ok(10000)
    check_purchase(data, Decimal("1.152036"))  # 32,001 x 36 sun


def test_rent_is_buy_with_energy_amount(signed):
    target = signed.activated()
    data = signed.post("/v1/energy/rent", {"target_address": target, "rent_time": 24}).ok()
    assert set(data) == {"order_id", "tx_hash", "cost", "energy_amount"}
    check_purchase(data, Decimal("5.85"))
    assert data["energy_amount"] == 65000


@pytest.mark.parametrize(("holder", "energy", "cost"),
                         [(True, 65000, Decimal("2.925")), (False, 131000, Decimal("5.895"))])
def test_auto_buy(signed, holder, energy, cost):
    sender = signed.activated()
    recipient = signed.holder() if holder else random_address()
    data = signed.post("/v1/energy/auto-buy",
                       {"from_address": sender, "to_address": recipient}).ok(10000)
    assert set(data) == {"order_id", "tx_hash", "cost", "energy_amount"}
    check_purchase(data, cost)
    assert is_int(data["energy_amount"]) and data["energy_amount"] == energy
    order = signed.get(f"/v1/energy/order/{data['order_id']}").ok()
    assert order["target_address"] == sender  # the sender receives the energy


def test_buy_count(signed):
    target = signed.activated()
    data = signed.post("/v1/energy/buy-count", {"target_address": target, "count": 3}).ok()
    assert set(data) == {"order_id", "tx_hash", "cost", "energy_amount"}
    check_purchase(data, Decimal("8.775"))
    assert data["energy_amount"] == 195000
    default = signed.post("/v1/energy/buy-count", {"target_address": target}).ok()
    assert default["energy_amount"] == 65000 and default["cost"] == Decimal("2.925")


def test_smart_buy_to_an_active_holder(signed):
    receiver = signed.activated()
    data = signed.post("/v1/energy/smart-buy",
                       {"receiver_address": receiver, "to_address": signed.holder()}).ok(10000)
    assert set(data) == {"order_id", "activated", "energy_amount", "cost"}
    assert data["activated"] is False
    assert data["energy_amount"] == 65000 and is_int(data["energy_amount"])
    assert data["cost"] == Decimal("2.925") and is_amount(data["cost"])


def test_smart_buy_activates_an_inactive_recipient(signed):
    receiver = signed.activated()
    recipient = random_address()
    data = signed.post("/v1/energy/smart-buy",
                       {"receiver_address": receiver, "to_address": recipient,
                        "from_address": signed.activated(), "rent_time": 1}).ok(10000)
    assert data["activated"] is True
    assert data["energy_amount"] == 131000
    assert data["cost"] == Decimal("5.895") + Decimal("1.1")
    check = signed.post("/v1/energy/check-address", {"address": recipient}).ok()
    assert check["is_activated"] is True


def test_check_address(signed):
    fresh = random_address()
    data = signed.post("/v1/energy/check-address", {"address": fresh}).ok(10000)
    assert data == {"address": fresh, "is_activated": False, "need_activate": True,
                    "transfer_count": 2}
    holder = signed.holder()
    data = signed.post("/v1/energy/check-address", {"address": holder}).ok(10000)
    assert data == {"address": holder, "is_activated": True, "need_activate": False,
                    "transfer_count": 1}


def test_activate_is_flat(signed):
    address = random_address()
    reply = signed.post("/v1/energy/activate", {"address": address})
    assert reply.status == 200
    body = reply.json
    assert set(body) == {"success", "order_id", "tx_hash", "cost", "message"}  # no code/data
    assert body["success"] is True
    assert isinstance(body["order_id"], str) and body["order_id"]
    assert HEX64.match(body["tx_hash"])
    assert is_amount(body["cost"]) and body["cost"] == Decimal("1.1")
    assert isinstance(body["message"], str) and body["message"]
    check = signed.post("/v1/energy/check-address", {"address": address}).ok()
    assert check["is_activated"] is True and check["need_activate"] is False


def test_order_record(signed):
    target = signed.activated()
    placed = signed.post("/v1/energy/buy", {"target_address": target, "energy_amount": 100000,
                                            "rent_time": 24}).ok()
    order = signed.get(f"/v1/energy/order/{placed['order_id']}").ok(10000)
    assert set(order) >= ORDER_FIELDS
    assert set(order) == ORDER_FIELDS | ORDER_EXTRA_FIELDS
    assert order["order_id"] == placed["order_id"]
    assert order["status"] in ("pending", "processing", "success")
    if order["status"] == "success":
        assert HEX64.match(order["tx_hash"])
    else:
        assert order["tx_hash"] == ""
    assert order["cost"] == Decimal("9") and is_amount(order["cost"])
    assert order["energy_amount"] == 100000 and order["rent_time"] == 24
    assert order["target_address"] == target
    assert utc_iso(order["created_at"]) <= utc_iso(order["updated_at"])
    assert order["kind"] == "buy" and order["to_address"] is None
    assert order["activation_cost"] == 0


def test_monitoring_endpoints(signed):
    address = random_address()
    added = signed.post("/v1/tron-monitor/addresses",
                        {"address": address, "webhook_url": "http://127.0.0.1:9/hook",
                         "label": "payouts"})
    data = added.ok(0)
    assert data == {"address": address, "status": "active",
                    "webhook_url": "http://127.0.0.1:9/hook"}
    assert "added" in added.message

    page = signed.get("/v1/tron-monitor/addresses?page_size=100&status=active").ok(0)
    assert set(page) == {"total", "addresses"} and is_int(page["total"])
    last = -(-page["total"] // 100)  # the newest address is on the last page
    page = signed.get(f"/v1/tron-monitor/addresses?page_size=100&status=active&page={last}"
                      ).ok(0)
    entry = next(a for a in page["addresses"] if a["address"] == address)
    assert set(entry) == {"address", "label", "tokens", "is_active", "total_callbacks",
                          "last_callback_at", "created_at"}
    assert entry["label"] == "payouts" and entry["tokens"] == ["TRX"]
    assert entry["is_active"] is True and entry["total_callbacks"] == 0
    assert entry["last_callback_at"] is None
    utc_iso(entry["created_at"])

    stats = signed.get("/v1/tron-monitor/stats").ok(0)
    assert set(stats) == {"total_addresses", "active_addresses", "total_callbacks",
                          "success_callbacks", "failed_callbacks"}
    assert all(is_int(v) for v in stats.values())
    assert stats["active_addresses"] >= 1

    deleted = signed.delete(f"/v1/tron-monitor/addresses/{address}")
    assert deleted.ok(0) is None and "data" in deleted.json


# -- error codes without faults ------------------------------------------------------


def test_40001_missing_or_unknown_key(signed):
    signed.get("/v1/energy/account", key=None).error(40001, 401)
    signed.get("/v1/energy/account", key="sbx_nope").error(40001, 401)
    signed.get("/v1/energy/price", key=None, unsigned=True).error(40001, 401)
    signed.post("/v1/tron-monitor/addresses", {}, key="").error(40001, 401)


def test_40002_bad_signature(signed):
    signed.get("/v1/energy/account", signature="0" * 64).error(40002, 401)
    signed.get("/v1/energy/account", secret="not-the-secret").error(40002, 401)
    signed.get("/v1/energy/account", signature=None).error(40002, 401)


def test_40003_timestamp(signed):
    signed.get("/v1/energy/account", ts=1700000000).error(40003, 401)
    # No X-Timestamp and no X-Signature at all (only the key) on a signed-only endpoint.
    response = signed.session.get(f"{signed.root_url}/v1/energy/account",
                                  headers={"X-API-Key": signed.api_key}, timeout=10)
    assert (response.status_code, response.json()["code"]) == (401, 40003)


def test_40010_names_the_field(signed):
    target = signed.activated()
    message = signed.post("/v1/energy/buy", {"target_address": target,
                                             "energy_amount": "65000"}).error(40010, 400)
    assert "energy_amount" in message
    message = signed.post("/v1/energy/buy", {}).error(40010, 400)
    assert "target_address" in message
    message = signed.post("/v1/energy/buy-count",
                          {"target_address": target, "count": 0}).error(40010, 400)
    assert "count" in message
    message = signed.get("/v1/energy/price?rent_time=24").error(40010, 400)
    assert "rent_time" in message
    message = signed.get("/v1/tron-monitor/addresses?page_size=101").error(40010, 400)
    assert "page_size" in message


def test_40011_invalid_address(signed):
    message = signed.post("/v1/energy/check-address",
                          {"address": "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u"}).error(40011, 400)
    assert "address" in message
    message = signed.post("/v1/energy/auto-buy", {"from_address": signed.activated(),
                                                  "to_address": "T" * 34}).error(40011, 400)
    assert "to_address" in message
    signed.delete("/v1/tron-monitor/addresses/Tnope").error(40011, 400)


def test_40012_not_activated(signed):
    inactive = random_address()
    before = len(signed.orders())
    signed.post("/v1/energy/buy", {"target_address": inactive}).error(40012, 400)
    signed.post("/v1/energy/buy-count", {"target_address": inactive}).error(40012, 400)
    signed.post("/v1/energy/auto-buy", {"from_address": inactive,
                                        "to_address": signed.holder()}).error(40012, 400)
    signed.post("/v1/energy/smart-buy", {"receiver_address": inactive,
                                         "to_address": signed.holder()}).error(40012, 400)
    assert len(signed.orders()) == before


def test_40013_already_activated(signed):
    signed.post("/v1/energy/activate", {"address": signed.activated()}).error(40013, 400)


def test_40020_insufficient_balance(start_sandbox, signer):
    api = signer(start_sandbox(balance=Decimal("2.924999")))
    target = api.activated()
    message = api.post("/v1/energy/buy", {"target_address": target}).error(40020, 402)
    assert "2.925" in message
    assert api.orders() == []


def test_40040_not_found(signed):
    signed.get(f"/v1/energy/order/{uuid.uuid4().hex}").error(40040, 404)
    signed.delete(f"/v1/tron-monitor/addresses/{random_address()}").error(40040, 404)
    signed.get("/v1/energy/nothing-here").error(40040, 404)


def test_40090_already_monitored(signed):
    body = {"address": random_address(), "webhook_url": "http://127.0.0.1:9/hook"}
    signed.post("/v1/tron-monitor/addresses", body).ok(0)
    reply = signed.post("/v1/tron-monitor/addresses", body)
    reply.error(40090, 409)


@pytest.mark.parametrize("path", ["/v1/energy/account/", "/v1/tron-monitor/stats/",
                                  "/v1/energy/order/abc/", "/v1/", "/v1"])
def test_unknown_paths_are_404_envelopes_not_redirects(signed, path):
    signed.get(path).error(40040, 404)


def test_wrong_method_is_an_error_envelope(signed):
    reply = signed.request("PUT", "/v1/energy/account")
    assert reply.status == 405 and reply.json["success"] is False and reply.json["data"] is None


# -- injected faults ---------------------------------------------------------------


def test_40290_rate_limit_with_retry_after(faults):
    faults.add_fault(kind="rate_limit", path="/energy/account", retry_after=7, count=1)
    reply = faults.get("/v1/energy/account")
    reply.error(40290, 429)
    assert reply.headers["Retry-After"] == "7"
    faults.get("/v1/energy/account").ok()  # count=1: the next request is served
    assert faults.control("GET", "/faults") == []


@pytest.mark.parametrize(("status", "code"), [(500, 50000), (503, 50300)])
def test_injected_server_errors(faults, status, code):
    faults.add_fault(kind="error", path="/energy/price", status=status, count=2)
    faults.get("/v1/energy/price").error(code, status)
    faults.get("/v1/energy/price", unsigned=True).error(code, status)
    faults.get("/v1/energy/price").ok()


def test_fault_after_processing_keeps_the_order(faults):
    target = faults.activated()
    faults.add_fault(kind="error", path="/energy/buy", status=503, after_processing=True,
                     count=1)
    faults.post("/v1/energy/buy", {"target_address": target}).error(50300, 503)
    assert [o["target_address"] for o in faults.orders()].count(target) == 1


def test_fault_path_pattern_and_method(faults):
    faults.add_fault(kind="error", path="/energy/*", method="POST", status=500)
    faults.get("/v1/energy/account").ok()
    faults.get("/v1/tron-monitor/stats").ok(0)
    faults.post("/v1/energy/check-address", {"address": random_address()}).error(50000, 500)
    faults.post("/v1/energy/activate", {"address": random_address()}).error(50000, 500)


def test_drop_closes_the_connection_after_buying(faults):
    target = faults.activated()
    faults.add_fault(kind="drop", path="/energy/buy", count=1)
    before = len(faults.orders())
    with pytest.raises(requests.ConnectionError):
        faults.post("/v1/energy/buy", {"target_address": target})
    orders = faults.orders()
    assert len(orders) == before + 1  # processed, though nobody was told
    assert orders[-1]["target_address"] == target
    faults.post("/v1/energy/buy", {"target_address": target}).ok()  # served again


def test_latency_delays_a_normal_answer(faults):
    faults.add_fault(kind="latency", path="/energy/account", latency_ms=1500, count=2)
    # The answer cannot arrive before 1.5 s, so a 0.3 s read timeout must expire.
    with pytest.raises(requests.ReadTimeout):
        faults.get("/v1/energy/account", timeout=(5, 0.3))
    data = faults.get("/v1/energy/account").ok()  # delayed, then a normal answer
    assert "balance" in data
    assert faults.control("GET", "/faults") == []  # both firings consumed
