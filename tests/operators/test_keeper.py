"""The keeper's approval gate without a deployment: it asks only about what the keeper left
for a person, lists it, and hands the buying task the wallets and costs approved."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal
from types import SimpleNamespace

import pendulum
import pytest
from airflow.providers.common.compat.sdk import AirflowFailException, AirflowSkipException
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

from airflow_provider_tronenergy.keeper.reading import Seen
from airflow_provider_tronenergy.keeper.watch import Wake
from airflow_provider_tronenergy.operators.keeper import (
    TronEnergyKeeperApprovalOperator,
    TronEnergyKeeperOperator,
    approved_costs,
    wakes,
)

AT = datetime(2026, 11, 26, 6, 0, tzinfo=timezone.utc)
W1, W2 = "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8", "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"


def decision(address: str, action: str, cost: str = "0") -> dict:
    return {"address": address, "action": action, "energy": 500_000, "cost": cost,
            "available": 1_000, "incoming": 0, "floor": 200_000, "budget_left": "100",
            "reason": "below the floor by 199,000"}


def _gate(kept):
    with DAG("keeper_approval_unit", schedule=None, start_date=pendulum.datetime(2026, 1, 1)):
        gate = TronEnergyKeeperApprovalOperator(task_id="approve", kept=kept)
        gate >> EmptyOperator(task_id="buy_approved")
    ti = SimpleNamespace(xcom_push=lambda key, value: None, task_id="approve", map_index=-1)
    return gate, {"ti": ti, "task_instance": ti, "task": gate}


def test_nothing_left_for_a_person_skips_without_asking():
    gate, context = _gate({"decisions": [decision(W1, "buy", "18"), decision(W2, "hold")]})
    with pytest.raises(AirflowSkipException, match="nothing to approve"):
        gate.execute(context)


def test_an_approval_hands_over_the_wallets_and_costs_asked():
    gate, context = _gate({"decisions": [decision(W1, "ask", "22.5"), decision(W2, "buy")]})
    event = {"chosen_options": ["Approve"], "params_input": {}, "responded_at": AT,
             "responded_by_user": {"id": "7", "name": "alice"}}
    assert gate.execute_complete(context, event) == {"approved": {W1: "22.5"}}
    assert approved_costs({"approved": {W1: "22.5"}}) == {W1: Decimal("22.5")}


def test_a_rejection_skips_the_buying_task():
    try:
        from airflow.sdk.exceptions import DownstreamTasksSkipped
    except ImportError:  # Airflow 3.1
        from airflow.exceptions import DownstreamTasksSkipped

    gate, context = _gate({"decisions": [decision(W1, "ask", "22.5")]})
    event = {"chosen_options": ["Reject"], "params_input": {}, "responded_at": AT,
             "responded_by_user": {"id": "7", "name": "alice"}}
    with pytest.raises(DownstreamTasksSkipped):
        gate.execute_complete(context, event)


def _event(payload):
    return SimpleNamespace(extra={"from_trigger": True, "payload": payload})


def test_a_woken_run_hands_the_keeper_what_its_watcher_read():
    """The triggering Asset events carry the watcher's reading (the trigger's payload): the
    newest per wallet of this keeper; another keeper's, or a payload that is not a whole
    reading (hand-made, an older watcher's), gives nothing and the run reads the chain."""
    older = Wake("hot", W1, 300_000, 250_000, 1_000.0, 200_000, "below the floor")
    newer = Wake("hot", W1, 300_000, 280_000, 1_030.0, 200_000, "below the floor, still")
    other = Wake("cold", W2, 1, 1, 1_030.0, 200_000, "below the floor")
    context = {"triggering_asset_events": {"asset": [
        _event(newer.to_dict()), _event(older.to_dict()), _event(other.to_dict()),
        _event({"keeper": "hot", "wallet": W2, "available": 5}),  # no figures to use
        _event({"keeper": "hot", "wallet": W2, "limit": True, "used": 0, "read_at": 1.0}),
        SimpleNamespace(extra=None)]}}
    assert wakes(context, "hot") == {W1: Seen(W1, 300_000, 280_000, 1_030.0)}
    assert wakes({}, "hot") == {}  # a scheduled or manual run: nothing woke it


def test_a_rent_time_purchases_refuse_stops_the_keeper_before_it_reads_or_buys(
        conn, node_conn, control, journal):
    """0.08 h is quoted by the price endpoint but bought by no purchase endpoint: the keeper
    task fails for good (no retry) before its first request to the service, not inside a
    wallet's purchase after the wallets before it bought."""
    wallets = [control.wallet(trx="10"), control.wallet(trx="10")]  # both below the floor
    for method, path in (("GET", "/energy/price"), ("POST", "/energy/buy")):
        control.fault(kind="latency", path=path, method=method, latency_ms=0)
    keeper = TronEnergyKeeperOperator(
        task_id="keep", wallets=wallets, floor="200000", target="500000",
        max_price_per_10k_trx="0.5",
        max_daily_spend_trx="100", rent_time="0.08")
    ti = SimpleNamespace(dag_id="keeper_rent_time", run_id="run-1", map_index=-1)
    with pytest.raises(AirflowFailException, match=r"rent_time: 0\.08 h .* one of 1 "
                       r"\(purchases accept 0\.25, 1, 24,") as refused:
        keeper.execute({"ti": ti, "task_instance": ti})
    assert "nothing was bought" in str(refused.value)
    assert [f["fired"] for f in control.faults()] == [0, 0]  # no price read, no buy sent
    assert [o for w in wallets for o in control.orders(w)] == []
    assert journal.with_prefix("keeper:") == []
