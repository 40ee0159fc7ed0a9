"""A per-host store under a distributed executor refuses to open (sqlstore.shared_problem).

The rule on a toy store, with the executors given (fast), then the four stores as every
task, trigger and server opens them, under Airflow's own ``[core] executor``
(``AIRFLOW__CORE__EXECUTOR``): Airflow parses that setting once per process, so each
setting is tried in a process of its own. SQLite and PostgreSQL both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.sqlstore import (
    Database,
    Location,
    StoreError,
    StoreNotShared,
    shared_problem,
)

LOCATION = Location(env="TRONENERGY_TOY_URL", conf_key="toy_store", filename="toy.db",
                    name="toy store")
LOCAL = "airflow.executors.local_executor.LocalExecutor"
CELERY = "airflow.providers.celery.executors.celery_executor.CeleryExecutor"
KUBERNETES = "airflow.providers.cncf.kubernetes.executors.kubernetes_executor.KubernetesExecutor"
EDGE = "airflow.providers.edge3.executors.EdgeExecutor"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def executors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """``executors([...])``: the module paths Airflow's ``[core] executor`` names."""
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    for name in ("TRONENERGY_TOY_URL", "TRONENERGY_TOY_URL_SINGLE_HOST",
                 "AIRFLOW__TRONENERGY__TOY_STORE", "AIRFLOW__TRONENERGY__TOY_STORE_SINGLE_HOST"):
        monkeypatch.delenv(name, raising=False)

    def configure(paths: list[str] | None) -> None:
        monkeypatch.setattr(sqlstore, "configured_executors", lambda: paths)

    return configure


@pytest.mark.parametrize(("paths", "named"), [
    ([CELERY], "CeleryExecutor"),
    ([KUBERNETES], "KubernetesExecutor"),
    ([EDGE], "EdgeExecutor"),
    ([LOCAL, CELERY], "CeleryExecutor"),
    (["company.executors.FarmExecutor"], "company.executors.FarmExecutor"),
])
@pytest.mark.parametrize("explicit", [False, True])
def test_sqlite_under_a_distributed_executor_refuses_naming_the_setting_and_the_opt_in(
        executors, tmp_path, paths, named, explicit):
    executors(paths)
    url = f"sqlite:///{tmp_path / 'mine.db'}" if explicit else None
    with pytest.raises(StoreNotShared) as refused:
        Database(url, LOCATION, lock_name="toy")
    message = str(refused.value)
    assert isinstance(refused.value, StoreError) and isinstance(refused.value, NotRetryable)
    for part in ("the toy store", named, "TRONENERGY_TOY_URL (or [tronenergy] toy_store)",
                 "PostgreSQL", "TRONENERGY_TOY_URL_SINGLE_HOST=true",
                 "[tronenergy] toy_store_single_host = True",
                 "mine.db" if explicit else str(tmp_path / "toy.db")):
        assert part in message, message
    assert not (tmp_path / "toy.db").exists()  # nothing was opened
    assert shared_problem(LOCATION, url or LOCATION.url()) == message


def test_an_in_memory_store_is_one_process_and_refused_too(executors):
    executors([CELERY])
    with pytest.raises(StoreNotShared):
        Database("sqlite://", LOCATION, lock_name="toy")


@pytest.mark.parametrize("said", [
    ("TRONENERGY_TOY_URL_SINGLE_HOST", "true"),
    ("TRONENERGY_TOY_URL_SINGLE_HOST", " TRUE "),
    ("AIRFLOW__TRONENERGY__TOY_STORE_SINGLE_HOST", "True"),
])
def test_one_host_said_for_the_store_opens_it(executors, monkeypatch, tmp_path, said):
    executors([LOCAL, CELERY])
    monkeypatch.setenv(*said)
    db = Database(None, LOCATION, lock_name="toy")
    try:
        db.migrate("toy_store", [], {})
        assert (tmp_path / "toy.db").exists()
    finally:
        db.close()


def test_the_opt_in_is_per_store_and_false_or_unset_is_no(executors, monkeypatch):
    executors([CELERY])
    other = Location(env="TRONENERGY_OTHER_URL", conf_key="other_store", filename="o.db")
    monkeypatch.setenv("TRONENERGY_OTHER_URL_SINGLE_HOST", "true")
    assert shared_problem(other, other.url()) is None
    assert shared_problem(LOCATION, LOCATION.url()) is not None
    monkeypatch.setenv("TRONENERGY_TOY_URL_SINGLE_HOST", "false")
    assert shared_problem(LOCATION, LOCATION.url()) is not None


