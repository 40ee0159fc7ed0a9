"""Watch deposit addresses and credit each incoming deposit exactly once.

Two DAGs:

- **deposit_addresses_register** (daily): declares the set of deposit addresses
  to the service's monitoring (``AddMonitorOperator`` is idempotent: addresses
  already watched stay as they are), with the callback URL of the receiver
  (the Airflow API server plugin at ``/tronenergy/callbacks``, or a standalone
  ``tronenergy-receiver``).
- **deposit_credit** (event-driven): scheduled on the ``tronenergy://deposits``
  Asset, whose ``AssetWatcher`` turns each newly stored callback into one Asset
  event (``TronTransferWatchTrigger``). Its task credits each deposit into a
  ledger table keyed by ``tx_hash``, so even a redelivered event (possible only
  if the triggerer dies between Airflow persisting an event and the watcher
  committing its offset) credits nothing twice.

Settings (environment, read when the DAG file is parsed):

- ``TRONENERGY_DEPOSIT_ADDRESSES``: comma-separated deposit addresses;
- ``TRONENERGY_CALLBACK_URL``: where the service sends callbacks;
- ``TRONENERGY_DEPOSITS_DB``: the credited-deposits ledger (a SQLAlchemy URL;
  default a SQLite file in ``$AIRFLOW_HOME``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import pendulum
from airflow.sdk import DAG, Asset, AssetWatcher, task

from airflow_provider_tronenergy.operators.monitor import AddMonitorOperator
from airflow_provider_tronenergy.triggers.transfer import TronTransferWatchTrigger

ADDRESSES = [a.strip() for a in os.environ.get("TRONENERGY_DEPOSIT_ADDRESSES", "").split(",")
             if a.strip()]
CALLBACK_URL = os.environ.get("TRONENERGY_CALLBACK_URL",
                              "http://localhost:8080/tronenergy/callbacks")
START = pendulum.datetime(2026, 1, 1, tz="UTC")
log = logging.getLogger(__name__)

DEPOSITS = Asset(
    "tronenergy://deposits",
    group="tronenergy",
    watchers=[AssetWatcher(
        name="tronenergy_deposits",
        trigger=TronTransferWatchTrigger(addresses=ADDRESSES or None,
                                         consumer="deposit_credit", poll_interval=2.0),
    )],
)


def ledger_url() -> str:
    home = os.environ.get("AIRFLOW_HOME", os.path.expanduser("~/airflow"))
    return os.environ.get("TRONENERGY_DEPOSITS_DB",
                          f"sqlite:///{os.path.join(home, 'credited_deposits.db')}")


def event_transfer(extra: Any) -> dict[str, Any] | None:
    """The transfer an Asset event carries, or None.

    Airflow stores a watcher's trigger event as ``{"from_trigger": true, "payload":
    <the trigger's payload>}``; a transfer given directly (an event posted through the
    REST API with the transfer as its extra) is accepted as it is.
    """
    if not isinstance(extra, Mapping):
        return None
    payload = extra.get("payload") if extra.get("from_trigger") else extra
    return dict(payload) if isinstance(payload, Mapping) and payload.get("tx_hash") else None


def credit(transfers: list[dict[str, Any]], url: str) -> list[dict[str, Any]]:
    """Insert each transfer once (tx_hash is the key); return those credited now."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    meta = sa.MetaData()
    table = sa.Table(
        "credited_deposits", meta,
        sa.Column("tx_hash", sa.String(64), primary_key=True),
        sa.Column("to_address", sa.String(34), nullable=False, index=True),
        sa.Column("from_address", sa.String(34), nullable=False),
        sa.Column("amount", sa.String(40), nullable=False),  # exact decimal text
        sa.Column("token", sa.String(20), nullable=False),
        sa.Column("block_number", sa.BigInteger, nullable=False),
        sa.Column("credited_at", sa.String(40), nullable=False),
    )
    meta.create_all(engine)
    if engine.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    credited = []
    with engine.begin() as conn:
        for t in transfers:
            # The key decides, not a prior SELECT: a concurrent run cannot credit twice.
            inserted = conn.execute(insert(table).values(
                tx_hash=t["tx_hash"], to_address=t["to"], from_address=t["from"],
                amount=t["amount"], token=t["token"], block_number=t["block_number"],
                credited_at=pendulum.now("UTC").isoformat(),
            ).on_conflict_do_nothing(index_elements=["tx_hash"]))
            if inserted.rowcount:
                credited.append(t)
    engine.dispose()
    return credited


with DAG(
    dag_id="deposit_addresses_register",
    description="Declare the deposit addresses to the service's monitoring",
    schedule="@daily",
    start_date=START,
    catchup=False,
    tags=["tronenergy", "deposits"],
    doc_md=__doc__,
    default_args={"retries": 2, "retry_delay": timedelta(seconds=30)},
) as dag_register:
    AddMonitorOperator(task_id="watch_deposit_addresses", addresses=ADDRESSES,
                       webhook_url=CALLBACK_URL, label="deposits", tokens=["USDT", "TRX"])


with DAG(
    dag_id="deposit_credit",
    description="Credit each deposit once, as its callback arrives",
    schedule=[DEPOSITS],
    start_date=START,
    catchup=False,
    tags=["tronenergy", "deposits"],
    doc_md=__doc__,
    max_active_runs=1,
) as dag_credit:

    @task
    def credit_deposits(**context: Any) -> list[dict[str, Any]]:
        events = context["triggering_asset_events"][DEPOSITS]
        transfers = []
        for event in events:
            transfer = event_transfer(event.extra)
            if transfer is None:
                log.warning("asset event %s carries no transfer; nothing to credit", event.extra)
            else:
                transfers.append(transfer)
        # Also accept transfers handed over in dag_run.conf (manual replays, demos).
        conf = context["dag_run"].conf or {}
        transfers += list(conf.get("transfers", []))
        credited = credit(transfers, ledger_url())
        for t in credited:
            log.info("credited %s %s to %s (tx %s)", t["amount"], t["token"], t["to"],
                     t["tx_hash"])
        return credited

    credit_deposits()
