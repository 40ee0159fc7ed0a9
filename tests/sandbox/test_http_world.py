"""The world model (decisions.md section 5): order life, balance accounting, estimates.

The sandbox here runs on a clock the test moves by hand (the world's ``clock``), so
that every order state is observed deterministically; all traffic is still HTTP.
"""

from __future__ import annotations

import re
import time
from decimal import Decimal
from typing import Any

import pytest

from tronenergy_protocol.address import random_address

HEX64 = re.compile(r"^[0-9a-f]{64}$")
PROCESSING_AFTER = 1.0  # seconds after purchase at time-scale 1 (sandbox/orders.py)
SUCCESS_AFTER = 3.0
TIME_SCALE = 1.0


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds * TIME_SCALE


@pytest.fixture(scope="module")
def world(start_sandbox, signer):
    server = start_sandbox(time_scale=TIME_SCALE, balance=Decimal("1000"))
    clock = Clock()
    server.state.world.clock = clock
    api = signer(server)
    api.clock = clock
    return api


@pytest.fixture(autouse=True)
def settled(world):
    """Each test starts with no order in flight: earlier tests' orders have completed."""
    world.clock.advance(SUCCESS_AFTER * 2)
    assert account(world)["pending_orders_count"] == 0


def account(api) -> dict[str, Any]:
    return api.account()


def delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    return {k: after[k] - before[k] for k in ("balance", "available_balance", "frozen_amount",
                                               "pending_orders_count")}


def order(api, order_id: str) -> dict[str, Any]:
    data: dict[str, Any] = api.get(f"/v1/energy/order/{order_id}").ok()
    return data


def test_order_life_and_balance(world):
    target = world.activated()
    start = account(world)
    placed = world.post("/v1/energy/buy", {"target_address": target}).ok()
    cost = Decimal("2.925")
    assert placed["cost"] == cost and placed["tx_hash"] == ""

    first = order(world, placed["order_id"])
    assert first["status"] == "pending" and first["tx_hash"] == ""
    assert delta(start, account(world)) == {"balance": 0, "available_balance": -cost,
                                            "frozen_amount": cost, "pending_orders_count": 1}

    world.clock.advance(PROCESSING_AFTER)
    second = order(world, placed["order_id"])
    assert second["status"] == "processing" and second["tx_hash"] == ""
    assert delta(start, account(world)) == {"balance": 0, "available_balance": -cost,
                                            "frozen_amount": cost, "pending_orders_count": 1}

    world.clock.advance(SUCCESS_AFTER - PROCESSING_AFTER)
    done = order(world, placed["order_id"])
    assert done["status"] == "success" and HEX64.match(done["tx_hash"])
    assert done["updated_at"] >= first["updated_at"]
    assert delta(start, account(world)) == {"balance": -cost, "available_balance": -cost,
                                            "frozen_amount": 0, "pending_orders_count": 0}
    # Nothing moves twice.
    world.clock.advance(100)
    assert order(world, placed["order_id"]) == done
    assert delta(start, account(world))["balance"] == -cost


@pytest.mark.parametrize(("action", "advance", "status"),
                         [("fail", 0, "failed"), ("fail", PROCESSING_AFTER, "failed"),
                          ("cancel", 0, "cancelled")])
def test_fail_and_cancel_release_the_frozen_cost(world, action, advance, status):
    target = world.activated()
    start = account(world)
    placed = world.post("/v1/energy/buy", {"target_address": target, "energy_amount": 100000,
                                           "rent_time": 0.25}).ok()
    assert placed["cost"] == Decimal("3.6")
    assert delta(start, account(world))["frozen_amount"] == Decimal("3.6")
    world.clock.advance(advance)
    ended = world.control("POST", f"/orders/{placed['order_id']}/{action}")
    assert ended["status"] == status
    assert delta(start, account(world)) == {"balance": 0, "available_balance": 0,
                                            "frozen_amount": 0, "pending_orders_count": 0}
    world.clock.advance(SUCCESS_AFTER * 2)  # an ended order never completes
    final = order(world, placed["order_id"])
    assert final["status"] == status and final["tx_hash"] == ""
    assert delta(start, account(world))["balance"] == 0


