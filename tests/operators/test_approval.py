"""The approval gate's own decisions, without a deployment: when it asks, what it stores.

The deployment test answers real requests; these pin what it cannot see cheaply: a
quote at the threshold asks nobody, a bad threshold fails before any request, and a
rejection stores who rejected before the rest of the run is skipped (skipping ends
the call with an exception, so a returned value alone would be lost).
"""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

import pendulum
import pytest
from airflow.providers.common.compat.sdk import AirflowFailException
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

from airflow_provider_tronenergy.operators.approval import TronEnergyBatchApprovalOperator
from airflow_provider_tronenergy.payout import approvals

PLAN = {"total_cost_quote": "9.92", "transfers": 2, "sender": "TSender"}
AT = datetime(2026, 11, 23, 17, 5, tzinfo=timezone.utc)


def _gate(threshold):
    with DAG("approval_unit", schedule=None, start_date=pendulum.datetime(2026, 1, 1)):
        gate = TronEnergyBatchApprovalOperator(task_id="approve", plan=PLAN,
                                               approval_above_trx=threshold)
        gate >> EmptyOperator(task_id="activate")
    pushed = {}
    ti = SimpleNamespace(xcom_push=lambda key, value: pushed.__setitem__(key, value),
                         task_id="approve", map_index=-1)
    return gate, {"ti": ti, "task_instance": ti, "task": gate}, pushed


@pytest.mark.parametrize("threshold", ["", None, "9.92", "10"])
def test_at_or_below_the_threshold_nobody_is_asked(threshold):
    gate, context, _ = _gate(threshold)
    result = gate.execute(context)  # would need a supervisor if it asked
    assert result["required"] is False and result["approved"] is True


def test_by_default_a_batch_that_spends_anything_asks():
    """A gate whose threshold nobody set asks above 0 TRX; a batch spending nothing goes
    on (empty or None is the written-out "never ask")."""
    with DAG("approval_default", schedule=None, start_date=pendulum.datetime(2026, 1, 1)):
        gate = TronEnergyBatchApprovalOperator(task_id="approve", plan=PLAN)
        free = TronEnergyBatchApprovalOperator(task_id="free", plan={**PLAN,
                                                                      "total_cost_quote": "0"})
    assert approvals.needs_approval(gate.plan, gate._threshold()) is True
    ti = SimpleNamespace(xcom_push=lambda key, value: None, task_id="free", map_index=-1)
    result = free.execute({"ti": ti, "task_instance": ti, "task": free})
    assert result["required"] is False and result["approved"] is True


def test_a_bad_threshold_fails_before_asking():
    gate, context, _ = _gate("-5")
    with pytest.raises(AirflowFailException, match="approval_above_trx"):
        gate.execute(context)


def test_a_rejection_is_stored_before_the_rest_is_skipped():
    try:
        from airflow.sdk.exceptions import DownstreamTasksSkipped
    except ImportError:  # Airflow 3.1
        from airflow.exceptions import DownstreamTasksSkipped

    gate, context, pushed = _gate("5")
    event = {"chosen_options": ["Reject"], "params_input": {}, "responded_at": AT,
             "responded_by_user": {"id": "7", "name": "alice"}}
    with pytest.raises(DownstreamTasksSkipped):
        gate.execute_complete(context, event)
    assert pushed["return_value"]["approved"] is False
    assert pushed["return_value"]["by"] == "alice"
    assert pushed["return_value"]["at"] == AT.isoformat()


def test_an_approval_is_returned():
    gate, context, pushed = _gate("5")
    event = {"chosen_options": ["Approve"], "params_input": {}, "responded_at": AT,
             "responded_by_user": {"id": "7", "name": "alice"}}
    result = gate.execute_complete(context, event)
    assert result["approved"] is True and result["by"] == "alice" and pushed == {}
