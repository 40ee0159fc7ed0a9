"""Batch and monitoring operators (and a purchase fed text numbers) driven by dag_run.conf."""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.sdk import DAG

from airflow_provider_tronenergy.operators.address import (
    TronEnergyActivateAddressOperator,
    TronEnergyCheckAddressOperator,
)
from airflow_provider_tronenergy.operators.energy import TronEnergyBuyOperator
from airflow_provider_tronenergy.operators.monitor import (
    TronEnergyAddMonitorOperator,
    TronEnergyRemoveMonitorOperator,
)

START = pendulum.datetime(2026, 1, 1, tz="UTC")

with DAG("te_check", schedule=None, start_date=START, catchup=False,
         render_template_as_native_obj=True) as te_check:
    TronEnergyCheckAddressOperator(task_id="check", addresses="{{ dag_run.conf['addresses'] }}",
                                   max_concurrency=4)

with DAG("te_check_mapped", schedule=None, start_date=START, catchup=False,
         render_template_as_native_obj=True) as te_check_mapped:
    TronEnergyCheckAddressOperator.partial(task_id="check").expand(
        addresses=["TAPSuYQbz8CA3jrTucrXFsQSs1FNXGwRH1", "TFYa9uzYUHmedMh5PrNPVQL1P4egQ5tBqe"])

with DAG("te_activate", schedule=None, start_date=START, catchup=False,
         render_template_as_native_obj=True,
         default_args={"retries": 1, "retry_delay": timedelta(0)}) as te_activate:
    TronEnergyActivateAddressOperator(task_id="activate",
                                      addresses="{{ dag_run.conf['addresses'] }}",
                                      max_order_trx="{{ dag_run.conf.get('max_order') }}",
                                      dry_run="{{ dag_run.conf.get('dry_run', False) }}")

with DAG("te_monitor", schedule=None, start_date=START, catchup=False,
         render_template_as_native_obj=True) as te_monitor:
    add = TronEnergyAddMonitorOperator(task_id="add",
                                       addresses="{{ dag_run.conf['addresses'] }}",
                                       webhook_url="http://127.0.0.1:9/callbacks", label="deposits",
                                       tokens=["USDT", "TRX"])
    add_again = TronEnergyAddMonitorOperator(task_id="add_again",
                                             addresses="{{ dag_run.conf['addresses'] }}",
                                             webhook_url="http://127.0.0.1:9/callbacks")
    strict = TronEnergyAddMonitorOperator(task_id="add_strict",
                                          addresses="{{ dag_run.conf['addresses'] }}",
                                          webhook_url="http://127.0.0.1:9/callbacks",
                                          fail_if_exists=True)
    remove = TronEnergyRemoveMonitorOperator(task_id="remove",
                                             addresses="{{ dag_run.conf['addresses'] }}",
                                             trigger_rule="all_done")
    remove_again = TronEnergyRemoveMonitorOperator(task_id="remove_again",
                                                   addresses="{{ dag_run.conf['addresses'] }}")
    add >> add_again >> strict >> remove >> remove_again

# The registration's record: the node read (or none), or nothing recorded, from the conf.
with DAG("te_monitor_recorded", schedule=None, start_date=START, catchup=False,
         render_template_as_native_obj=True) as te_monitor_recorded:
    TronEnergyAddMonitorOperator(task_id="add", addresses="{{ dag_run.conf['addresses'] }}",
                                 webhook_url="http://127.0.0.1:9/callbacks",
                                 tron_node_conn_id="{{ dag_run.conf.get('node') }}",
                                 record_registration="{{ dag_run.conf.get('record', True) }}")

RETRY = {"retries": 1, "retry_delay": timedelta(0)}

# Every batch operator on one batch, each allowed a retry: invalid input must fail at
# once (AirflowFailException, one try) and send nothing.
with DAG("te_batch_strict", schedule=None, start_date=START, catchup=False,
         render_template_as_native_obj=True, default_args=RETRY) as te_batch_strict:
    TronEnergyCheckAddressOperator(task_id="check", addresses="{{ dag_run.conf['addresses'] }}")
    TronEnergyActivateAddressOperator(task_id="activate",
                                      addresses="{{ dag_run.conf['addresses'] }}")
    TronEnergyAddMonitorOperator(task_id="add", addresses="{{ dag_run.conf['addresses'] }}",
                                 webhook_url="http://127.0.0.1:9/callbacks")
    TronEnergyRemoveMonitorOperator(task_id="remove", addresses="{{ dag_run.conf['addresses'] }}")

# Parameters other than the addresses, bad in ways only execute() can see.
with DAG("te_batch_params", schedule=None, start_date=START, catchup=False,
         render_template_as_native_obj=True, default_args=RETRY) as te_batch_params:
    TronEnergyAddMonitorOperator(task_id="add", addresses="{{ dag_run.conf['addresses'] }}",
                                 webhook_url="{{ dag_run.conf['webhook_url'] }}",
                                 tokens="{{ dag_run.conf['tokens'] }}")
    TronEnergyCheckAddressOperator(task_id="check", addresses="{{ dag_run.conf['addresses'] }}",
                                   max_concurrency=0)

# A purchase whose numbers come from text (templates render numbers to text).
with DAG("te_buy_numbers", schedule=None, start_date=START, catchup=False,
         default_args=RETRY) as te_buy_numbers:
    TronEnergyBuyOperator(task_id="buy", target_address="{{ dag_run.conf['target'] }}",
                          energy_amount="{{ dag_run.conf['energy'] }}",
                          rent_time="{{ dag_run.conf['rent_time'] }}",
                          max_order_trx="{{ dag_run.conf.get('max_order') }}")
