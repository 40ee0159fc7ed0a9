"""A signed callback that repeats a stored tx_hash with other facts: 409, kept apart, never stored.

On the store (SQLite and PostgreSQL) and through the real ``tronenergy-receiver``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx

from airflow_provider_tronenergy.callbacks.events import VerifiedTransfer
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.callbacks.verify import parse_transfer
from support.callbacks import callback_body, signed_headers, transfer_data
from support.hostile import SECRET, start
from tronenergy_protocol.address import random_address
from tronenergy_protocol.signing import sign_callback


def event(data: dict[str, object], timestamp: int | None = None) -> VerifiedTransfer:
    body = callback_body(data, timestamp=timestamp)
    return parse_transfer(body, signature=sign_callback(SECRET, body), verified_by="key")


def test_a_contradicting_duplicate_is_flagged_kept_and_never_stored(store: CallbackStore):
    data = transfer_data(amount="12.5")
    first = event(data)
    assert not store.record(first).duplicate

    # A retry (other timestamp, same facts; the amount written differently) is a duplicate.
    retry = store.record(event({**data, "amount": "12.50"}, timestamp=int(time.time()) - 60))
    assert retry.duplicate and not retry.conflict

    other_amount = event({**data, "amount": "1250"})
    other_recipient = event({**data, "to": random_address(), "token": "USDT"})
    results = store.record_many([other_amount, other_recipient, other_amount])
    assert [r.conflict for r in results] == [("amount",), ("to", "token"), ("amount",)]
    assert all(r.duplicate for r in results)

    stored = store.get_transfer(first.tx_hash)
    assert stored is not None and stored.amount_text == "12.5"
    assert stored.to_address == data["to"] and stored.raw_body == first.raw_body
    assert len(store.list_transfers()) == 1

    kept = store.list_conflicts()
    assert [(c.fields, c.amount, c.stored_id) for c in kept] == [
        (("amount",), "1250", stored.id), (("to", "token"), "12.5", stored.id)]
    assert kept[0].raw_body == other_amount.raw_body  # the same bytes twice: kept once
    assert store.list_conflicts(tx_hash=first.tx_hash.upper()) == kept
    assert store.list_conflicts(after_id=kept[0].id) == kept[1:]
    assert json.loads(json.dumps(kept[1].to_payload()))["to"] == other_recipient.to_address


def test_a_contradiction_inside_one_batch_keeps_the_first(store: CallbackStore):
    data = transfer_data(amount="7")
    first, second = event(data), event({**data, "amount": "7000"})
    results = store.record_many([first, second])
    assert [(r.duplicate, r.conflict) for r in results] == [(False, ()), (True, ("amount",))]
    assert [t.amount_text for t in store.list_transfers()] == ["7"]
    assert [c.amount for c in store.list_conflicts()] == ["7000"]


def test_the_receiver_answers_409_logs_a_warning_and_lists_it(tmp_path: Path):
    receiver = start(tmp_path, log_level="info")
    try:
        data = transfer_data(amount="100")
        body = callback_body(data)
        first = httpx.post(receiver.url, content=body, headers=signed_headers(SECRET, body),
                           timeout=5, trust_env=False)
        assert first.status_code == 200 and first.json()["duplicate"] is False

        forged = callback_body({**data, "amount": "100000", "to": random_address()})
        answer = httpx.post(receiver.url, content=forged, headers=signed_headers(SECRET, forged),
                            timeout=5, trust_env=False)
        assert answer.status_code == 409, answer.text
        assert answer.json() == {"success": False, "error": "conflict", "message": answer.json()[
            "message"]}
        assert "tx_hash" in answer.json()["message"]

        retry = callback_body(data)
        again = httpx.post(receiver.url, content=retry, headers=signed_headers(SECRET, retry),
                           timeout=5, trust_env=False)
        assert again.status_code == 200 and again.json()["duplicate"] is True
    finally:
        receiver.stop()
    log = receiver.log()
    warning = [line for line in log.splitlines() if data["tx_hash"] in line and "WARNING" in line]
    assert warning and "amount" in warning[0] and "to" in warning[0], log[-2000:]
    assert not [line for line in log.splitlines()
                if "100000" in line and "INFO" in line], "the unstored amount was logged as INFO"
    assert SECRET not in log

    listed = subprocess.run(
        [sys.executable, "-m", "airflow_provider_tronenergy.callbacks", "--list-conflicts",
         "--store", f"sqlite:///{tmp_path / 'callbacks.db'}"],
        capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"},
    )
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["tx_hash"], r["amount"], r["fields"]) for r in rows] == [
        (data["tx_hash"], "100000", ["to", "amount"])]
    assert json.loads(rows[0]["raw_body"])["data"]["amount"] == "100000"
    store = CallbackStore(f"sqlite:///{tmp_path / 'callbacks.db'}")
    try:
        stored = store.get_transfer(str(data["tx_hash"]))
        assert stored is not None and stored.amount_text == "100"
    finally:
        store.close()
