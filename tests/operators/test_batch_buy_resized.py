"""A rerun's plan sizes an order anew (docs/decisions.md "A resized plan meets its
journaled purchase"): the journaled purchase of its key stands as recorded, a shortfall
is bought once under the key's ``:topup``, and no key ever buys twice. dag.test()
against the sandbox; orders are counted at the sandbox."""

from __future__ import annotations

import secrets
from typing import Any

import operators_batch_buy as dags

from airflow_provider_tronenergy.operators.batch_buy import _topup
from airflow_provider_tronenergy.purchase_journal import EntryState
from support.control import Control


def _placed(control: Control, target: str) -> list[int]:
    return [o["energy_amount"] for o in control.orders(target)]


def _buy(target: str, key: str, energy: int) -> list[dict[str, Any]]:
    return [{"target_address": target, "purchase_key": key, "energy_amount": energy}]


def test_a_resized_order_stands_and_its_shortfall_is_topped_up_once(control, run_dag,
                                                                    journal):
    target = control.wallet(trx="1")
    key = f"resized-{secrets.token_hex(4)}:b0"
    assert run_dag(dags.dag, orders=_buy(target, key, 100_000))["__run__"] == "success"
    # Sized smaller on a rerun (energy recovered on the wallet meanwhile): it stands.
    smaller = run_dag(dags.dag, orders=_buy(target, key, 99_500))
    assert smaller["__run__"] == "success", smaller
    [stood] = smaller["buy"][2]
    assert stood["reused"] is True and stood["energy_amount"] == 100_000
    assert stood["journaled_request"]["energy_amount"] == 100_000
    assert _placed(control, target) == [100_000]
    # Sized larger: it stands, and the 40,000 short are bought once, keyed on their own.
    larger = run_dag(dags.dag, orders=_buy(target, key, 140_000))
    assert larger["__run__"] == "success", larger
    base, topup = larger["buy"][2]
    assert (base["reused"], base["purchase_key"]) == (True, key)
    assert (topup["reused"], topup["purchase_key"]) == (False, f"{key}:topup")
    assert _placed(control, target) == [100_000, 40_000]
    # Again, and larger still: both journaled purchases stand, nothing more is bought.
    for energy in (140_000, 180_000):
        again = run_dag(dags.dag, orders=_buy(target, key, energy))
        assert again["__run__"] == "success", again
        assert [r["reused"] for r in again["buy"][2]] == [True, True]
    assert _placed(control, target) == [100_000, 40_000]
    # Each key bought once: one placed journal entry each, one order each.
    entries = [journal.latest(k) for k in (key, f"{key}:topup")]
    assert [e.state for e in entries if e] == [EntryState.PLACED, EntryState.PLACED]
    assert {e.order_id for e in entries if e} == {o["order_id"] for o in control.orders(target)}


def test_another_target_under_a_journaled_key_is_still_refused(control, run_dag, journal):
    target, other = control.wallet(trx="1"), control.wallet(trx="1")
    key = f"resized-{secrets.token_hex(4)}:b0"
    assert run_dag(dags.dag, orders=_buy(target, key, 100_000))["__run__"] == "success"
    refused = run_dag(dags.dag, orders=_buy(other, key, 100_000))
    assert refused["__run__"] == "failed"
    assert _placed(control, target) == [100_000] and _placed(control, other) == []


def test_the_topup_of_an_order():
    order = {"target_address": "T", "purchase_key": "k:b0", "energy_amount": 140_000}
    stood = {"journaled_request": {"energy_amount": 100_000}}
    assert _topup(order, stood, 32_000) == {"target_address": "T", "energy_amount": 40_000,
                                            "purchase_key": "k:b0:topup"}
    assert _topup({**order, "energy_amount": 110_000}, stood, 32_000)["energy_amount"] == 32_000
    assert _topup({**order, "energy_amount": 90_000}, stood, 32_000) is None
    assert _topup(order, {}, 32_000) is None  # not resized
    assert _topup({**order, "purchase_key": "k:b0:topup"}, stood, 32_000) is None
    counted = {"target_address": "T", "purchase_key": "k:c0", "count": 5}
    assert _topup(counted, {"journaled_request": {"count": 3}}, 32_000)["count"] == 2
