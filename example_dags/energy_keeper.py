"""Keep hot wallets supplied with rented energy, so that no withdrawal burns TRX for it.

For payout teams that send one by one, all day, from their own system (batches have
``batch_payout_preparation``). The keeper keeps each wallet's available energy at or above
a floor: below it, it rents enough to reach the target; a rental of its own about to end
while the wallet is in use, it renews first. Never above the price cap (TRX per 10,000
energy) nor the day's budget (TRX, all wallets); a purchase above ``approval_above_trx``
waits for a person (Required Actions). Each wallet's decision is one line in the ``keep`` log:
wallet, available, floor, what it bought and for how much, the budget left, why.

**Woken by the chain, not by a busy schedule.** The ``tronenergy://keeper/energy_keeper``
Asset's watcher (``TronEnergyKeeperTrigger``, in the triggerer) follows the wallets'
energy through the TRON node and wakes this DAG when a wallet crosses below its floor or
a rental nears its end; the cron half of the schedule (every 30 minutes,
``TRONENERGY_KEEPER_CRON`` where the DAG is parsed; empty: the watcher's wakes only) is
the safety net. Two wakes for one shortfall buy once: the purchase journal names each purchase by
keeper, wallet and shortfall. The watcher learns the wallets and floors from each run.

Settings: the Airflow Variable ``tronenergy_keeper`` (JSON, the params' names), which the
event-driven and scheduled runs use; a manual run's params override it. Params:

- ``wallets``: the hot wallets' addresses;
- ``floor`` / ``target``: energy below which a wallet is topped up, and up to what; or
  both ``"N transfers"`` (first-time USDT transfers, at the energy the node estimates
  one costs now);
- ``max_price_per_10k_trx``: the most to pay per 10,000 energy (TRX);
- ``max_daily_spend_trx``: TRX per UTC day, all wallets together;
- ``approval_above_trx``: ask a person above this cost (TRX); empty: never;
- ``renew_before_seconds``: seconds before a rental ends that it is renewed (if in use).

Connections: ``tronenergy_default`` (the service) and ``tron_node_default`` (the node). The
watcher polls every 30 s (``TRONENERGY_KEEPER_POLL_SECONDS`` where the DAG is parsed).
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import pendulum
from airflow.providers.common.compat.sdk import AirflowSkipException
from airflow.sdk import DAG, Asset, AssetWatcher, Param, Variable, get_current_context, task
from airflow.timetables.assets import AssetOrTimeSchedule
from airflow.timetables.trigger import CronTriggerTimetable

from airflow_provider_tronenergy.operators.keeper import (
    TronEnergyKeeperApprovalOperator,
    TronEnergyKeeperOperator,
)
from airflow_provider_tronenergy.triggers.keeper import TronEnergyKeeperTrigger

DAG_ID = "energy_keeper"
SETTINGS_VARIABLE = "tronenergy_keeper"
FIELDS = ("wallets", "floor", "target", "max_price_per_10k_trx", "max_daily_spend_trx",
          "approval_above_trx", "renew_before_seconds")

# The watcher's poll, in seconds: 30 unless the environment says otherwise.
POLL_SECONDS = float(os.environ.get("TRONENERGY_KEEPER_POLL_SECONDS", "30"))
# The safety net's cron: every 30 minutes unless the environment says otherwise; empty, the
# DAG runs on the watcher's wakes only (a test that must tell a woken run from a timed one).
CRON = os.environ.get("TRONENERGY_KEEPER_CRON", "*/30 * * * *").strip()

WAKE = Asset(
    f"tronenergy://keeper/{DAG_ID}",
    group="tronenergy",
    watchers=[AssetWatcher(name=f"tronenergy_keeper_{DAG_ID}", trigger=TronEnergyKeeperTrigger(
        keeper=DAG_ID, poll_interval_seconds=POLL_SECONDS, max_requests_per_poll=20,
        rewake_after_seconds=600.0))],
)

with DAG(
    dag_id=DAG_ID,
    description="Keep hot wallets above an energy floor, within a price cap and a budget",
    schedule=AssetOrTimeSchedule(
        timetable=CronTriggerTimetable(CRON, timezone="UTC"), assets=[WAKE]) if CRON else [WAKE],
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    doc_md=__doc__,
    tags=["tronenergy", "keeper"],
    default_args={"retries": 1, "retry_delay": timedelta(minutes=1)},
    params={
        "wallets": Param([], type="array", description="hot wallets (TRON addresses)"),
        "floor": Param("", type="string", description="energy below which to top up"),
        "target": Param("", type="string", description="energy a top-up brings it to"),
        "max_price_per_10k_trx": Param("", type="string",
                                       description="TRX per 10,000 energy, at most"),
        "max_daily_spend_trx": Param("", type="string", description="TRX per UTC day, all wallets"),
        "approval_above_trx": Param("", type="string", description="ask above this (TRX)"),
        "renew_before_seconds": Param("", type="string",
                                      description="seconds before a rental ends"),
    },
    render_template_as_native_obj=True,
) as dag:

    @task(multiple_outputs=True)
    def settings() -> dict[str, Any]:
        """The Variable's settings, each overridden by a param a person gave."""
        params = get_current_context()["params"]
        stored = Variable.get(SETTINGS_VARIABLE, default=None, deserialize_json=True) or {}
        chosen = {name: params.get(name) if params.get(name) not in (None, "", [])
                  else stored.get(name) for name in FIELDS}
        if not chosen["wallets"]:
            raise AirflowSkipException(f"no wallets to keep: set the Variable "
                                       f"{SETTINGS_VARIABLE} (or the params of a manual run)")
        defaults = {"approval_above_trx": None, "renew_before_seconds": 600}
        return {name: defaults.get(name) if value is None else value
                for name, value in chosen.items()}

    values = settings()
    policy = {name: values[name] for name in FIELDS if name != "wallets"}

    keep = TronEnergyKeeperOperator(task_id="keep", wallets=values["wallets"], **policy,
                                    keeper_name=DAG_ID)
    approve = TronEnergyKeeperApprovalOperator(task_id="approve", kept=keep.output)
    TronEnergyKeeperOperator(task_id="buy_approved", wallets=values["wallets"], **policy,
                             keeper_name=DAG_ID, approved=approve.output)