@pytest.mark.parametrize(("name", "setting"), [
    ("TRONENERGY_TOY_URL_SINGLE_HOST", "TRONENERGY_TOY_URL_SINGLE_HOST"),
    ("AIRFLOW__TRONENERGY__TOY_STORE_SINGLE_HOST", "[tronenergy] toy_store_single_host"),
])
def test_an_opt_in_that_is_not_true_or_false_is_an_error_naming_it(executors, monkeypatch,
                                                                   name, setting):
    executors([CELERY])
    monkeypatch.setenv(name, "yes please")
    with pytest.raises(StoreNotShared, match=setting.replace("[", r"\[") + " must be true"):
        Database(None, LOCATION, lock_name="toy")
    executors([LOCAL])  # where one host is all there is, the opt-in is not read
    assert shared_problem(LOCATION, LOCATION.url()) is None


@pytest.mark.parametrize(("name", "setting"), [
    ("TRONENERGY_TOY_URL_SINGLE_HOST", "TRONENERGY_TOY_URL_SINGLE_HOST"),
    ("AIRFLOW__TRONENERGY__TOY_STORE_SINGLE_HOST", "[tronenergy] toy_store_single_host"),
])
@pytest.mark.parametrize("paths", [[LOCAL], [CELERY]])
def test_a_bad_opt_in_fails_once_naming_the_setting_and_what_it_accepts(
        executors, monkeypatch, tmp_path, name, setting, paths):
    """Not retried, and never passed over unread: where one host is all there is, or the
    store is PostgreSQL, it is still a setting that says nothing a person meant."""
    from airflow.providers.common.compat.sdk import AirflowFailException

    from airflow_provider_tronenergy.airflow_errors import to_airflow

    executors(paths)
    monkeypatch.setenv(name, "yes please")
    for url in (None, "postgresql://nobody@127.0.0.1:1/none"):
        with pytest.raises(NotRetryable) as refused:
            Database(url, LOCATION, lock_name="toy")
        message = str(refused.value)
        assert f"{setting} must be true or false (t, true, 1 or f, false, 0, any case), " \
               "not 'yes please'" in message, message
        assert isinstance(to_airflow(refused.value), AirflowFailException)
    assert not (tmp_path / "toy.db").exists()


@pytest.mark.parametrize("paths", [[LOCAL], None])
def test_one_host_executors_and_no_airflow_open_sqlite(executors, tmp_path, paths):
    executors(paths)
    assert shared_problem(LOCATION, LOCATION.url()) is None
    Database(None, LOCATION, lock_name="toy").close()


def test_an_executor_setting_airflow_refuses_counts_as_distributed(executors, monkeypatch):
    def refused() -> list[str]:
        raise RuntimeError("Incorrectly formatted executor configuration")

    monkeypatch.setattr(sqlstore, "configured_executors", refused)
    problem = shared_problem(LOCATION, LOCATION.url())
    assert problem is not None and "Airflow refuses (RuntimeError)" in problem


@pytest.mark.postgres
def test_postgresql_opens_under_any_executor(executors, postgres_url, pg_schema):
    executors([LOCAL, CELERY])
    assert shared_problem(LOCATION, postgres_url) is None
    db = Database(postgres_url, LOCATION, lock_name="toy", schema=pg_schema)
    try:
        db.migrate("toy_store", [], {})
        with db.engine.connect() as conn:
            assert conn.execute(sa.select(db.versions.c.version)).scalar() == 1
    finally:
        db.close()


# -- the four stores, under Airflow's own [core] executor ----------------------------------

