"""TronEnergyReconcileCallbacksOperator in real Airflow (dag.test()), against the sandbox.

The sandbox monitors addresses and POSTs signed callbacks: to a running receiver
that commits them to the SQLite store the DAG run reads, or, for one address, to
a dead port, so its deliveries fail and never reach the store. Reconciliation
compares each address's ``total_callbacks`` at the service with the store.
"""

from __future__ import annotations

from typing import Any

import pytest
from transfers import DAGS

from airflow_provider_tronenergy.callbacks import CallbackStore
from airflow_provider_tronenergy.operators.reconcile import TronEnergyReconcileCallbacksOperator
from support import store_fixtures
from support.ports import closed_port
from support.sandbox import sandbox_fixture
from support.signed import SignedSession
from support.waiting import wait_until

# Each test its own service: reconciliation covers every monitored address.
sandbox = sandbox_fixture()

# The callback store the DAG run reads, and the receiver that fills it (support.store_fixtures).
store_url, store, api, receiver = (
    store_fixtures.store_url, store_fixtures.store, store_fixtures.api, store_fixtures.receiver)
fresh_trigger_stores = store_fixtures.fresh_trigger_stores  # autouse: every test here


def test_store_url_with_password_is_refused(store_url):
    store_fixtures.assert_store_password_refused(
        lambda **kw: TronEnergyReconcileCallbacksOperator(task_id="reconcile", **kw), store_url)


@pytest.fixture
def raised(monkeypatch: pytest.MonkeyPatch) -> list[BaseException]:
    """What TronEnergyReconcileCallbacksOperator.execute raised (dag.test() runs it in-process)."""
    errors: list[BaseException] = []
    original = TronEnergyReconcileCallbacksOperator.execute

    def spy(self: TronEnergyReconcileCallbacksOperator, context: Any) -> Any:
        try:
            return original(self, context)
        except BaseException as exc:
            errors.append(exc)
            raise

    monkeypatch.setattr(TronEnergyReconcileCallbacksOperator, "execute", spy)
    return errors


def dead_url() -> str:
    """A loopback port nothing listens on: every delivery is refused."""
    return f"http://127.0.0.1:{closed_port()}/callbacks"






def delivered(api: SignedSession, store: CallbackStore, sent: list[str]) -> None:
    wait_until(lambda: all(store.get_transfer(tx) is not None for tx in sent), 30,
               "every callback stored")
    wait_until(lambda: len(api.control("GET", "/deliveries?status=delivered")) >= len(sent),
               30, "the service to record the deliveries")


def rows_by_address(report: dict) -> dict[str, tuple[int, int, int]]:
    return {r["address"]: (r["total_callbacks"], r["stored"], r["missing"])
            for r in report["addresses"]}


def test_nothing_missing_when_every_callback_was_stored(api, store, receiver, run_dag):
    hot = api.watch(receiver.callback_url, label="hot wallet")
    cold = api.watch(receiver.callback_url, label="cold wallet")
    quiet = api.watch(receiver.callback_url, label="no traffic")
    sent = [api.transfer(hot, "1"), api.transfer(hot, "2.5"), api.transfer(cold, "100")]
    delivered(api, store, sent)

    out = run_dag(DAGS["te_reconcile_strict"])
    assert out["__run__"] == "success"
    state, tries, report = out["reconcile"]
    assert (state, tries) == ("success", 1)
    assert report["missing_total"] == 0
    assert rows_by_address(report) == {hot: (2, 2, 0), cold: (1, 1, 0), quiet: (0, 0, 0)}
    labels = {r["address"]: (r["label"], r["is_active"]) for r in report["addresses"]}
    assert labels[hot] == ("hot wallet", True)


@pytest.mark.parametrize("dag_id", ["te_reconcile_strict", "te_reconcile_report"])
def test_callbacks_that_never_reached_the_store_are_reported(dag_id, api, store, receiver,
                                                             run_dag, raised):
    hot = api.watch(receiver.callback_url, label="hot wallet")
    lost = api.watch(dead_url(), label="receiver was down")
    sent = [api.transfer(hot, "1")]
    delivered(api, store, sent)
    failing = [api.transfer(lost, "7"), api.transfer(lost, "8")]
    wait_until(lambda: sum(d["tx_hash"] in failing and d["attempts"] >= 1
                           for d in api.control("GET", "/deliveries")) == 2, 30,
               "both deliveries to the dead port attempted")

    out = run_dag(DAGS[dag_id])
    assert all(store.get_transfer(tx) is None for tx in failing)
    if dag_id == "te_reconcile_strict":
        # fail_on_gap=True: the gap fails the task (and the run), no report to hand on.
        assert out["__run__"] == "failed"
        assert out["reconcile"] == ("failed", 1, None)
        assert [type(e).__name__ for e in raised] == ["AirflowException"]
        assert str(raised[0]).startswith(
            f"2 callbacks the service sent are not in the store: {lost} (2).")
    else:
        assert out["__run__"] == "success"
        state, tries, report = out["reconcile"]
        assert (state, tries) == ("success", 1)
        assert report["missing_total"] == 2
        assert rows_by_address(report) == {hot: (1, 1, 0), lost: (2, 0, 2)}
        assert raised == []


def test_a_store_on_one_hosts_file_under_celery_fails_the_task_naming_its_setting(
        api, store_url, run_dag, raised, monkeypatch):
    from airflow_provider_tronenergy import sqlstore

    monkeypatch.setattr(sqlstore, "configured_executors", lambda: [
        "airflow.providers.celery.executors.celery_executor.CeleryExecutor"])
    out = run_dag(DAGS["te_reconcile_report"])
    assert out["reconcile"] == ("failed", 1, None)
    assert [type(e).__name__ for e in raised] == ["AirflowFailException"]  # not retried
    assert "TRONENERGY_CALLBACK_STORE_SINGLE_HOST=true" in str(raised[0])
