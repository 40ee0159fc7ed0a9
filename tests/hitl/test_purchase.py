"""``on_ambiguous="ask"``: what each answer does to the journal and the purchase.

The real deployment (tests/e2e/test_people_in_the_loop.py) answers "placed" and
"not placed" through Airflow's REST API; these drive the same resume method with
the answers a deployment run does not give: abort, no answer in time, "placed"
without an order id or with one that is not an order id, and an answer that
arrives after the unknown outcome was resolved on the command line. Real sandbox,
real journal (SQLite), no Airflow scheduler.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from decimal import Decimal
from types import SimpleNamespace

import pytest
from airflow.providers.common.compat.sdk import AirflowException, AirflowFailException

from airflow_provider_tronenergy.hitl.purchase import ABORT, NOT_PLACED, OPTIONS, PLACED, question
from airflow_provider_tronenergy.operators.energy import TronEnergyBuyByCountOperator
from airflow_provider_tronenergy.purchase_journal import EntryState

AT = datetime(2026, 11, 23, 17, 5, tzinfo=timezone.utc)


def _unknown(journal, control, conn):
    """A buy-count operator and the journal's unknown attempt at its purchase."""
    target = control.activated()
    op = TronEnergyBuyByCountOperator(
        task_id="buy", target_address=target, count=2, tronenergy_conn_id=conn,
        purchase_key=f"test:{uuid.uuid4().hex}", on_ambiguous="ask")
    ti = SimpleNamespace(dag_id="d", run_id="r", task_id="buy", map_index=-1)
    context = {"ti": ti, "task_instance": ti}
    order = op.order()
    request = order.request(order.call(op.hook.get_conn().endpoints))
    entry = journal.claim(op.purchase_key, None, scope="d/r/buy/-1", explicit_key=True,
                          mode=op.mode, target_address=target,
                          description=f"buy_count 130,000 energy for {target}",
                          request=request, rent_hours=Decimal(1))
    return op, context, entry


def _answer(option, order_id=""):
    return {"chosen_options": [option], "params_input": {"order_id": order_id},
            "responded_at": AT, "responded_by_user": {"id": "7", "name": "alice"}}


def test_the_question_names_the_purchase_and_the_three_answers(journal, control, conn):
    _, _, entry = _unknown(journal, control, conn)
    subject, body = question(entry, "no answer from POST /energy/buy-count")
    assert entry.description in subject
    assert "may or may not have been placed" in body and entry.target_address in body
    assert all(f"**{option}**" in body for option in OPTIONS)
    assert entry.identity in body


def test_abort_fails_buys_nothing_and_keeps_the_outcome_unknown(journal, control, conn):
    op, context, entry = _unknown(journal, control, conn)
    with pytest.raises(AirflowFailException, match=r"alice .* chose to abort"):
        op.execute_answer(context, _answer(ABORT), entry.identity, entry.attempt)
    latest = journal.latest(entry.identity)
    assert latest.state is EntryState.SENDING and "abort chosen by alice" in latest.note
    assert control.orders(entry.target_address) == []


def test_no_answer_in_time_fails_and_buys_nothing(journal, control, conn):
    op, context, entry = _unknown(journal, control, conn)
    event = {"error": "The timeout has passed", "error_type": "timeout"}
    with pytest.raises(AirflowFailException, match="nobody answered"):
        op.execute_answer(context, event, entry.identity, entry.attempt)
    assert journal.latest(entry.identity).state is EntryState.SENDING
    assert control.orders(entry.target_address) == []


@pytest.mark.parametrize("order_id", ["", "   ", "has spaces in it"])
def test_placed_without_a_usable_order_id_records_nothing_and_may_be_retried(
        journal, control, conn, order_id):
    op, context, entry = _unknown(journal, control, conn)
    with pytest.raises(AirflowException) as raised:
        op.execute_answer(context, _answer(PLACED, order_id), entry.identity, entry.attempt)
    assert not isinstance(raised.value, AirflowFailException)  # a retry asks again
    assert journal.latest(entry.identity).state is EntryState.SENDING
    assert control.orders(entry.target_address) == []


def test_placed_with_an_order_id_goes_on_with_that_order(journal, control, conn):
    op, context, entry = _unknown(journal, control, conn)
    # Stands for the order the person found in the console: 2 transfers' energy, 1 hour.
    order_id = control.buy(entry.target_address, 130_000)
    before = len(control.orders())
    result = op.execute_answer(context, _answer(PLACED, order_id), entry.identity,
                               entry.attempt)
    assert result["order_id"] == order_id and result["reused"] is True
    assert len(control.orders()) == before
    latest = journal.latest(entry.identity)
    assert (latest.state, latest.order_id) == (EntryState.PLACED, order_id)
    assert latest.resolved_by.startswith("alice (Airflow")