def test_cancel_only_from_pending(world):
    target = world.activated()
    placed = world.post("/v1/energy/buy", {"target_address": target}).ok()
    world.clock.advance(PROCESSING_AFTER)
    world.control("POST", f"/orders/{placed['order_id']}/cancel", status=400)
    assert order(world, placed["order_id"])["status"] == "processing"
    world.clock.advance(SUCCESS_AFTER)
    assert order(world, placed["order_id"])["status"] == "success"
    world.control("POST", f"/orders/{placed['order_id']}/cancel", status=400)
    world.control("POST", f"/orders/{placed['order_id']}/fail", status=400)
    assert order(world, placed["order_id"])["status"] == "success"
    world.control("POST", "/orders/nope/cancel", status=404)


def test_pending_count_counts_every_order_in_flight(world):
    target = world.activated()
    start = account(world)
    ids = [world.post("/v1/energy/buy", {"target_address": target}).ok()["order_id"]
           for _ in range(3)]
    after = delta(start, account(world))
    assert after["pending_orders_count"] == 3
    assert after["frozen_amount"] == Decimal("8.775")
    world.control("POST", f"/orders/{ids[0]}/cancel")
    assert delta(start, account(world))["pending_orders_count"] == 2
    world.clock.advance(SUCCESS_AFTER)
    assert delta(start, account(world)) == {"balance": Decimal("-5.85"),
                                            "available_balance": Decimal("-5.85"),
                                            "frozen_amount": 0, "pending_orders_count": 0}


@pytest.mark.parametrize(("path", "body"), [
    ("/v1/energy/auto-buy", {"from_address": "SENDER", "to_address": "TO"}),
    ("/v1/energy/smart-buy", {"receiver_address": "SENDER", "to_address": "TO"}),
])
@pytest.mark.parametrize(("holder", "energy"), [(True, 65000), (False, 131000)])
def test_estimates_by_token_holding(world, path, body, holder, energy):
    sender = world.activated()
    to = world.activated()
    if holder:
        world.control("POST", f"/addresses/{to}/holder")
    replace = {"SENDER": sender, "TO": to}
    data = world.post(path, {k: replace[v] for k, v in body.items()}).ok()
    assert data["energy_amount"] == energy
    assert data["cost"] == Decimal(energy * 45) / 1_000_000  # 45 sun per energy for 1 h
    recorded = order(world, data["order_id"])
    assert recorded["energy_amount"] == energy and recorded["target_address"] == sender


def test_holding_another_token_does_not_count(world):
    to = world.activated()
    world.control("POST", f"/addresses/{to}/holder", {"token": "BTT"})
    data = world.post("/v1/energy/auto-buy", {"from_address": world.activated(),
                                              "to_address": to}).ok()
    assert data["energy_amount"] == 131000


def test_a_transfer_makes_the_recipient_a_holder(world):
    to = random_address()
    world.control("POST", "/transfers", {"from": random_address(), "to": to, "amount": "5",
                                         "token": "USDT"})
    data = world.post("/v1/energy/auto-buy", {"from_address": world.activated(),
                                              "to_address": to}).ok()
    assert data["energy_amount"] == 65000


def test_activation_costs_1_1_trx_and_activates(world):
    address = random_address()
    assert world.post("/v1/energy/check-address", {"address": address}).ok()[
        "is_activated"] is False
    world.post("/v1/energy/buy", {"target_address": address}).error(40012, 400)
    start = account(world)
    flat = world.post("/v1/energy/activate", {"address": address}).json
    assert flat["success"] is True and flat["cost"] == Decimal("1.1")
    assert delta(start, account(world)) == {"balance": Decimal("-1.1"),
                                            "available_balance": Decimal("-1.1"),
                                            "frozen_amount": 0, "pending_orders_count": 0}
    check = world.post("/v1/energy/check-address", {"address": address}).ok()
    assert check["is_activated"] is True and check["need_activate"] is False
    recorded = order(world, flat["order_id"])
    assert recorded["status"] == "success" and recorded["tx_hash"] == flat["tx_hash"]
    assert recorded["cost"] == Decimal("1.1") and recorded["target_address"] == address
    world.post("/v1/energy/activate", {"address": address}).error(40013, 400)
    world.post("/v1/energy/buy", {"target_address": address}).ok()  # delegable now
    assert account(world)["balance"] == start["balance"] - Decimal("1.1")


