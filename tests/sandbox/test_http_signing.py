"""Request signing (decisions.md section 1): fixed vectors, and what the sandbox accepts."""

from __future__ import annotations

import hashlib
import hmac
import json
import time

import pytest

from airflow_provider_tronenergy.protocol import signing
from airflow_provider_tronenergy.protocol.address import random_address

SECRET = "sbx-secret"
TS = "1700000000"
BODY = b'{"target_address":"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t","energy_amount":65000}'


def by_hand(message: bytes) -> str:
    return hmac.new(SECRET.encode(), message, hashlib.sha256).hexdigest()


def test_v1_vector_without_body():
    expected = "1700000000\nGET\n/v1/energy/account\n"  # decisions.md's own example
    assert signing.string_to_sign("v1", TS, "GET", "/v1/energy/account", b"") == (
        expected.encode())
    signature = signing.sign_request(SECRET, "v1", TS, "GET", "/v1/energy/account")
    assert signature == by_hand(expected.encode())
    assert signature == "87ccde779f338c8271c0f3b65f9bde07c773817c0584f3de6dec61c2310e651e"


def test_v1_vector_with_query_and_body():
    message = b"1700000000\nPOST\n/v1/energy/buy?source=dag%201\n" + BODY
    assert signing.string_to_sign("v1", TS, "post", "/v1/energy/buy?source=dag%201",
                                  BODY) == message  # the method is upper-cased
    signature = signing.sign_request(SECRET, "v1", TS, "POST", "/v1/energy/buy?source=dag%201",
                                     BODY)
    assert signature == by_hand(message)
    assert signature == "440d5dea5807f4bc72e9b82fda442f678c9d30c0ca44adcf695da48dc8b1d788"


def test_ts_body_vector():
    message = b"1700000000." + BODY
    assert signing.string_to_sign("ts.body", TS, "POST", "/ignored", BODY) == message
    signature = signing.sign_request(SECRET, "ts.body", TS, "POST", "/v1/energy/buy", BODY)
    assert signature == by_hand(message)
    assert signature == "e8c65078fd7caf9ec01a2731e9fa5340c5d459aacc5c33a69580a267bf5457f7"
    assert signing.string_to_sign("ts.body", TS, "GET", "/v1/energy/account", b"") == (
        b"1700000000.")


def test_unknown_scheme_and_verification():
    with pytest.raises(ValueError, match="scheme"):
        signing.string_to_sign("v2", TS, "GET", "/v1/energy/account", b"")
    good = signing.sign_request(SECRET, "v1", TS, "GET", "/v1/energy/account")
    assert signing.verify_request(SECRET, good, "v1", TS, "GET", "/v1/energy/account")
    assert signing.verify_request(SECRET, good.upper(), "v1", TS, "GET", "/v1/energy/account")
    assert not signing.verify_request(SECRET, good, "v1", TS, "GET", "/v1/energy/price")
    assert not signing.verify_request(SECRET, "é" + good[1:], "v1", TS, "GET",
                                      "/v1/energy/account")


@pytest.mark.parametrize("stamp", ["--1700000000", "1700000000.5", "1e9", " ", "", "١٧٠٠",
                                   "+1700000000", "0x6553f100", "99999999999999999999"])
def test_timestamp_window_rejects_non_integers(stamp):
    assert signing.timestamp_in_window(stamp, 1700000000.0) is False


def test_timestamp_window_bounds():
    now = 1700000000.0
    assert signing.timestamp_in_window("1700000300", now)
    assert signing.timestamp_in_window("1699999700", now)
    assert not signing.timestamp_in_window("1700000301", now)
    assert not signing.timestamp_in_window("1699999699", now)


# -- the sandbox's verification ---------------------------------------------------


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
