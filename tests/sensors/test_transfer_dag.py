"""TronEnergyTransferSensor in real Airflow: dag.test() on the SQLite metadata DB.

The transfer really travels: the sandbox (in-process SandboxServer) sees a transfer
to a monitored address and POSTs a signed ``tron.transfer`` callback to a running
receiver, which commits it to the SQLite store the sensor reads (the DAG run's
``TRONENERGY_CALLBACK_STORE``). A background thread injects the transfers only
after the sensor (poke mode) or its trigger (deferrable mode; dag.test() runs the
trigger in-process) has queried the store and found nothing, so each one arrives
after the sensor started: first one below ``min_amount``, which must not wake it,
then the one it must return.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
from transfers import DAGS

from airflow_provider_tronenergy.callbacks import CallbackStore
from airflow_provider_tronenergy.sensors import transfer as sensor_module
from airflow_provider_tronenergy.triggers import transfer as trigger_module
from airflow_provider_tronenergy.triggers.transfer import TronEnergyTransferTrigger
from support import store_fixtures
from support.signed import SignedSession
from support.waiting import wait_until
from tronenergy_protocol.address import random_address

# The callback store the DAG run reads, and the receiver that fills it (support.store_fixtures).
store_url, store, api, receiver = (
    store_fixtures.store_url, store_fixtures.store, store_fixtures.api, store_fixtures.receiver)
fresh_trigger_stores = store_fixtures.fresh_trigger_stores  # autouse: every test here


class Probe:
    """Sees every store lookup the sensor and its trigger make for one address."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.lock = threading.Lock()
        self.started = 0
        self.done: list[tuple[int, int, list[int]]] = []  # (start number, after_id, ids)

    def wrap(self, store: Any) -> Any:
        probe = self

        class Watched:
            def list_transfers(self, address: Any = None, *args: Any, **kwargs: Any) -> Any:
                if address != probe.address:
                    return store.list_transfers(address, *args, **kwargs)
                with probe.lock:
                    probe.started += 1
                    number = probe.started
                rows = store.list_transfers(address, *args, **kwargs)
                after_id = args[0] if args else kwargs.get("after_id", 0)
                with probe.lock:
                    probe.done.append((number, int(after_id), [t.id for t in rows]))
                return rows

            def __getattr__(self, name: str) -> Any:
                return getattr(store, name)

        return Watched()

    def empty_lookup_after(self, number: int) -> tuple[int, int, list[int]] | None:
        """A lookup that began after lookup ``number`` and found nothing."""
        with self.lock:
            return next((d for d in self.done if d[0] > number and not d[2]), None)


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch) -> Probe:
    probe = Probe(random_address())
    real_open_store = trigger_module.open_store

    def open_store(store_url: str | None = None) -> Any:
        return probe.wrap(real_open_store(store_url))

    monkeypatch.setattr(trigger_module, "open_store", open_store)
    monkeypatch.setattr(sensor_module, "open_store", open_store)
    return probe


@pytest.fixture
def trigger_runs(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Each TronEnergyTransferTrigger.run (dag.test() imports the class by its path): its
    after_id and the event it fired."""
    runs: list[dict[str, Any]] = []
    original = TronEnergyTransferTrigger.run

    async def spy(self: TronEnergyTransferTrigger) -> AsyncIterator[Any]:
        run: dict[str, Any] = {"after_id": self.after_id, "events": []}
        runs.append(run)
        async for event in original(self):
            run["events"].append(event.payload)
            yield event

    monkeypatch.setattr(TronEnergyTransferTrigger, "run", spy)
    return runs


class Injector(threading.Thread):
    """Sends transfers at the sandbox once the sensor is waiting, each one only after the
    sensor looked at the store again and found nothing."""

    def __init__(self, api: SignedSession, store: CallbackStore, probe: Probe,
                 amounts: list[str]) -> None:
        super().__init__(daemon=True)
        self.api, self.store, self.probe, self.amounts = api, store, probe, amounts
        self.sent: list[str] = []
        self.waits: list[tuple[int, int, list[int]]] = []  # the empty lookup before each
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            seen = 0
            for amount in self.amounts:
                wait_until(lambda n=seen: self.probe.empty_lookup_after(n) is not None, 60,
                           "the sensor to look at the store and find nothing")
                found = self.probe.empty_lookup_after(seen)
                assert found is not None
                self.waits.append(found)
                tx_hash = self.api.transfer(self.probe.address, amount)
                wait_until(lambda tx=tx_hash: self.store.get_transfer(tx) is not None, 30,
                           f"callback {tx_hash} stored")
                self.sent.append(tx_hash)
                with self.probe.lock:
                    seen = self.probe.started  # the next lookup must begin after this
        except BaseException as exc:
            self.error = exc

    def check(self) -> None:
        self.join(60)
        assert not self.is_alive(), "injector still running"
        if self.error is not None:
            raise self.error






@pytest.mark.parametrize("dag_id", ["te_transfer_sensor_poke", "te_transfer_sensor_deferrable"])
def test_sensor_wakes_on_a_transfer_that_arrives_after_it_started(
        dag_id, api, store, receiver, probe, trigger_runs, run_dag):
    address = probe.address
    api.watch(receiver.callback_url, address=address)
    earlier = api.transfer(address, "50")  # matching, but before the sensor started
    wait_until(lambda: store.get_transfer(earlier) is not None, 30, "the earlier callback")

    injector = Injector(api, store, probe, ["9.999999", "10"])
    injector.start()
    out = run_dag(DAGS[dag_id], address=address, min_amount="10")
    injector.check()
    small, wanted = injector.sent

    assert out["__run__"] == "success"
    state, tries, transfer = out["wait"]
    assert (state, tries) == ("success", 1)
    stored = store.get_transfer(wanted)
    assert stored is not None
    assert transfer == {
        "id": stored.id, "tx_hash": wanted, "from": stored.from_address, "to": address,
        "amount": "10", "token": "TRX", "block_number": stored.block_number,
        "block_timestamp_ms": stored.block_timestamp_ms,
        "received_at": stored.received_at.isoformat(), "proven": False}
    assert out["credit"][0] == "success"
    assert out["credit"][2] == {"tx_hash": wanted, "credited": "10 TRX"}

    # It started after the earlier transfer and before both injected ones, and it
    # looked at the store again after the small one was stored, without waking.
    earlier_id, small_id = store.get_transfer(earlier).id, store.get_transfer(small).id
    (_, after_id, _), (_, again_after_id, _) = injector.waits
    assert earlier_id <= after_id < small_id < stored.id
    assert again_after_id == after_id
    if dag_id == "te_transfer_sensor_deferrable":
        assert [r["after_id"] for r in trigger_runs] == [after_id]
        assert trigger_runs[0]["events"] == [{"status": "success", "transfer": transfer}]
    else:
        assert trigger_runs == []


def test_deferred_sensor_times_out_without_retry(api, store, receiver, probe, trigger_runs,
                                                 run_dag):
    api.watch(receiver.callback_url, address=probe.address)
    out = run_dag(DAGS["te_transfer_sensor_deferrable_timeout"], address=probe.address,
                  token="USDT")
    assert out["__run__"] == "failed"
    # retries=1 in the DAG, yet one try: AirflowSensorTimeout, as in poke mode.
    assert out["wait"][:2] == ("failed", 1)
    assert out["credit"][0] == "upstream_failed"
    assert [[e["status"] for e in r["events"]] for r in trigger_runs] == [["timeout"]]
