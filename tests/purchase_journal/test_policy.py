"""The journal's rules, branch by branch: buy, reuse, or stop for a person."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from airflow_provider_tronenergy.purchase_journal import Entry, EntryState, Verdict, decide
from airflow_provider_tronenergy.purchase_journal.identity import (
    IdentityError,
    default_identity,
    explicit_identity,
)

NOW = 1_800_000_000.0
MINE, OTHER = "d/run-1/t/-1", "d/run-2/t/-1"
PLACED = Entry(
    id=1, identity="auto:d.t:x", attempt=1, state=EntryState.PLACED, explicit_key=False,
    mode="buy", target_address="T", description="buy", request={}, scope=MINE,
    claimed_by=MINE, sent_at=NOW - 60, rent_hours=Decimal(1), valid_until=NOW + 3540,
    order_id="o", result=None, updated_at=NOW - 59, resolved_by=None, note=None)


def verdict(entry: Entry | None, scope: str = MINE, min_validity: float = 300) -> Verdict:
    return decide(entry, scope=scope, now=NOW, min_validity=min_validity).verdict


def test_first_attempt_buys():
    assert verdict(None) is Verdict.BUY


def test_unknown_outcome_stops_every_run():
    sending = replace(PLACED, state=EntryState.SENDING, order_id=None, valid_until=None)
    assert verdict(sending) is Verdict.UNKNOWN
    assert verdict(sending, OTHER) is Verdict.UNKNOWN
    assert verdict(replace(sending, explicit_key=True), OTHER) is Verdict.UNKNOWN


def test_placed_is_reused_by_its_own_task_instance_only():
    assert verdict(PLACED) is Verdict.REUSE
    assert verdict(PLACED, OTHER) is Verdict.BUY  # a scheduled top-up buys every run


def test_explicit_key_is_reused_by_any_run():
    assert verdict(replace(PLACED, explicit_key=True), OTHER) is Verdict.REUSE


def test_person_resolved_order_waits_for_the_next_attempt_of_any_run():
    assert verdict(replace(PLACED, claimed_by=None), OTHER) is Verdict.REUSE


def test_expired_or_nearly_expired_order_is_bought_anew():
    assert verdict(replace(PLACED, valid_until=NOW - 1)) is Verdict.BUY
    assert verdict(replace(PLACED, valid_until=NOW + 299)) is Verdict.BUY
    assert verdict(replace(PLACED, valid_until=NOW + 299), min_validity=0) is Verdict.REUSE


@pytest.mark.parametrize("state", [EntryState.REFUSED, EntryState.NOT_PLACED,
                                   EntryState.ABANDONED, EntryState.ENDED])
def test_attempts_that_bought_nothing_let_the_next_buy(state: EntryState):
    assert verdict(replace(PLACED, state=state)) is Verdict.BUY


def test_default_identity_ignores_the_run_and_follows_the_parameters():
    one = default_identity("d", "t", -1, "buy", {"energy_amount": 65000, "rent_time": "1"})
    assert one == default_identity("d", "t", -1, "buy", {"rent_time": "1", "energy_amount": 65000})
    assert one.startswith("auto:d.t:")
    assert one != default_identity("d", "t", -1, "buy", {"energy_amount": 65001,
                                                         "rent_time": "1"})
    assert one != default_identity("d", "t", 0, "buy", {"energy_amount": 65000,
                                                        "rent_time": "1"})
    assert default_identity("d", "t", 3, "buy", {}).startswith("auto:d.t[3]:")


@pytest.mark.parametrize("key", ["", " ", "a b", "auto:x", "x" * 201, "ключ", "a\nb", 7])
def test_explicit_keys_are_checked(key: object):
    with pytest.raises(IdentityError):
        explicit_identity(key)


def test_explicit_key_is_kept_as_given():
    assert explicit_identity(" payout:T1:ab12:count0 ") == "payout:T1:ab12:count0"
