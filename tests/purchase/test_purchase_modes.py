"""The four request builders: the validated, JSON-safe request each journals, and its target.

The life around them (journal, quote, guards) is exercised through the operators
(tests/operators); here, only what a mode says before any call.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from airflow_provider_tronenergy.client import ValidationError, ValidationRules
from airflow_provider_tronenergy.purchase import AutoBuy, Buy, BuyCount, SmartBuy
from airflow_provider_tronenergy.purchase.run import describe

A, B = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
RULES = ValidationRules()


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
    assert mode.request(RULES) == request_
    assert json.loads(json.dumps(mode.request(RULES))) == request_  # it is journaled
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
        mode.request(RULES)


def test_the_description_is_what_the_journal_reads_back():
    assert describe(BuyCount(rent_time=1, target_address=A, count=2), None) == (
        f"buy_count for {A} (cost unknown)")
