"""Verification and amount arithmetic as functions: properties over many inputs."""

from __future__ import annotations

import decimal
import time
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_provider_tronenergy.callbacks.events import MAX_MICRO, threshold_micro, to_micro
from airflow_provider_tronenergy.callbacks.verify import (
    Rejection,
    WebhookSecrets,
    check_signature,
    split_secrets,
    verify,
)
from support.callbacks import callback_body, transfer_data
from tronenergy_protocol.address import random_address
from tronenergy_protocol.signing import sign_callback

amount_texts = st.builds(
    lambda whole, frac: whole + (f".{frac}" if frac else ""),
    st.from_regex(r"[0-9]{1,25}", fullmatch=True),
    st.one_of(st.just(""), st.from_regex(r"[0-9]{1,20}", fullmatch=True)),
)


@given(amount_texts)
def test_micro_units_are_the_exact_floor(text):
    with decimal.localcontext() as ctx:
        ctx.prec = 100
        exact = (Decimal(text) * 1_000_000).to_integral_value(rounding=decimal.ROUND_FLOOR)
    assert to_micro(text) == min(int(exact), MAX_MICRO)


@given(amount_texts, st.decimals(min_value=0, max_value=10**12, places=6,
                                 allow_nan=False, allow_infinity=False))
def test_threshold_comparison_in_micro_units_is_exact(text, threshold):
    assert (to_micro(text) >= threshold_micro(threshold)) == (Decimal(text) >= threshold)


@pytest.mark.parametrize("bad", ["1e5", "-1", "+1", " 1", "1.", ".5", "NaN", "", "1,5"])
def test_only_plain_decimal_text_converts(bad):
    with pytest.raises(ValueError):
        to_micro(bad)


def test_threshold_needs_at_most_six_decimals():
    assert threshold_micro("12.5") == 12_500_000
    assert threshold_micro(3) == 3_000_000
    for bad in ("0.0000001", "-1", "NaN"):
        with pytest.raises((ValueError, decimal.InvalidOperation)):
            threshold_micro(bad)


@given(st.binary(max_size=300), st.text(alphabet="0123456789abcdef", min_size=64, max_size=64))
def test_random_signatures_never_pass(body, signature):
    secrets = WebhookSecrets.build("k", {random_address(): "a"})
    if signature == sign_callback("k", body):
        return
    with pytest.raises(Rejection) as caught:
        check_signature(secrets, body, signature)
    assert caught.value.status == 403


def test_signature_is_checked_against_every_key_level_secret():
    body = callback_body()
    secrets = WebhookSecrets.build(["old", "new"])
    assert check_signature(secrets, body, sign_callback("old", body)) == "key"
    assert check_signature(secrets, body, sign_callback("new", body)) == "key"
    assert check_signature(secrets, body, sign_callback("new", body).upper()) == "key"


def test_address_secret_is_looked_up_by_data_to():
    address = random_address()
    secrets = WebhookSecrets.build("key", {address: ["a1", "a2"]})
    mine = callback_body(transfer_data(to=address))
    assert check_signature(secrets, mine, sign_callback("a2", mine)) == "address"
    theirs = callback_body(transfer_data(to=random_address()))
    with pytest.raises(Rejection):
        check_signature(secrets, theirs, sign_callback("a2", theirs))


def test_verify_returns_normalised_event():
    data = transfer_data(tx_hash="AB" * 32, token="usdt", amount="0.50")
    body = callback_body(data)
    event = verify(WebhookSecrets.build("k"), body, sign_callback("k", body).upper())
    assert event.tx_hash == "ab" * 32
    assert event.token == "USDT"
    assert event.amount == "0.50" and event.amount_micro == 500_000
    assert event.raw_body == body and event.signature == sign_callback("k", body)
    assert abs(event.received_at_ms / 1000 - time.time()) < 5
    assert "s3cr3t" not in repr(WebhookSecrets.build("s3cr3t", {random_address(): "s3cr3t"}))


def test_split_secrets():
    assert split_secrets(None) == ()
    assert split_secrets("a, b,,a") == ("a", "b")
    assert split_secrets(["x", " y "]) == ("x", "y")
    with pytest.raises(TypeError):
        split_secrets([1])  # type: ignore[list-item]


def test_address_secrets_must_name_valid_addresses():
    with pytest.raises(ValueError):
        WebhookSecrets.build("k", {"TnotAnAddress": "s"})
