"""``on_ambiguous="ask"`` in a batch purchase: the batch stops at the order whose outcome
is unknown, asks as a single purchase asks, and on the answer goes on with the rest.

As in test_ask.py: the real sandbox (the unknown outcome is a real lost answer
or a real 500), the real journal (SQLite), the operator's own resume method driven with
the answer a person gives; the request's channel to the API server (the task
supervisor) stands in as a recorder. The real deployment answers through Airflow's REST
API in tests/e2e/test_people_in_the_loop.py. Orders are counted at the sandbox.
"""

from __future__ import annotations

import secrets
import uuid
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any

import pytest
from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    TaskDeferred,
)

from airflow_provider_tronenergy.hitl.purchase import ABORT, NOT_PLACED, PLACED, parks_tasks
from airflow_provider_tronenergy.operators.batch_buy import (
    TronEnergyBatchBuyOperator,
    checked_orders,
)
from airflow_provider_tronenergy.purchase_journal import EntryState
from support.control import Control

AT = datetime(2026, 11, 25, 10, 30, tzinfo=timezone.utc)

if parks_tasks():
    from airflow.sdk.exceptions import TaskAwaitingInput as Waiting
else:
    Waiting = TaskDeferred  # type: ignore[misc,assignment]


@pytest.fixture
def asked(monkeypatch) -> list[dict[str, Any]]:
    """Every Required Action the task writes (what the supervisor would send on)."""
    import airflow.sdk.execution_time.hitl as hitl

    written: list[dict[str, Any]] = []
    monkeypatch.setattr(hitl, "upsert_hitl_detail", lambda **kw: written.append(kw))
    return written


def batch(control: Control, conn: str) -> tuple[TronEnergyBatchBuyOperator, list[dict[str, Any]]]:
    """A buy, a buy-count and a buy, each for its own wallet, asking when unknown."""
    key = f"test-ask-{secrets.token_hex(4)}"
    orders = [
        {"target_address": control.activated(), "energy_amount": 65_000,
         "purchase_key": f"{key}:b0"},
        {"target_address": control.activated(), "count": 2, "purchase_key": f"{key}:c0"},
        {"target_address": control.activated(), "energy_amount": 131_000,
         "purchase_key": f"{key}:b1"},
    ]
    op = TronEnergyBatchBuyOperator(task_id="buy_energy", orders=orders,
                                    tronenergy_conn_id=conn, rent_time="1",
                                    max_spend_trx="100", on_ambiguous="ask")
    return op, orders


def a_try(run_id: str = "") -> dict[str, Any]:
    """One try's context: a new try of the same task instance has a new id."""
    ti = SimpleNamespace(dag_id="payouts", run_id=run_id or f"r-{uuid.uuid4().hex[:8]}",
                         task_id="buy_energy", map_index=-1, id=uuid.uuid4())
    return {"ti": ti, "task_instance": ti}


def answer(option: str, order_id: str = "") -> dict[str, Any]:
    return {"chosen_options": [option], "params_input": {"order_id": order_id},
            "responded_at": AT, "responded_by_user": {"id": "7", "name": "alice"}}


def placed(control: Control, orders: list[dict[str, Any]]) -> list[list[str]]:
    """The order ids the sandbox holds for each order's wallet."""
    return [[o["order_id"] for o in control.orders(order["target_address"])]
            for order in orders]


def test_a_lost_answer_asks_then_placed_goes_on_with_that_order(journal, asked, control,
                                                               conn):
    op, orders = batch(control, conn)
    # The sandbox places the buy-count, then drops the connection: the answer is lost.
    control.fault(kind="drop", path="/energy/buy-count", count=1)
    context = a_try()
    with pytest.raises(Waiting) as waiting:
        op.execute(context)
    [request] = asked
    assert request["ti_id"] == context["task_instance"].id
    assert orders[1]["target_address"] in request["body"]
    assert waiting.value.method_name == "execute_answer"
    identity = orders[1]["purchase_key"]
    assert waiting.value.kwargs["identity"] == identity
    # Stopped at the unknown order: the one before it bought, the one after it not yet.
    first, unknown, last = placed(control, orders)
    assert len(first) == 1 and len(unknown) == 1 and last == []

    results = op.execute_answer(context, answer(PLACED, unknown[0]), **waiting.value.kwargs)
    assert [r["order_id"] for r in results[:2]] == [first[0], unknown[0]]
    assert [r["reused"] for r in results] == [True, True, False]
    assert placed(control, orders) == [first, unknown, [results[2]["order_id"]]]
    entry = journal.latest(identity)
    assert (entry.state, entry.order_id) == (EntryState.PLACED, unknown[0])
    assert entry.resolved_by.startswith("alice (Airflow")
    assert entry.quoted_energy == 130_000  # the quote the order was checked against


