"""Store access lives in callbacks.access and on the store itself; DAG-facing modules do not
load the receiver's web stack."""

from __future__ import annotations

import subprocess
import sys

import pytest

from airflow_provider_tronenergy.callbacks import access
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from support import store_fixtures
from support.triggers import record
from tronenergy_protocol.address import random_address

# One SQLite store per test, as the triggers read it (not this folder's two-backend store).
store_url, store = store_fixtures.store_url, store_fixtures.store
fresh_trigger_stores = store_fixtures.fresh_trigger_stores  # autouse


def test_one_store_per_url_per_process(store_url: str):
    assert access.open_store(store_url) is access.open_store(store_url)
    assert access.open_store(None) is access.open_store(store_url)  # the process default


def test_a_store_url_with_a_password_is_refused():
    with pytest.raises(ValueError, match="password"):
        access.checked_store_url("postgresql://u:pw@db/x")
    assert access.checked_store_url("") is None


def test_the_store_answers_offsets_itself(store: CallbackStore):
    assert store.committed_offset("new") is None
    record(store, random_address())
    assert store.start_offset("new") == store.max_id()  # a new consumer starts now
    assert store.committed_offset("new") == store.max_id()
    store.commit_offset("zero", 0)
    assert store.start_offset("zero") == 0  # started on an empty store: keeps 0


def test_one_payload_shape_for_a_stored_transfer(store: CallbackStore):
    record(store, random_address(), amount="12.50")
    payload = store.list_transfers()[0].to_payload()
    assert set(payload) == {"id", "tx_hash", "from", "to", "amount", "token",
                            "block_number", "block_timestamp_ms", "received_at", "proven"}
    assert payload["proven"] is False  # the callback's word: not checked on chain
    assert payload["amount"] == "12.50"  # the text as sent, never a number


def test_dag_facing_modules_do_not_load_the_receiver_or_the_async_client():
    """Parse cost: what a DAG file imports is paid by every parse, in a fresh process."""
    modules = ["sensors.transfer", "sensors.order", "triggers.transfer", "triggers.order",
               "operators.energy", "operators.address", "operators.monitor",
               "operators.reconcile", "payout.sheet", "payout.energy_plan",
               "payout.ready", "deposits"]
    heavy = ("starlette", "uvicorn", "airflow_provider_tronenergy.client.aio",
             "airflow_provider_tronenergy.callbacks.app")
    # Airflow 3.0's own imports load Starlette: only what the provider adds counts.
    code = ("import sys\n"
            "import airflow.sdk, airflow.triggers.base, airflow.providers.common.compat.sdk\n"
            f"before = {{m for m in {heavy!r} if m in sys.modules}}\n"
            + "".join(f"import airflow_provider_tronenergy.{m}\n" for m in modules)
            + f"print(sorted(m for m in {heavy!r} if m in sys.modules and m not in before))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_the_callbacks_package_still_offers_its_names():
    import airflow_provider_tronenergy.callbacks as callbacks

    assert callbacks.CallbackStore is CallbackStore
    assert callable(callbacks.create_app)
    with pytest.raises(AttributeError):
        callbacks.no_such_name  # noqa: B018