PROBE = r'''
import json, os, sys
from airflow_provider_tronenergy.callbacks import access
from airflow_provider_tronenergy.deposits import handover
from airflow_provider_tronenergy.keeper.registry import KeeperRegistry
from airflow_provider_tronenergy.payout import journal as payouts
from airflow_provider_tronenergy.purchase_journal import store as purchases
from airflow_provider_tronenergy.ui.data import Stores

OPEN = {
    "purchase journal": lambda: purchases.open_journal().ensure_schema(),
    "payout journal": lambda: payouts.open_payout_journal().ensure_schema(),
    "keepers' registry": lambda: KeeperRegistry()._ready(),
    "callback store": lambda: access.open_store(None).ensure_schema(),
    "deposit ledger": lambda: handover.open_ledger().db,
    "Energy page": lambda: Stores.configured().close(),
}


def forget():
    purchases._OPEN.clear(); payouts._OPEN.clear()
    access.forget_stores(); handover.forget_ledgers()


def attempt(env):
    os.environ.update(env)
    forget()
    seen = {}
    for store, open_ in OPEN.items():
        try:
            open_()
            seen[store] = "opened"
        except Exception as exc:
            seen[store] = f"{type(exc).__name__}: {exc}"
    for name in env:
        del os.environ[name]
    return seen


print(json.dumps({case: attempt(env) for case, env in json.loads(sys.argv[1]).items()}))
'''
JOURNAL, CALLBACKS, LEDGER = ("TRONENERGY_PURCHASE_JOURNAL", "TRONENERGY_CALLBACK_STORE",
                              "TRONENERGY_DEPOSITS_DB")
OF = {"purchase journal": JOURNAL, "payout journal": JOURNAL, "keepers' registry": JOURNAL,
      "callback store": CALLBACKS, "deposit ledger": LEDGER, "Energy page": JOURNAL}


def probe(executor: str, home: Path, cases: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Each case's settings tried in one process whose ``[core] executor`` is ``executor``."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRONENERGY_", "AIRFLOW__TRONENERGY__"))}
    env.update(AIRFLOW_HOME=str(home), AIRFLOW__CORE__EXECUTOR=executor,
               PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(cases)], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def assert_refused(seen: str, env: str) -> None:
    assert seen.startswith("StoreNotShared: "), seen
    assert f"{env} (or [tronenergy] " in seen and f"{env}_SINGLE_HOST=true" in seen, seen


def test_celery_with_the_default_stores_refuses_each_until_said_per_store(tmp_path):
    result = probe("CeleryExecutor", tmp_path, {
        "defaults": {},
        "journal said": {f"{JOURNAL}_SINGLE_HOST": "true"},
        "callbacks said": {"AIRFLOW__TRONENERGY__CALLBACK_STORE_SINGLE_HOST": "True"},
        "ledger said": {f"{LEDGER}_SINGLE_HOST": "true"},
        "explicit sqlite": {JOURNAL: f"sqlite:///{tmp_path / 'j.db'}",
                            CALLBACKS: f"sqlite:///{tmp_path / 'c.db'}",
                            LEDGER: f"sqlite:///{tmp_path / 'l.db'}"},
        "all said": {f"{JOURNAL}_SINGLE_HOST": "true", f"{CALLBACKS}_SINGLE_HOST": "true",
                     f"{LEDGER}_SINGLE_HOST": "true"},
    })
    for store, env in OF.items():
        assert_refused(result["defaults"][store], env)
        assert_refused(result["explicit sqlite"][store], env)
        assert result["all said"][store] == "opened", result["all said"][store]
    said = {"journal said": JOURNAL, "callbacks said": CALLBACKS, "ledger said": LEDGER}
    for case, opened in said.items():
        for store, env in OF.items():
            if store == "Energy page":
                continue  # it opens all four
            if env == opened:
                assert result[case][store] == "opened", (case, result[case][store])
            else:
                assert_refused(result[case][store], env)
    assert "CeleryExecutor" in result["defaults"]["callback store"]


@pytest.mark.postgres
def test_celery_with_every_store_on_postgresql_opens_them(tmp_path, postgres_url, pg_schema):
    url = sa.engine.make_url(postgres_url).update_query_dict(
        {"options": f"-csearch_path={pg_schema}"}).render_as_string(hide_password=False)
    result = probe("CeleryExecutor", tmp_path, {"postgresql": {
        JOURNAL: url, CALLBACKS: url, LEDGER: url}})
    assert set(result["postgresql"].values()) == {"opened"}, result
    assert not list(tmp_path.glob("*.db"))


def test_a_hybrid_with_local_first_is_refused_and_local_alone_opens(tmp_path):
    hybrid = probe("LocalExecutor,CeleryExecutor", tmp_path / "hybrid", {"defaults": {}})
    for store, env in OF.items():
        assert_refused(hybrid["defaults"][store], env)
    local = probe("LocalExecutor", tmp_path / "local", {"defaults": {}})
    assert set(local["defaults"].values()) == {"opened"}, local
