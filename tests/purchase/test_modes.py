"""The four request builders: the checked call each sends, the JSON-safe request each
journals, and its target.

The life around them (journal, quote, guards) is exercised through the operators
(tests/operators) and tests/purchase/test_run.py; here, only what a mode
says before any call, and that placing sends the call it built.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from airflow_provider_tronenergy.client import (
    Safety,
    TronEnergyClient,
    ValidationError,
    ValidationRules,
)
from airflow_provider_tronenergy.client import validation as checks
from airflow_provider_tronenergy.client.endpoints import Endpoints
from airflow_provider_tronenergy.purchase import AutoBuy, Buy, BuyCount, SmartBuy
from airflow_provider_tronenergy.purchase.run import describe

A, B = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
RULES = ValidationRules()
ENDPOINTS = Endpoints(RULES)


@pytest.mark.parametrize(("mode", "request_", "target"), [
    (Buy(rent_time="1", target_address=A, energy_amount="65000"),
     {"target_address": A, "energy_amount": 65_000, "rent_time": "1"}, A),
    (BuyCount(rent_time=0.25, target_address=A, count="2"),
     {"target_address": A, "count": 2, "rent_time": "0.25"}, A),
    (AutoBuy(rent_time=24, from_address=A, to_address=B),
     {"from_address": A, "to_address": B, "rent_time": "24"}, A),
    (SmartBuy(rent_time=1, receiver_address=A, to_address=B, from_address="None"),
     {"receiver_address": A, "to_address": B, "from_address": None, "rent_time": "1"}, A),
])
def test_each_mode_builds_its_request_once_validated(mode, request_, target):
    call = mode.call(ENDPOINTS)
    assert mode.request(call) == request_
    assert json.loads(json.dumps(mode.request(call))) == request_  # it is journaled
    assert mode.target == target
    with pytest.raises(dataclasses.FrozenInstanceError):
        mode.rent_time = 2  # type: ignore[misc]


@pytest.mark.parametrize(("mode", "field"), [
    (Buy(rent_time=1, target_address="nope", energy_amount=65_000), "target_address"),
    (Buy(rent_time=1, target_address=A, energy_amount="\u0666\u0665000"), "energy_amount"),
    (BuyCount(rent_time=2, target_address=A, count=1), "rent_time"),
    (AutoBuy(rent_time=1, from_address=A, to_address="T"), "to_address"),
])
def test_a_bad_value_is_refused_naming_its_field(mode, field):
    with pytest.raises(ValidationError, match=field):
        mode.call(ENDPOINTS)


class Sending(TronEnergyClient):
    """A client that keeps the calls it is asked to run instead of sending them."""

    def run(self, call: Any) -> Any:  # type: ignore[override]
        self.sent.append(call)
        return call


@pytest.mark.parametrize("mode", [
    Buy(rent_time="0.25", target_address=A, energy_amount="40000"),
    BuyCount(rent_time=1, target_address=A, count=3),
    AutoBuy(rent_time=24, from_address=A, to_address=B),
    SmartBuy(rent_time=1, receiver_address=A, to_address=B, from_address=B),
])
def test_placing_sends_the_checked_call_and_checks_nothing_again(mode, monkeypatch):
    client = Sending("http://127.0.0.1:1/v1", "key", "secret")
    client.sent = []
    call = mode.call(client.endpoints)
    rechecked: list[str] = []
    for name in ("address", "optional_address", "energy_amount", "count", "rent_time"):
        monkeypatch.setattr(checks, name, lambda *_, name=name, **__: rechecked.append(name))
    assert mode.place(client, call) is call
    assert client.sent == [call] and rechecked == []
    assert call.safety is Safety.MONEY and call.target == A
    client.close()


def test_the_description_is_what_the_journal_reads_back():
    assert describe(BuyCount(rent_time=1, target_address=A, count=2), None) == (
        f"buy_count for {A} (cost unknown)")
