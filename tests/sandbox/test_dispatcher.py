"""The sandbox's callback dispatcher, against real receivers over loopback HTTP."""

from __future__ import annotations

import json
import threading

import requests

from support import signed
from support.receiver import RecordingReceiver
from support.sandbox import sandbox_fixture
from support.signed import SignedSession
from tronenergy_protocol.address import random_address
from tronenergy_protocol.signing import sign_callback
from tronenergy_sandbox import SandboxServer

# 10 s / 60 s / 300 s become 20 ms / 120 ms / 600 ms.
TIME_SCALE = 0.002


api = signed.api  # signed calls to this module's sandbox
sandbox = sandbox_fixture(time_scale=TIME_SCALE)


def test_signed_event_fails_twice_then_delivered(sandbox: SandboxServer, api: SignedSession):
    with RecordingReceiver(respond=lambda n: 500 if n < 2 else 200) as receiver:
        address = api.watch(receiver.url, label="hot wallet")
        tx_hash = api.transfer(address, amount="12.5")
        deliveries = receiver.wait_for(3)
        delivered = api.deliveries(1, "delivered")

    for delivery in deliveries:
        assert delivery.headers["content-type"] == "application/json"
        assert delivery.headers["x-signature"] == sign_callback(sandbox.webhook_secret,
                                                                delivery.body)
        event = json.loads(delivery.body)
        assert event["event"] == "tron.transfer"
        assert str(event["timestamp"]) == delivery.headers["x-timestamp"]
        assert event["data"]["tx_hash"] == tx_hash
        assert event["data"]["to"] == address
        assert event["data"]["amount"] == "12.5"
        assert event["data"]["token"] == "TRX"
        assert isinstance(event["data"]["block_number"], int)
        assert isinstance(event["data"]["block_timestamp"], int)

    history = delivered[0]["history"]
    assert [h["status_code"] for h in history] == [500, 500, 200]
    assert history[0]["response_body"] == '{"error": "nope"}'
    gaps = [
        (_ts(history[i + 1]["at"]) - _ts(history[i]["at"])) for i in range(len(history) - 1)
    ]
    # The schedule is 10 s then 60 s, times the time-scale: never earlier than that.
    assert gaps[0] >= 10 * TIME_SCALE * 0.99
    assert gaps[1] >= 60 * TIME_SCALE * 0.99
    stats = api.data("GET", "/v1/tron-monitor/stats")
    assert stats["total_callbacks"] == 1
    assert stats["success_callbacks"] == 1
    listed = api.data("GET", "/v1/tron-monitor/addresses")["addresses"][0]
    assert listed["total_callbacks"] == 1
    assert listed["last_callback_at"] is not None


def _ts(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_three_failed_retries_mark_failed_then_manual_resend(sandbox, api):
    state = {"up": False}
    with RecordingReceiver(respond=lambda n: 200 if state["up"] else 503) as receiver:
        address = api.watch(receiver.url)
        tx_hash = api.transfer(address)
        failed = api.deliveries(1, "failed")[0]
        assert len(receiver.received) == 4  # first attempt and three retries, no more
        assert [h["status_code"] for h in failed["history"]] == [503] * 4
        assert api.data("GET", "/v1/tron-monitor/stats")["failed_callbacks"] == 1

        state["up"] = True
        resent = api.control("POST", f"/deliveries/{failed['id']}/resend")
        assert resent["status"] == "delivered"
        assert resent["history"][-1]["manual"] is True
        assert json.loads(receiver.received[-1].body)["data"]["tx_hash"] == tx_hash
    stats = api.data("GET", "/v1/tron-monitor/stats")
    assert (stats["success_callbacks"], stats["failed_callbacks"]) == (1, 0)


def test_unreachable_receiver_is_retried_and_logged(sandbox, api):
    closed_port_url = "http://127.0.0.1:9/callbacks"
    address = api.watch(closed_port_url)
    api.transfer(address)
    failed = api.deliveries(1, "failed")[0]
    assert len(failed["history"]) == 4
    assert all(h["status_code"] is None and h["error"] for h in failed["history"])


def test_address_level_secret_signs_its_callbacks(sandbox, api):
    with RecordingReceiver() as receiver:
        address = api.watch(receiver.url, webhook_secret="per-address-secret")
        api.transfer(address)
        delivery = receiver.wait_for(1)[0]
    assert delivery.headers["x-signature"] == sign_callback("per-address-secret", delivery.body)
    assert delivery.headers["x-signature"] != sign_callback(sandbox.webhook_secret, delivery.body)


def test_only_watched_tokens_and_active_addresses_get_callbacks(sandbox, api):
    with RecordingReceiver() as receiver:
        address = api.watch(receiver.url, tokens=["USDT"])
        api.transfer(address, token="TRX")
        usdt = api.transfer(address, token="USDT")
        receiver.wait_for(1)
        api.data("DELETE", f"/v1/tron-monitor/addresses/{address}")
        api.transfer(address, token="USDT")
        api.deliveries(1, "delivered")
    assert [json.loads(d.body)["data"]["tx_hash"] for d in receiver.received] == [usdt]
    assert len(api.control("GET", "/deliveries")) == 1


def test_delivery_never_blocks_request_handling(sandbox, api):
    hold = threading.Event()
    with RecordingReceiver(hold=hold) as receiver:
        address = api.watch(receiver.url)
        api.transfer(address)
        receiver.wait_for(1)  # the receiver now holds the sandbox's callback open
        response = requests.get(f"{sandbox.url}/energy/price",
                                headers={"X-API-Key": sandbox.api_key}, timeout=2)
        assert response.status_code == 200
        assert not hold.is_set()
        assert api.control("GET", "/deliveries")[0]["status"] == "pending"
        hold.set()
        api.deliveries(1, "delivered")


def test_transfer_updates_chain_state(sandbox, api):
    fresh = random_address()
    assert api.data("POST", "/v1/energy/check-address", {"address": fresh})["is_activated"] is False
    api.transfer(fresh, token="TRX")
    assert api.data("POST", "/v1/energy/check-address", {"address": fresh})["is_activated"] is True
    sender = random_address()
    api.control("POST", f"/addresses/{sender}/activate")
    before = api.data("POST", "/v1/energy/auto-buy", {"from_address": sender, "to_address": fresh})
    api.transfer(fresh, token="USDT")
    after = api.data("POST", "/v1/energy/auto-buy", {"from_address": sender, "to_address": fresh})
    assert (before["energy_amount"], after["energy_amount"]) == (131000, 65000)
