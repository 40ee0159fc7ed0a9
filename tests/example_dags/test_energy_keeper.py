"""The energy_keeper example DAG, dag.test() against the sandbox (service and node): it tops
a wallet up once, holds after, refuses bad settings before reading anything, and tells its
watcher which wallets to follow."""

from __future__ import annotations

import json

import energy_keeper as example
import pytest

from airflow_provider_tronenergy.keeper.registry import KeeperRegistry

SETTINGS = {"floor": "200000", "target": "500000", "max_price_per_10k_trx": "0.5",
            "max_daily_spend_trx": "100"}


@pytest.fixture
def stores(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", url)
    # The sandbox's hour (a custom chain): a deployment's setting, not a DAG's parameter.
    monkeypatch.setenv("TRONENERGY_RENTAL_HOUR_SECONDS", "36")
    return url


def test_a_wallet_below_its_floor_is_topped_up_once_and_the_watcher_told(
        run_dag, control, node_conn, stores, monkeypatch, capfd):
    wallet = control.wallet(trx="10", staked=150_000)
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_KEEPER", json.dumps({**SETTINGS,
                                                                    "wallets": [wallet]}))
    first = run_dag(example.dag)
    assert first["__run__"] == "success", first
    [decision] = first["keep"][2]["decisions"]
    assert (decision["action"], decision["energy"], decision["cost"]) == ("buy", 350_000,
                                                                          "15.75")
    assert first["approve"][0] == "skipped" and first["buy_approved"][0] == "skipped"
    out = capfd.readouterr().out
    assert (f"keeper {wallet}: available 150,000, floor 200,000: buys 350,000 for 15.75 "
            "TRX; budget left 84.25 TRX; below the floor by 50,000") in out
    second = run_dag(example.dag)  # the next wake: nothing more
    assert second["keep"][2]["decisions"][0]["action"] == "hold"
    assert [(o["kind"], o["energy_amount"]) for o in control.orders(wallet)] == [
        ("buy", 350_000)]
    registry = KeeperRegistry(stores)
    try:
        [watched] = registry.watched("energy_keeper")
    finally:
        registry.close()
    assert (watched.wallet, watched.floor) == (wallet, 200_000)
    assert watched.wake_at is not None  # its rental's end, less renew_before_seconds


def test_a_manual_runs_params_override_the_variable(run_dag, control, node_conn, stores,
                                                     monkeypatch):
    wallet = control.wallet(trx="10")
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_KEEPER", json.dumps({**SETTINGS,
                                                                    "wallets": [wallet]}))
    out = run_dag(example.dag, max_price_per_10k_trx="0.4")  # below the sandbox's 0.45
    assert out["keep"][2]["decisions"][0]["action"] == "capped"
    assert control.orders(wallet) == []


@pytest.mark.parametrize(("bad", "says"), [
    ({"wallets": ["TNotAnAddress"]}, "wallets must be TRON addresses"),
    ({"target": "100"}, "target 100 must be above the floor"),
])
def test_bad_settings_fail_before_anything_is_read_and_are_not_retried(
        run_dag, control, node_conn, stores, monkeypatch, capfd, bad, says):
    wallet = control.wallet(trx="10")
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_KEEPER", json.dumps(
        {**SETTINGS, "wallets": [wallet], **bad}))
    out = run_dag(example.dag)
    assert out["keep"][:2] == ("failed", 1), out  # one try although the DAG retries once
    assert says in capfd.readouterr().out
    assert control.orders(wallet) == []


def test_a_node_on_another_chain_than_its_connection_says_buys_nothing(
        run_dag, control, sandbox, stores, monkeypatch, capfd):
    """No ``network`` extra is mainnet; the sandbox is a custom chain: refused at block 0."""
    monkeypatch.delenv("TRONENERGY_RENTAL_HOUR_SECONDS")
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", json.dumps(
        {"conn_type": "tron_node", "host": sandbox.root_url}))
    wallet = control.wallet(trx="10", staked=150_000)
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_KEEPER", json.dumps({**SETTINGS,
                                                                    "wallets": [wallet]}))
    out = run_dag(example.dag)
    assert out["keep"][:2] == ("failed", 1), out  # one try although the DAG retries once
    assert "'tron_node_default' says network mainnet" in capfd.readouterr().out
    assert control.orders(wallet) == []


@pytest.mark.parametrize(("hour", "says"), [
    ("0", "TRONENERGY_RENTAL_HOUR_SECONDS must be above 0"),
    ("36", "TRONENERGY_RENTAL_HOUR_SECONDS=36 is set where the keeper's node connection "
           "'tron_node_default' is on mainnet"),
])
def test_a_compressed_hour_is_refused_unless_valid_and_on_a_custom_chain(
        run_dag, control, sandbox, stores, monkeypatch, capfd, hour, says):
    """The sandbox's short hour is a deployment's setting for a custom chain only: on a
    connection saying mainnet it would renew rentals early, so nothing is bought."""
    monkeypatch.setenv("TRONENERGY_RENTAL_HOUR_SECONDS", hour)
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", json.dumps(
        {"conn_type": "tron_node", "host": sandbox.root_url}))
    wallet = control.wallet(trx="10", staked=150_000)
    monkeypatch.setenv("AIRFLOW_VAR_TRONENERGY_KEEPER", json.dumps({**SETTINGS,
                                                                    "wallets": [wallet]}))
    out = run_dag(example.dag)
    assert out["keep"][:2] == ("failed", 1), out  # one try although the DAG retries once
    assert says in capfd.readouterr().out
    assert control.orders(wallet) == []


def test_without_wallets_a_run_skips(run_dag, control, node_conn, stores, monkeypatch):
    monkeypatch.delenv("AIRFLOW_VAR_TRONENERGY_KEEPER", raising=False)
    out = run_dag(example.dag)
    assert out["__run__"] == "success", out
    assert [out[t][0] for t in ("settings", "keep", "approve", "buy_approved")] == [
        "skipped"] * 4


@pytest.mark.parametrize(("cron", "timed"), [(None, "*/30 * * * *"), ("0 * * * *", "0 * * * *"),
                                              ("", None)])
def test_the_safety_nets_cron_is_read_where_the_dag_is_parsed(monkeypatch, cron, timed):
    """TRONENERGY_KEEPER_CRON: the cron half of the schedule; empty, woken by the chain only
    (the deployment test that tells a woken run from a timed one)."""
    import importlib

    from airflow.timetables.assets import AssetOrTimeSchedule

    if cron is None:
        monkeypatch.delenv("TRONENERGY_KEEPER_CRON", raising=False)
    else:
        monkeypatch.setenv("TRONENERGY_KEEPER_CRON", cron)
    try:
        parsed = importlib.reload(example).dag
        timetable = parsed.timetable
        if timed is None:
            assert not isinstance(timetable, AssetOrTimeSchedule)
            assert [a.uri for a in timetable.asset_condition.objects] == [example.WAKE.uri]
        else:
            assert isinstance(timetable, AssetOrTimeSchedule)
            assert timetable.timetable._expression == timed
    finally:
        monkeypatch.undo()
        importlib.reload(example)
