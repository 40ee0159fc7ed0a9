"""Request signing (decisions.md section 1) at the sandbox: what it accepts and refuses.

The scheme's fixed vectors are tested on protocol.signing itself, in
tests/protocol/test_signing.py.
"""

from __future__ import annotations

import json
import time

import pytest

from tronenergy_protocol.address import random_address


def test_accepts_a_correct_signature_over_path_query_and_body(signed):
    signed.get("/v1/tron-monitor/addresses?page=1&page_size=5").ok(0)
    signed.get("/v1/energy/price?rent_time=0.17").ok()
    signed.post("/v1/energy/check-address", {"address": random_address()}).ok()


def test_rejects_a_signature_over_another_path(signed):
    signed.get("/v1/energy/account", sign_path="/v1/energy/price").error(40002, 401)
    signed.get("/v1/energy/account", sign_path="/energy/account").error(40002, 401)
    signed.get("/v1/tron-monitor/stats",
               sign_path="/v1/tron-monitor/tron-monitor/stats").error(40002, 401)


def test_rejects_a_signature_over_another_query(signed):
    signed.get("/v1/tron-monitor/addresses?page=2",
               sign_path="/v1/tron-monitor/addresses?page=1").error(40002, 401)
    signed.get("/v1/tron-monitor/addresses?page=1",
               sign_path="/v1/tron-monitor/addresses").error(40002, 401)
    signed.get("/v1/energy/price?rent_time=1",
               sign_path="/v1/energy/price?rent_time=1.0").error(40002, 401)


def test_rejects_a_signature_over_another_body(signed):
    body = {"address": random_address()}
    other = json.dumps({"address": random_address()}).encode()
    signed.post("/v1/energy/check-address", body, sign_body=other).error(40002, 401)
    signed.post("/v1/energy/check-address", body, sign_body=b"").error(40002, 401)
    # Same JSON value, different bytes: the raw body is signed, not its meaning.
    spaced = json.dumps(body, indent=2).encode()
    signed.post("/v1/energy/check-address", body, sign_body=spaced).error(40002, 401)


def test_rejects_a_signature_over_another_method(signed):
    signed.post("/v1/energy/check-address", {"address": random_address()},
                sign_method="PUT").error(40002, 401)
    signed.get("/v1/energy/account", sign_method="POST").error(40002, 401)


def test_rejects_a_signature_made_with_another_secret_or_scheme(sandbox_server, signed):
    signed.get("/v1/energy/account", secret=sandbox_server.webhook_secret).error(40002, 401)
    signed.get("/v1/energy/account", secret=sandbox_server.api_key).error(40002, 401)
    signed.get("/v1/energy/account", scheme="ts.body").error(40002, 401)


def early_in_a_second() -> int:
    """Now as integer seconds, taken early in a second so the request lands in it too."""
    fraction = time.time() % 1
    if fraction > 0.3:
        time.sleep(1.02 - fraction)
    return int(time.time())


def test_window_is_300_seconds(signed):
    now = early_in_a_second()
    signed.get("/v1/energy/account", ts=now - 299).ok()
    signed.get("/v1/energy/account", ts=now + 299).ok()
    now = early_in_a_second()
    signed.get("/v1/energy/account", ts=now - 301).error(40003, 401)
    signed.get("/v1/energy/account", ts=now + 301).error(40003, 401)
    signed.get("/v1/energy/account", ts=now - 3600).error(40003, 401)


@pytest.mark.parametrize("stamp", ["--1700000000", "1700000000.0", "abc", "1e9", "-",
                                   "+{now}", "{now}.5", "0x1"])
def test_rejects_a_non_integer_timestamp(signed, stamp):
    stamp = stamp.format(now=int(time.time()))
    signed.get("/v1/energy/account", ts=stamp).error(40003, 401)


def test_price_accepts_the_key_alone_but_not_a_wrong_signature(signed):
    signed.get("/v1/energy/price", unsigned=True).ok()
    signed.get("/v1/energy/price", signature="f" * 64).error(40002, 401)
    signed.get("/v1/energy/price", signature=None).error(40002, 401)  # a timestamp, no signature
    signed.get("/v1/energy/price", ts=1700000000).error(40003, 401)
    signed.get("/v1/energy/price", unsigned=True, key="sbx_wrong").error(40001, 401)
    # Only the price endpoint: everything else needs the signature.
    signed.get("/v1/energy/account", unsigned=True).error(40003, 401)
    signed.get("/v1/tron-monitor/stats", unsigned=True).error(40003, 401)


def test_ts_body_scheme(start_sandbox, signer):
    server = start_sandbox(signature_scheme="ts.body")
    api = signer(server, "ts.body")
    api.get("/v1/energy/account").ok()
    api.post("/v1/energy/check-address", {"address": random_address()}).ok()
    api.get("/v1/tron-monitor/addresses?page=1").ok(0)
    api.get("/v1/energy/account", scheme="v1").error(40002, 401)
    signer(server, "v1").post("/v1/energy/check-address",
                              {"address": random_address()}).error(40002, 401)
    api.post("/v1/energy/check-address", {"address": random_address()},
             sign_body=b"{}").error(40002, 401)
    api.get("/v1/energy/account", ts=int(time.time()) - 400).error(40003, 401)
