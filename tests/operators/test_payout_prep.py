"""The shipped payout preparation (operators/payout_prep.py, payout_pipeline.py) in a user's
own DAG, no example code, in real Airflow (dag.test()) against the sandbox. Orders are
counted at the sandbox, never taken from the tasks' own report."""

from __future__ import annotations

from decimal import Decimal

import payout_prep_user as user
import pytest

from tronenergy_protocol.address import random_address


def test_a_users_dag_prepares_a_batch_once(run_dag, control, tmp_path):
    sender = control.activated()
    holder, newcomer = control.activated(holder=True), random_address()
    payouts = tmp_path / "payroll.csv"
    payouts.write_text(f"{holder},10.5\n{newcomer},2\n")
    conf = {"payouts_file": str(payouts), "sender": sender}
    out = run_dag(user.dag, **conf)
    assert out["__run__"] == "success", out
    ready = out["publish_batch_ready"][2]
    assert ready["transfers"] == 2 and ready["activations"] == 1
    orders = control.orders(sender)
    assert sorted((o["kind"], o["energy_amount"]) for o in orders) == [
        ("buy", 131_000), ("buy_count", 65_000)]
    assert Decimal(ready["energy_cost"]) == sum(Decimal(str(o["cost"])) for o in orders)
    assert newcomer in {o["target_address"] for o in control.orders() if o["kind"] == "activate"}
    # The same batch again (a rerun of the day): nothing bought or activated twice.
    before = len(control.orders())
    again = run_dag(user.dag, **conf)
    assert again["__run__"] == "success", again
    assert len(control.orders()) == before


def test_a_spend_over_max_spend_trx_fails_at_the_plan_before_any_activation(
        run_dag, control, tmp_path):
    sender = control.activated()
    payouts = tmp_path / "payroll.csv"
    payouts.write_text(f"{random_address()},1\n")
    before = len(control.orders())
    out = run_dag(user.dag, payouts_file=str(payouts), sender=sender, max_spend="0.5")
    assert out["__run__"] == "failed"
    assert out["plan_energy"][:2] == ("failed", 1)  # refused, not retried
    assert out["activate_recipients"][0] == "upstream_failed"
    assert len(control.orders()) == before


def test_rows_rendered_as_text_are_refused_not_read():
    """``payouts="{{ ... }}"`` in a DAG that renders templates as text hands over a string:
    refused, naming the fix, before anything (not parsed, not retried)."""
    from airflow.providers.common.compat.sdk import AirflowFailException

    from airflow_provider_tronenergy.operators.payout_prep import TronPayoutLoadOperator

    load = TronPayoutLoadOperator(task_id="load_payouts", payouts="[{'recipient': 'T'}]",
                                  sender_address=random_address(), max_spend_trx="10")
    with pytest.raises(AirflowFailException, match="render_template_as_native_obj"):
        load.execute({})