def test_smart_buy_activates_and_charges_1_1_more(world):
    receiver = world.activated()
    to = random_address()
    start = account(world)
    data = world.post("/v1/energy/smart-buy", {"receiver_address": receiver,
                                               "to_address": to, "rent_time": 24}).ok()
    energy_cost = Decimal(131000 * 90) / 1_000_000  # 24 h: 90 sun per energy
    assert data == {"order_id": data["order_id"], "activated": True, "energy_amount": 131000,
                    "cost": energy_cost + Decimal("1.1")}
    assert data["cost"] == Decimal("12.89")
    assert delta(start, account(world)) == {"balance": Decimal("-1.1"),
                                            "available_balance": -data["cost"],
                                            "frozen_amount": energy_cost,
                                            "pending_orders_count": 1}
    assert world.post("/v1/energy/check-address", {"address": to}).ok()["is_activated"] is True
    world.clock.advance(SUCCESS_AFTER)
    assert delta(start, account(world))["balance"] == -data["cost"]
    again = world.post("/v1/energy/smart-buy", {"receiver_address": receiver,
                                                "to_address": to}).ok()
    assert again["activated"] is False and again["cost"] == Decimal("5.895")


@pytest.mark.parametrize(("energy", "rent_time", "cost"), [
    (65000, 1, "2.925"), (65000, 0.25, "2.34"), (65000, 24, "5.85"), (32001, 1, "1.440045"),
    (131000, 1, "5.895"), (5000000, 24, "450"), (4999999, 0.25, "179.999964"),
])
def test_costs_are_exact(world, energy, rent_time, cost):
    data = world.post("/v1/energy/buy", {"target_address": world.activated(),
                                         "energy_amount": energy, "rent_time": rent_time}).ok()
    assert data["cost"] == Decimal(cost)
    world.control("POST", f"/orders/{data['order_id']}/cancel")


def set_available(api, available: Decimal) -> None:
    """Set the balance so that exactly ``available`` TRX is free."""
    frozen = account(api)["frozen_amount"]
    api.control("POST", "/balance", {"balance": str(frozen + available)})
    assert account(api)["available_balance"] == available


def test_insufficient_balance_orders_nothing(world):
    target = world.activated()
    original = account(world)["balance"]
    try:
        set_available(world, Decimal("2.924999"))
        before = world.orders()
        message = world.post("/v1/energy/buy", {"target_address": target}).error(40020, 402)
        assert "insufficient" in message
        world.post("/v1/energy/buy-count", {"target_address": target}).error(40020, 402)
        world.post("/v1/energy/rent", {"target_address": target}).error(40020, 402)
        world.post("/v1/energy/auto-buy", {"from_address": target,
                                           "to_address": world.holder()}).error(40020, 402)
        assert world.orders() == before
        assert account(world)["available_balance"] == Decimal("2.924999")

        set_available(world, Decimal("2.925"))  # exactly enough
        world.post("/v1/energy/buy", {"target_address": target}).ok()
        assert account(world)["available_balance"] == 0
        before = world.orders()

        # Smart-buy: the energy alone would fit, energy + activation does not.
        to = random_address()
        set_available(world, Decimal("6.994999"))
        world.post("/v1/energy/smart-buy", {"receiver_address": target,
                                            "to_address": to}).error(40020, 402)
        assert world.post("/v1/energy/check-address", {"address": to}).ok()[
            "is_activated"] is False  # nothing happened, not even the activation
        set_available(world, Decimal("1.099999"))
        world.post("/v1/energy/activate", {"address": to}).error(40020, 402)
        assert world.orders() == before
    finally:
        world.control("POST", "/balance", {"balance": str(original + 1000)})


def test_real_time_progression(signed):
    """On the shared fast sandbox (time-scale 0.01), an order really reaches success."""
    placed = signed.post("/v1/energy/buy", {"target_address": signed.activated()}).ok()
    seen: list[str] = []
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        current = signed.get(f"/v1/energy/order/{placed['order_id']}").ok()
        if not seen or seen[-1] != current["status"]:
            seen.append(current["status"])
        if current["status"] == "success":
            assert HEX64.match(current["tx_hash"])
            break
        assert current["tx_hash"] == ""
        time.sleep(0.005)
    order_of_life = ["pending", "processing", "success"]
    assert seen[-1] == "success"
    assert seen == sorted(seen, key=order_of_life.index)  # never backwards