@pytest.mark.parametrize(("wrong", "both_sides"), [
    ("target", "target address: journaled {target}; order {other}"),
    ("energy", "energy: journaled 130,000; order 65,000"),
    ("held", "already held by purchase 'test:"),
])
def test_placed_with_another_purchases_order_records_nothing_and_may_be_retried(
        journal, control, conn, wrong, both_sides):
    op, context, entry = _unknown(journal, control, conn)
    other = control.activated()
    if wrong == "target":
        order_id = control.buy(other, 130_000)
    elif wrong == "energy":
        order_id = control.buy(entry.target_address, 65_000)
    else:  # right target and energy, but another purchase placed it
        order_id = control.buy(entry.target_address, 130_000)
        journal.record_placed(_unknown(journal, control, conn)[2], order_id, {})
    orders = len(control.orders())
    with pytest.raises(AirflowException) as raised:
        op.execute_answer(context, _answer(PLACED, order_id), entry.identity, entry.attempt)
    assert not isinstance(raised.value, AirflowFailException)  # a retry asks again
    message = str(raised.value)
    assert both_sides.format(target=entry.target_address, other=other) in message, message
    assert "Nothing was recorded" in message and "--force --reason" in message
    latest = journal.latest(entry.identity)
    assert (latest.state, latest.order_id) == (EntryState.SENDING, None)
    assert f"order {order_id} from alice (Airflow" in latest.note
    assert len(control.orders()) == orders  # nothing bought


def test_not_placed_buys_once(journal, control, conn):
    op, context, entry = _unknown(journal, control, conn)
    result = op.execute_answer(context, _answer(NOT_PLACED), entry.identity, entry.attempt)
    orders = control.orders(entry.target_address)
    assert [o["order_id"] for o in orders] == [result["order_id"]]
    assert [(e.attempt, e.state) for e in sorted(
        journal.list(identity=entry.identity), key=lambda e: e.attempt)] == [
        (1, EntryState.NOT_PLACED), (2, EntryState.PLACED)]


def test_an_answer_after_a_command_line_resolve_follows_the_journal(journal, control, conn):
    op, context, entry = _unknown(journal, control, conn)
    journal.resolve(entry.identity, not_placed=True, by="bob")
    # The person in Airflow said "placed" (without an id) too late: the journal decides.
    result = op.execute_answer(context, _answer(PLACED), entry.identity, entry.attempt)
    assert [o["order_id"] for o in control.orders(entry.target_address)] == \
        [result["order_id"]]
    assert journal.list(identity=entry.identity)[-1].resolved_by == "bob"


def test_asking_writes_the_request_and_waits_for_execute_answer(journal, control, conn,
                                                                 monkeypatch):
    """What the task hands Airflow when it asks: the request, then a wait that resumes in
    ``execute_answer`` with only the journal identity and attempt (no secret). The
    request's channel to the API server (the task supervisor) stands in as a recorder."""
    from uuid import uuid4

    import airflow.sdk.execution_time.hitl as hitl
    from airflow.providers.common.compat.sdk import TaskDeferred

    from airflow_provider_tronenergy.hitl.purchase import parks_tasks
    from airflow_provider_tronenergy.purchase import UnknownOutcome

    written = []
    monkeypatch.setattr(hitl, "upsert_hitl_detail", lambda **kw: written.append(kw))
    op, context, entry = _unknown(journal, control, conn)
    context["task_instance"] = SimpleNamespace(id=uuid4())
    if parks_tasks():
        from airflow.sdk.exceptions import TaskAwaitingInput as Waiting
    else:
        Waiting = TaskDeferred
    with pytest.raises(Waiting) as waiting:
        op._ask(context, UnknownOutcome(entry, "no answer"))
    [request] = written
    assert request["options"] == OPTIONS and request["multiple"] is False
    assert request["params"]["order_id"]["value"] == ""
    assert entry.description in request["subject"] and "no answer" in request["body"]
    assert waiting.value.method_name == "execute_answer"
    assert waiting.value.kwargs == {"identity": entry.identity, "attempt": entry.attempt}
    if not parks_tasks():  # Airflow < 3.3: the standard provider's trigger polls for it
        classpath, kwargs = waiting.value.trigger.serialize()
        assert classpath.endswith("triggers.hitl.HITLTrigger")
        assert kwargs["ti_id"] == context["task_instance"].id and kwargs["options"] == OPTIONS
    assert journal.latest(entry.identity).state is EntryState.SENDING
    assert control.orders(entry.target_address) == []
