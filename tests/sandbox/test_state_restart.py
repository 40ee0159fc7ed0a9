"""``--state``: the world survives a restart, including deliveries still owed."""

from __future__ import annotations

import json
import time
from decimal import Decimal
from pathlib import Path

from support.process import start_sandbox
from support.receiver import RecordingReceiver
from support.signed import SignedSession
from tronenergy_protocol.address import random_address
from tronenergy_protocol.signing import sign_callback


def test_restart_keeps_account_orders_monitoring_and_pending_deliveries(tmp_path: Path):
    state = str(tmp_path / "world.sqlite")
    with RecordingReceiver(respond=lambda n: 200) as receiver:
        # The receiver's URL is watched while it is down: port 9 refuses.
        down_url = "http://127.0.0.1:9/callbacks"
        first = start_sandbox("--state", state, "--time-scale", "0.01", "--balance", "50")
        try:
            api = SignedSession(first.root_url, first.api_key, first.api_secret)
            target = random_address()
            api.control("POST", f"/addresses/{target}/activate")
            order = api.data("POST", "/v1/energy/buy", {"target_address": target})
            watched = random_address()
            api.data("POST", "/v1/tron-monitor/addresses",
                     {"address": watched, "webhook_url": down_url})
            api.data("POST", "/v1/tron-monitor/addresses",
                     {"address": random_address(), "webhook_url": receiver.url})
            tx_hash = api.control("POST", "/transfers", {"from": random_address(),
                                                          "to": watched, "amount": "3"})["tx_hash"]
            account_before = api.data("GET", "/v1/energy/account")
        finally:
            first.kill()

        # Point the stored delivery at the live receiver, as a fixed DNS entry would.
        import sqlite3

        with sqlite3.connect(state) as db:
            db.execute("UPDATE deliveries SET url = ?", (receiver.url,))

        second = start_sandbox("--state", state, "--time-scale", "0.01")
        try:
            assert (second.api_key, second.api_secret, second.webhook_secret) == (
                first.api_key, first.api_secret, first.webhook_secret)
            api = SignedSession(second.root_url, second.api_key, second.api_secret)
            assert api.data("GET", f"/v1/energy/order/{order['order_id']}")["order_id"] == \
                order["order_id"]
            account = api.data("GET", "/v1/energy/account")
            assert account["recharge_address"] == account_before["recharge_address"]
            assert account["balance"] == Decimal("50") - Decimal("2.925")
            listed = api.data("GET", "/v1/tron-monitor/addresses")
            assert listed["total"] == 2
            delivery = receiver.wait_for(1)[0]
            assert json.loads(delivery.body)["data"]["tx_hash"] == tx_hash
            assert delivery.headers["x-signature"] == sign_callback(second.webhook_secret,
                                                                    delivery.body)
            deadline = time.monotonic() + 10
            while api.control("GET", "/deliveries")[0]["status"] != "delivered":
                assert time.monotonic() < deadline
                time.sleep(0.02)
        finally:
            second.stop()
