"""Purchase operators driven by dag_run.conf (tests/operators)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pendulum
from airflow.sdk import DAG

from airflow_provider_tronenergy.operators.address import TronEnergyActivateAddressOperator
from airflow_provider_tronenergy.operators.energy import (
    TronEnergyAutoBuyOperator,
    TronEnergyBuyByCountOperator,
    TronEnergyBuyOperator,
    TronEnergySmartBuyOperator,
)
from airflow_provider_tronenergy.purchase import Buy

START = pendulum.datetime(2026, 1, 1, tz="UTC")
CONF = "{{ dag_run.conf['%s'] }}"


class DiesAfterOrderOperator(TronEnergyBuyOperator):
    """Simulates a worker that dies right after the order was placed and recorded."""

    def _finish(self, result: dict[str, Any], context: Any) -> dict[str, Any]:
        if context["ti"].try_number == 1:
            raise RuntimeError("simulated worker death after the purchase")
        return super()._finish(result, context)


@dataclass(frozen=True)
class DiesMidRequest(Buy):
    """A buy whose worker dies after sending the purchase, in the task's first try."""

    try_number: int = 1

    def place(self, client: Any, request: dict[str, Any]) -> Any:
        purchase = super().place(client, request)
        if self.try_number == 1:
            raise RuntimeError("simulated worker death mid-request")
        return purchase


class DiesMidRequestOperator(TronEnergyBuyOperator):
    """Simulates a worker that dies after sending the purchase, before reading the answer."""

    def order(self) -> Buy:
        return DiesMidRequest(**vars(super().order()), try_number=self._try_number)

    def execute(self, context: Any) -> Any:
        self._try_number = context["ti"].try_number
        return super().execute(context)


RETRY = {"retries": 1, "retry_delay": timedelta(0)}


def _buy(dag_id: str, **dag_args: Any) -> DAG:
    with DAG(dag_id, schedule=None, start_date=START, catchup=False, **dag_args) as dag:
        TronEnergyBuyOperator(
            task_id="buy", target_address=CONF % "target", energy_amount=CONF % "energy",
            rent_time=CONF % "rent_time", max_order_trx="{{ dag_run.conf.get('max_order') }}",
            dry_run="{{ dag_run.conf.get('dry_run', False) }}",
            wait_for_completion=True, poll_interval_seconds=0.05,
        )
    return dag


te_buy = _buy("te_buy")
te_buy_retrying = _buy("te_buy_retrying", default_args=RETRY)  # shows what is not retried

with DAG("te_buy_deferred", schedule=None, start_date=START, catchup=False) as te_buy_deferred:
    TronEnergyBuyOperator(task_id="buy", target_address=CONF % "target", wait_for_completion=True,
                          deferrable=True, poll_interval_seconds=0.05)

with DAG("te_modes", schedule=None, start_date=START, catchup=False) as te_modes:
    TronEnergyAutoBuyOperator(task_id="auto_buy", from_address=CONF % "sender",
                              to_address=CONF % "new_recipient", rent_time=24)
    TronEnergyBuyByCountOperator(task_id="buy_count", target_address=CONF % "sender",
                                 count=CONF % "count", rent_time=0.25)
    TronEnergySmartBuyOperator(task_id="smart_buy", receiver_address=CONF % "sender",
                               to_address=CONF % "inactive_recipient",
                               wait_for_completion=True, poll_interval_seconds=0.05)

with DAG("te_retry_reuse", schedule=None, start_date=START, catchup=False,
         default_args={"retries": 1, "retry_delay": timedelta(0)}) as te_retry_reuse:
    DiesAfterOrderOperator(task_id="buy", target_address=CONF % "target")

for on_ambiguous in ("fail", "rebuy"):
    with DAG(f"te_mid_request_{on_ambiguous}", schedule=None, start_date=START,
             catchup=False, default_args=RETRY) as mid_request:
        DiesMidRequestOperator(task_id="buy", target_address=CONF % "target",
                               on_ambiguous=on_ambiguous)
    with DAG(f"te_dropped_{on_ambiguous}", schedule=None, start_date=START,
             catchup=False, default_args=RETRY) as dropped:
        TronEnergyBuyOperator(task_id="buy", target_address=CONF % "target",
                              on_ambiguous=on_ambiguous)
    globals()[mid_request.dag_id] = mid_request
    globals()[dropped.dag_id] = dropped

with DAG("te_buy_keyed", schedule=None, start_date=START, catchup=False) as te_buy_keyed:
    TronEnergyBuyOperator(task_id="buy", target_address=CONF % "target", purchase_key=CONF % "key",
                          wait_for_completion=True, poll_interval_seconds=0.05)

# Retried on an ordinary failure: a refusal that must not be retried shows as one try.
with DAG("te_guarded", schedule=None, start_date=START, catchup=False,
         default_args=RETRY) as te_guarded:
    TronEnergyBuyOperator(task_id="buy", target_address=CONF % "target")

with DAG("te_count", schedule=None, start_date=START, catchup=False,
         default_args=RETRY) as te_count:
    TronEnergyBuyByCountOperator(task_id="buy_count", target_address=CONF % "target",
                                 count=CONF % "count")

with DAG("te_activate_guarded", schedule=None, start_date=START, catchup=False,
         default_args=RETRY) as te_activate_guarded:
    TronEnergyActivateAddressOperator(task_id="activate", addresses=[CONF % "address"])

# A purchase under one key whose placed order is never reused (it cannot have 2 h of a 1 h
# rental left): every run and every rebuy buys again, up to max_spend_trx.
with DAG("te_buy_spend", schedule=None, start_date=START, catchup=False,
         default_args=RETRY) as te_buy_spend:
    TronEnergyBuyOperator(task_id="buy", target_address=CONF % "target",
                          purchase_key=CONF % "key", reuse_min_validity_seconds=7200,
                          on_ambiguous="rebuy", max_spend_trx=CONF % "max_spend")
