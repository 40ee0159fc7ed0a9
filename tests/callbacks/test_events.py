"""One TransferEvent: the client's public model. The receiver's verified record is
VerifiedTransfer, built from the same bytes."""

from __future__ import annotations

import warnings
from decimal import Decimal

import airflow_provider_tronenergy.callbacks as callbacks
from airflow_provider_tronenergy.callbacks.events import VerifiedTransfer
from airflow_provider_tronenergy.callbacks.verify import WebhookSecrets, verify
from airflow_provider_tronenergy.client import TransferEvent
from support.callbacks import callback_body, transfer_data
from tronenergy_protocol.signing import sign_callback

SECRET = "whsec_verified_transfer"


def test_the_new_names_and_the_client_model_import_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert callbacks.VerifiedTransfer is VerifiedTransfer
        from airflow_provider_tronenergy.client import TransferEvent as client_event
    assert client_event is TransferEvent is not VerifiedTransfer
    assert "VerifiedTransfer" in callbacks.__all__ and "TransferEvent" not in callbacks.__all__


def test_a_verified_callback_and_the_client_model_hold_the_same_facts():
    data = transfer_data(tx_hash="AB" * 32, amount="12.50", token="usdt")
    body = callback_body(data, timestamp=1_700_000_000)
    verified = verify(WebhookSecrets.build(SECRET), body, sign_callback(SECRET, body), tolerance=0)
    assert isinstance(verified, VerifiedTransfer)
    assert repr(verified).startswith("VerifiedTransfer(")
    event = verified.client_event()
    assert isinstance(event, TransferEvent)
    assert event.tx_hash.lower() == verified.tx_hash == "ab" * 32
    assert (event.from_address, event.to_address) == (verified.from_address,
                                                     verified.to_address)
    assert event.amount == Decimal(verified.amount) == Decimal("12.50")
    assert event.token.upper() == verified.token == "USDT"
    assert event.block_number == verified.block_number
    assert int(event.block_timestamp.timestamp() * 1000) == verified.block_timestamp_ms
    assert int(event.timestamp.timestamp()) == verified.sent_at == 1_700_000_000
