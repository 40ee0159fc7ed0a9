"""What the approval gate asks and records: threshold, plan as Markdown, the answer."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import pytest

from airflow_provider_tronenergy.money.burn import BurnPrices
from airflow_provider_tronenergy.payout import approvals

PLAN = {
    "sender": "TSender", "rent_time": "1", "transfers": 2, "activations": 1,
    "recipients": [
        {"recipient": "THolder", "amount": "10.5", "energy": 65_000, "activated": False,
         "energy_cost": "2.925", "burn_cost": "6.5"},
        {"recipient": "TNew", "amount": "11.5", "energy": 131_000, "activated": True,
         "energy_cost": "5.895", "burn_cost": "13.1"},
    ],
    "total_energy": 196_000, "energy_on_hand_used": 0, "energy_to_buy": 196_000,
    "energy_cost_quote": "8.82", "activation_cost": "1.1", "total_cost_quote": "9.92",
    "burn_cost": "25.6", "burn_cost_to_buy": "19.6", "saving_quote": "10.78",
    "service_balance": "1000",
    "onchain": {"onchain": False},
}


@pytest.mark.parametrize("value", ["", "  ", None, "None"])
def test_empty_threshold_never_asks(value):
    assert approvals.threshold(value) is None
    assert approvals.needs_approval(PLAN, approvals.threshold(value)) is False


@pytest.mark.parametrize("value", ["-1", "1e3", "ten", "NaN"])
def test_bad_threshold_is_refused(value):
    with pytest.raises(ValueError, match="approval_above_trx"):
        approvals.threshold(value)


def test_asks_only_above_the_threshold():
    assert approvals.threshold("9.92") == Decimal("9.92")
    assert approvals.needs_approval(PLAN, Decimal("9.92")) is False  # at it: not above
    assert approvals.needs_approval(PLAN, Decimal("9.919999")) is True
    assert approvals.needs_approval(PLAN, Decimal(0)) is True


def test_the_request_shows_the_plan():
    body = approvals.plan_markdown(PLAN, Decimal(5))
    for text in ("`THolder`", "`TNew`", "| 131,000 |", "Energy to buy | 196,000 (1 h)",
                 "**Total quote** | **9.92 TRX**",
                 "Burning the energy to buy instead | 19.6 TRX",
                 "Saving by renting (vs burning the same energy) | 10.78 TRX",
                 "Burning the whole batch, none on hand | 25.6 TRX",
                 "Service balance available | 1000 TRX", "not read (no `tron_node`"):
        assert text in body, text
    assert "9.92 TRX" in approvals.subject(PLAN)


def test_the_request_shows_the_wallet_when_read_on_chain():
    chain = {"onchain": True, "usdt_needed": "22", "wallet": {
        "trx": "50", "usdt": "300", "energy_available": 65_000}}
    body = approvals.plan_markdown({**PLAN, "onchain": chain}, Decimal(5))
    assert "Hot wallet USDT | 300 (batch pays 22)" in body
    assert "Hot wallet energy available | 65,000" in body


def test_the_request_names_the_price_burning_was_priced_at():
    prices = BurnPrices(energy_sun=210, source="chain").to_dict()
    body = approvals.plan_markdown({**PLAN, "prices": prices}, Decimal(5))
    assert "to buy instead | 19.6 TRX (at 210 sun per energy, chain) |" in body
    assert "to buy instead | 19.6 TRX |" in approvals.plan_markdown(PLAN, Decimal(5))


def test_the_answer_says_who_and_when():
    at = datetime(2026, 11, 23, 17, 5, tzinfo=timezone.utc)
    answered = approvals.record(required=True, approved=True, above=Decimal(5), event={
        "chosen_options": ["Approve"], "responded_at": at,
        "responded_by_user": {"id": "7", "name": "alice"}})
    assert answered == {"required": True, "approved": True, "threshold_trx": "5",
                        "by": "alice", "by_id": "7", "at": "2026-11-23T17:05:00+00:00",
                        "timed_out": False, "chosen": ["Approve"]}
    timed_out = approvals.record(required=True, approved=False, above=Decimal(5), event={
        "chosen_options": ["Reject"], "responded_at": at, "responded_by_user": None,
        "timedout": True})
    assert timed_out["timed_out"] is True and timed_out["by"] is None