def test_placed_with_another_orders_id_records_nothing_and_buys_nothing_more(
        journal, asked, control, conn):
    """The id of the batch's first order (another wallet, another amount, already held by
    its own purchase) offered for the unknown second one: refused, both sides named."""
    op, orders = batch(control, conn)
    control.fault(kind="drop", path="/energy/buy-count", count=1)
    context = a_try()
    with pytest.raises(Waiting) as waiting:
        op.execute(context)
    first, unknown, _ = placed(control, orders)

    with pytest.raises(AirflowException) as raised:
        op.execute_answer(context, answer(PLACED, first[0]), **waiting.value.kwargs)
    assert not isinstance(raised.value, AirflowFailException)  # the retry asks again
    message = str(raised.value)
    assert (f"target address: journaled {orders[1]['target_address']}; order "
            f"{orders[0]['target_address']}") in message
    assert "energy: journaled 130,000; order 65,000" in message
    assert f"already held by purchase {orders[0]['purchase_key']!r}" in message
    entry = journal.latest(orders[1]["purchase_key"])
    assert (entry.state, entry.order_id) == (EntryState.SENDING, None)
    assert placed(control, orders) == [first, unknown, []]


def asked_after_a_500(control, conn):
    """A batch asking about its second order, which a 500 met before processing (the client
    cannot tell that from a lost answer): the operator, its orders, the try, the kwargs."""
    op, orders = batch(control, conn)
    control.fault(kind="error", status=500, path="/energy/buy-count", count=1)
    context = a_try()
    with pytest.raises(Waiting) as waiting:
        op.execute(context)
    return op, orders, context, waiting.value.kwargs


def test_not_placed_buys_that_order_once_and_the_rest(journal, asked, control, conn):
    op, orders, context, kwargs = asked_after_a_500(control, conn)
    assert [len(ids) for ids in placed(control, orders)] == [1, 0, 0]

    results = op.execute_answer(context, answer(NOT_PLACED), **kwargs)
    assert placed(control, orders) == [[r["order_id"]] for r in results]
    assert [r["reused"] for r in results] == [True, False, False]
    assert [(e.attempt, e.state) for e in sorted(
        journal.list(identity=orders[1]["purchase_key"]), key=lambda e: e.attempt)] == [
        (1, EntryState.NOT_PLACED), (2, EntryState.PLACED)]


def test_abort_stops_the_batch_and_buys_nothing_more(journal, asked, control, conn):
    op, orders, context, kwargs = asked_after_a_500(control, conn)
    with pytest.raises(AirflowFailException, match="chose to abort"):
        op.execute_answer(context, answer(ABORT), **kwargs)
    assert [len(ids) for ids in placed(control, orders)] == [1, 0, 0]
    assert journal.latest(orders[1]["purchase_key"]).state is EntryState.SENDING


def test_a_second_unknown_outcome_waits_for_the_next_try_which_asks_about_it(
        journal, asked, control, conn):
    """Airflow keeps one Required Action per try, and a second request in the same try
    would keep the first one's text: the try fails (retryable) and the next one asks."""
    op, orders = batch(control, conn)
    control.fault(kind="error", status=500, path="/energy/buy-count", count=1)
    context = a_try()
    with pytest.raises(Waiting) as waiting:
        op.execute(context)
    control.fault(kind="error", status=500, path="/energy/buy", count=1)  # hits b1
    with pytest.raises(AirflowException, match="next try asks") as raised:
        op.execute_answer(context, answer(NOT_PLACED), **waiting.value.kwargs)
    assert not isinstance(raised.value, AirflowFailException)
    assert len(asked) == 1
    assert [len(ids) for ids in placed(control, orders)] == [1, 1, 0]

    retry = a_try(context["ti"].run_id)
    with pytest.raises(Waiting) as waiting:
        op.execute(retry)
    assert len(asked) == 2 and orders[2]["target_address"] in asked[1]["body"]
    assert asked[1]["ti_id"] == retry["task_instance"].id
    assert waiting.value.kwargs["identity"] == orders[2]["purchase_key"]
    results = op.execute_answer(retry, answer(NOT_PLACED), **waiting.value.kwargs)
    assert [r["reused"] for r in results] == [True, True, False]
    assert placed(control, orders) == [[r["order_id"]] for r in results]


def test_on_ambiguous_ask_is_accepted_and_a_bad_rendered_value_buys_nothing(control, conn):
    TronEnergyBatchBuyOperator(task_id="t", orders=[], on_ambiguous="ask", max_spend_trx=None)
    op, orders = batch(control, conn)
    op.on_ambiguous = "maybe"  # what a template rendered at run time
    with pytest.raises(AirflowFailException, match="on_ambiguous"):
        op.execute(a_try())
    assert placed(control, orders) == [[], [], []]


def test_a_plan_is_taken_as_its_count_orders_then_its_buy_orders():
    plan = {"count_orders": [{"target_address": "T", "count": 2, "purchase_key": "k:c0"}],
            "buy_orders": [{"target_address": "T", "energy_amount": 131_000,
                            "purchase_key": "k:b0"}], "transfers": 3}
    assert [o["purchase_key"] for o in checked_orders(plan)] == ["k:c0", "k:b0"]
    assert checked_orders({"count_orders": [], "buy_orders": []}) == []
