"""Request signing (decisions.md section 1): fixed vectors, the scheme and the timestamp window.

What the sandbox accepts over HTTP is in tests/sandbox/test_http_signing.py.
"""

from __future__ import annotations

import hashlib
import hmac

import pytest

from tronenergy_protocol import signing

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
