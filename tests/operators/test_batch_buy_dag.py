"""A plan's orders in one purchase task and one wait task, in real Airflow (dag.test(),
SQLite metadata DB, the purchase journal in $AIRFLOW_HOME) against the sandbox. Orders
are counted at the sandbox, never taken from the task's own report."""

from __future__ import annotations

import secrets
from typing import Any

import operators_batch_buy as dags
import pytest
from airflow.providers.common.compat.sdk import AirflowFailException

from airflow_provider_tronenergy.operators.batch_buy import (
    TronEnergyBatchBuyOperator,
    checked_orders,
)
from support.control import Control
from tronenergy_protocol.address import random_address


def plan(control: Control, *, inactive_last: bool = False) -> list[dict[str, Any]]:
    key = f"test-batch-{secrets.token_hex(4)}"
    targets = [control.activated(), control.activated(),
               random_address() if inactive_last else control.activated()]
    return [{"target_address": targets[0], "energy_amount": 131_000, "purchase_key": f"{key}:b0"},
            {"target_address": targets[1], "count": 2, "purchase_key": f"{key}:c0"},
            {"target_address": targets[2], "energy_amount": 65_000, "purchase_key": f"{key}:b1"}]


def placed(control: Control, orders: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    targets = {o["target_address"] for o in orders}
    return [(o["target_address"], o["kind"], o["energy_amount"]) for o in control.orders()
            if o["target_address"] in targets]


def test_every_order_bought_in_one_task_and_waited_for_in_one(control: Control, run_dag):
    orders = plan(control)
    out = run_dag(dags.dag, orders=orders)
    assert out["__run__"] == "success"
    assert placed(control, orders) == [(orders[0]["target_address"], "buy", 131_000),
                                       (orders[1]["target_address"], "buy_count", 130_000),
                                       (orders[2]["target_address"], "buy", 65_000)]
    state, tries, results = out["buy"]
    assert (state, tries) == ("success", 1)
    assert [r["purchase_key"] for r in results] == [o["purchase_key"] for o in orders]
    waited = out["wait"][2]
    assert [o["order_id"] for o in waited] == [r["order_id"] for r in results]
    assert all(o["status"] == "success" for o in waited)


def test_a_new_run_of_the_same_batch_buys_only_what_is_missing(control: Control, run_dag):
    orders = plan(control, inactive_last=True)
    first = run_dag(dags.dag, orders=orders)
    # The third target cannot take a delegation: refused (no retry), two orders stand.
    assert first["__run__"] == "failed" and first["buy"][:2] == ("failed", 1)
    assert len(placed(control, orders)) == 2

    control.activated(orders[2]["target_address"])
    second = run_dag(dags.dag, orders=orders)
    assert second["__run__"] == "success"
    assert len(placed(control, orders)) == 3  # the first two were reused, not bought again
    results = second["buy"][2]
    assert [r["reused"] for r in results] == [True, True, False]


@pytest.mark.parametrize(("orders", "words"), [
    ("not a list", "must be a list"),
    ([{"target_address": "T", "energy_amount": 1}], "no purchase_key"),
    ([{"target_address": "T", "purchase_key": "k"}], "exactly one of energy_amount or count"),
    ([{"target_address": "T", "count": 1, "purchase_key": "k"},
      {"target_address": "T", "count": 1, "purchase_key": "k"}], "repeats purchase_key"),
])
def test_malformed_orders_are_refused_before_anything_is_bought(control: Control, run_dag,
                                                                orders, words):
    before = len(control.orders())
    out = run_dag(dags.dag, orders=orders)
    assert out["__run__"] == "failed" and out["buy"][:2] == ("failed", 1)
    assert len(control.orders()) == before
    with pytest.raises(AirflowFailException, match=words):
        checked_orders(orders)


def test_on_ambiguous_is_checked_when_the_dag_is_written():
    with pytest.raises(ValueError, match="on_ambiguous"):
        TronEnergyBatchBuyOperator(task_id="x", orders=[], on_ambiguous="ask-me",
                                   max_spend_trx=None)
