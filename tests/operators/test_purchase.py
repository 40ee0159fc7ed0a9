"""Purchase operators in real Airflow (dag.test() on SQLite) against the sandbox."""

from __future__ import annotations

from decimal import Decimal

import operators_purchase as dags
import pytest

from tronenergy_protocol.address import random_address


def test_buy_with_templated_values_waits_for_success(run_dag, control):
    target = control.activated()
    out = run_dag(dags.te_buy, target=target, energy="131000", rent_time="1")
    state, tries, result = out["buy"]
    assert (state, tries) == ("success", 1)
    assert result["status"] == "success" and len(result["tx_hash"]) == 64
    assert result["energy_amount"] == 131000
    assert Decimal(result["cost"]) == Decimal("5.895")
    assert Decimal(result["burn_cost"]) == Decimal("13.1")
    assert Decimal(result["saving"]) == Decimal("13.1") - Decimal("5.895")
    assert isinstance(result["cost"], str)  # JSON-safe exact decimals, never floats
    assert [o["order_id"] for o in control.orders(target)] == [result["order_id"]]


@pytest.mark.parametrize(
    ("conf", "balance", "reason"),
    [
        ({"max_order": "2.9"}, "1000", "max_order"),  # 65,000 energy costs 2.925
        ({}, "2.5", "balance"),
        ({"dry_run": "True"}, "1000", "dry_run"),
    ],
)
def test_money_guards_buy_nothing(run_dag, control, conf, balance, reason):
    target = control.activated()
    control.balance(balance)
    out = run_dag(dags.te_buy, target=target, energy="65000", rent_time="1", **conf)
    state, _, result = out["buy"]
    assert control.orders(target) == []
    if reason == "dry_run":
        assert state == "success"
        assert result["dry_run"] is True
        assert result["quote"]["total"] == "2.925"
    else:
        assert state == "failed"


@pytest.mark.parametrize(
    "conf",
    [
        {"energy": "65000", "rent_time": "1", "target": "T" + "1" * 33},  # bad checksum
        {"energy": "65000", "rent_time": "2"},  # unsupported rent_time
        {"energy": "31999", "rent_time": "1"},  # under min_energy
        {"energy": "many", "rent_time": "1"},
        {"energy": "65000", "rent_time": "1", "dry_run": "Ture"},  # a typo is no real buy
    ],
)
def test_bad_input_fails_before_any_money_moves(run_dag, control, conf):
    target = control.activated()
    before = len(control.orders())
    out = run_dag(dags.te_buy_retrying, **{"target": target, **conf})
    assert out["buy"][:2] == ("failed", 1)  # the DAG retries once: bad input is not retried
    assert len(control.orders()) == before


def test_every_mode_buys_what_it_should(run_dag, control):
    sender = control.activated()
    new_recipient = random_address()
    inactive = random_address()
    out = run_dag(dags.te_modes, sender=sender, new_recipient=new_recipient,
                  inactive_recipient=inactive, count="3")
    assert out["__run__"] == "success"
    auto = out["auto_buy"][2]
    assert auto["energy_amount"] == 131000 and auto["rent_time"] == "24"
    assert auto["quote"] is None  # the price endpoint does not quote 24 h rentals
    count = out["buy_count"][2]
    assert count["energy_amount"] == 3 * 65000 and count["rent_time"] == "0.25"
    smart = out["smart_buy"][2]
    assert smart["activated"] is True and smart["status"] == "success"
    assert Decimal(smart["cost"]) == Decimal("5.895") + Decimal("1.1")
    assert len(control.orders(sender)) == 3


def test_retry_after_order_placed_buys_nothing_more(run_dag, control):
    target = control.activated()
    out = run_dag(dags.te_retry_reuse, target=target)
    state, tries, result = out["buy"]
    assert (state, tries) == ("success", 2)
    assert result["reused"] is True
    assert len(control.orders(target)) == 1
    assert result["order_id"] == control.orders(target)[0]["order_id"]


def test_retry_after_death_mid_request_refuses_to_guess(run_dag, control):
    target = control.activated()
    out = run_dag(dags.te_mid_request_fail, target=target)
    assert out["buy"][:2] == ("failed", 2)
    assert len(control.orders(target)) == 1


def test_rebuy_after_death_mid_request_when_asked(run_dag, control):
    target = control.activated()
    out = run_dag(dags.te_mid_request_rebuy, target=target)
    assert out["buy"][:2] == ("success", 2)
    assert len(control.orders(target)) == 2


def test_dropped_answer_is_ambiguous_and_never_resent(run_dag, control):
    target = control.activated()
    control.fault(kind="drop", path="/energy/buy", count=1)
    out = run_dag(dags.te_dropped_fail, target=target)
    assert out["buy"][:2] == ("failed", 1)  # no retry: a human must look
    assert len(control.orders(target)) == 1  # the dropped request did buy


def test_dropped_answer_with_rebuy_retries_once(run_dag, control):
    target = control.activated()
    control.fault(kind="drop", path="/energy/buy", count=1)
    out = run_dag(dags.te_dropped_rebuy, target=target)
    assert out["buy"][:2] == ("success", 2)
    assert len(control.orders(target)) == 2


def test_failed_order_fails_the_task(run_dag, control):
    target = control.activated()
    control.fail_next_orders(1)
    out = run_dag(dags.te_buy, target=target, energy="65000", rent_time="1")
    assert out["buy"][:2] == ("failed", 1)
    assert control.orders(target)[0]["status"] == "failed"


def test_deferrable_wait(run_dag, control):
    target = control.activated()
    out = run_dag(dags.te_buy_deferred, target=target)
    state, _, result = out["buy"]
    assert state == "success"
    assert result["status"] == "success"


@pytest.mark.parametrize(("retryable", "fails_for_good"), [(False, True), (None, False)])
def test_a_deferred_wait_refused_for_good_fails_the_task_once(retryable, fails_for_good):
    """The trigger's ``error`` with ``"retryable": false`` (the connection's key or secret
    refused): no retry would read the order, so the task fails once; any other ``error``
    leaves the retry, which reuses the journaled order and waits again."""
    from airflow.providers.common.compat.sdk import AirflowException, AirflowFailException

    from airflow_provider_tronenergy.operators.energy import TronEnergyBuyOperator
    from airflow_provider_tronenergy.orders.wait import order_event

    buy = TronEnergyBuyOperator(task_id="buy", target_address=random_address())
    event = order_event("ord-1", status="error", message="the service refused connection 'x'")
    if retryable is not None:
        event["retryable"] = retryable
    result = {"order_id": "ord-1", "target_address": buy.target_address}
    with pytest.raises(AirflowException, match="refused connection 'x'") as failed:
        buy.execute_complete({}, event, result)  # type: ignore[arg-type]
    assert isinstance(failed.value, AirflowFailException) is fails_for_good
