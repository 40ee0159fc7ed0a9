"""``payout batch ready`` events read from Airflow's metadata database (the suite's SQLite
one, and PostgreSQL): the values the database extracts are those of the extra itself."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy.ui.batches import BatchEvent
from airflow_provider_tronenergy.ui.events import BATCH_READY_ASSET, read_batch_events
from support.energy_history import PERIOD, at, batch_event

EXTRA: dict[str, Any] = {
    "batch_id": "b1", "sender": "TSender", "recipients": [{"recipient": f"T{i}"}
                                                        for i in range(3)],
    "activations": 2, "activation_cost": "2.2", "energy_bought": 261_000,
    "energy_cost": "11.745", "total_cost": "13.945", "burn_cost_bought": "26.1",
    "saving": "14.355", "prices": {"activation_sun": 1_000_000, "energy_sun": 100},
    "approval": {"required": True, "approved": True, "by": "lead",
                 "at": "2026-03-01T12:10:00+00:00", "timed_out": False},
}


def _add(session: Any, uri: str, extra: dict[str, Any], ms: int, run: str) -> None:
    """An event of the asset a DAG declares as ``Asset(uri)``, stored as Airflow stores it
    (its URI normalized: ``tronenergy://payout-batch-ready/``)."""
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.sdk import Asset

    declared = Asset(uri, group="tronenergy")
    asset = session.scalar(sa.select(AssetModel).where(AssetModel.uri == declared.uri))
    if asset is None:
        asset = AssetModel(name=declared.name, uri=declared.uri, group=declared.group)
        session.add(asset)
        session.flush()
    session.add(AssetEvent(asset_id=asset.id, extra=extra, source_dag_id="prep",
                           source_run_id=run, source_task_id="publish_batch_ready",
                           timestamp=datetime.fromtimestamp(ms / 1000, timezone.utc)))
    session.flush()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def session(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The suite's metadata DB (SQLite), or Airflow's two asset tables, as its models
    declare them, in a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        request.getfixturevalue("airflow_db")
        from airflow.utils.session import create_session

        with create_session() as made:
            yield made
            made.rollback()
        return
    from airflow.models.asset import AssetEvent, AssetModel
    from sqlalchemy.orm import Session

    from airflow_provider_tronenergy import sqlstore

    schema = request.getfixturevalue("pg_schema")
    url = sqlstore.parse_url(request.getfixturevalue("postgres_url"))
    engine = sa.create_engine(url, connect_args={"options": f"-csearch_path={schema}"})
    try:
        with engine.begin() as conn:
            for table in (AssetModel.__table__, AssetEvent.__table__):
                table.create(conn)
        with Session(engine) as made:
            yield made
    finally:
        engine.dispose()


def test_each_events_values_are_its_extras(session):
    uri = f"tronenergy://test-{uuid.uuid4().hex[:8]}"
    _add(session, uri, EXTRA, at(1, 12, 20), "r1")
    _add(session, uri, {**EXTRA, "batch_id": "b2", "approval": {"required": False}},
         at(2), "r2")
    _add(session, uri, {"batch_id": "odd", "activations": "x", "recipients": "all"},
         at(3), "r3")
    _add(session, uri, EXTRA, at(4), "after the period")
    _add(session, "tronenergy://another-asset", EXTRA, at(1), "another asset")
    events = read_batch_events(session, PERIOD, uri)
    assert [e.run_id for e in events] == ["r3", "r2", "r1"]  # newest first
    assert events[2] == BatchEvent.of(EXTRA, at(1, 12, 20), "prep", "r1")
    assert events[1].approval == {"required": False, "approved": None, "by": None,
                                  "at": None, "timed_out": None}
    assert (events[0].batch_id, events[0].activations, events[0].recipients) == \
        ("odd", 0, None)


def test_beyond_the_newest_only_the_activations_are_read(session):
    uri = f"tronenergy://test-{uuid.uuid4().hex[:8]}"
    for hour in range(5):
        _add(session, uri, EXTRA, at(2, hour), f"r{hour}")
    events = read_batch_events(session, PERIOD, uri, newest=2)
    assert [e.run_id for e in events[:2]] == ["r4", "r3"]
    assert len(events) == 5
    older = events[2:]
    assert all(e.batch_id is None and e.activations == 2 and e.activation_trx == "2.2"
               and e.activation_sun == 1_000_000 for e in older)


def test_the_default_asset_is_the_example_dags(session):
    _add(session, BATCH_READY_ASSET, EXTRA, at(1), "the example's")
    assert "the example's" in [e.run_id for e in read_batch_events(session, PERIOD)]
    assert batch_event().batch_id == "b1"


@pytest.mark.parametrize("written", ["tronenergy://payout-batch-ready",
                                     "tronenergy://payout-batch-ready/"])
def test_the_asset_is_found_as_airflow_stores_it_however_the_uri_is_written(written):
    from airflow_provider_tronenergy.ui.events import stored_uri

    # What the example DAGs' Asset("tronenergy://payout-batch-ready") is stored as.
    assert stored_uri(written) == "tronenergy://payout-batch-ready/"
    assert stored_uri("airflow://reserved") == "airflow://reserved"  # no DAG can declare it


def test_the_payouts_sent_events_tokens_are_read_newest_first(session):
    from airflow_provider_tronenergy.ui.events import read_sent_tokens
    from airflow_provider_tronenergy.ui.tokens import token_facts

    uri = f"tronenergy://sent-{uuid.uuid4().hex[:8]}"
    e18 = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
    old = [{"token": e18, "symbol": "OLD", "decimals": 6, "contract": e18}]
    new = [{"token": e18, "symbol": "<b>E18</b>", "decimals": 18, "contract": e18}]
    _add(session, uri, {"batch_id": "s1", "payouts": [{"row": 0}], "tokens": old}, at(1), "s1")
    _add(session, uri, {"batch_id": "s2", "payouts": [{"row": 0}], "tokens": new}, at(2), "s2")
    _add(session, uri, {"batch_id": "s3", "payouts": []}, at(3), "no tokens: older provider")
    _add(session, "tronenergy://another-asset", {"tokens": [{"token": e18, "decimals": 1}]},
         at(4), "another asset")
    lists = read_sent_tokens(session, uri)
    assert lists == [None, new, old]
    facts = token_facts(lists)
    assert (facts[e18].symbol, facts[e18].decimals) == ("<b>E18</b>", 18)
    assert read_sent_tokens(session, uri, newest=1) == [None]
