"""TronEnergyTransferSensor with ``proven=True`` (the default) in real Airflow (dag.test()).

Real parts: the sandbox chain and service, which sends correctly signed callbacks to the
real receiver, which stores them; the deposit ledger's sweeps prove them on the chain in a
thread while the sensor waits. A forged callback (signed, chain-contradicted: an inflated
amount for a real 1 USDT transfer, above the sensor's ``min_amount``) is never handed on;
the real deposit is, once proven, with the chain's figures. Before ``proven`` the sensor
handed on the first callback above ``min_amount``: the forged one, 1,000 USDT.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from transfers import DAGS

from airflow_provider_tronenergy.sensors import transfer as sensor_module
from airflow_provider_tronenergy.triggers import transfer as trigger_module
from support.dagrun import run_outcome
from support.deposits import DepositWorld, settings_world


@pytest.fixture
def world(request: pytest.FixtureRequest, tmp_path: Any,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[DepositWorld]:
    """The deposit world, its store and ledger the DAG run's (the workers' settings)."""
    yield from settings_world(request, tmp_path, monkeypatch)


@pytest.fixture
def looked(world: DepositWorld, monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set once the sensor (or its trigger) has looked at the store for the address."""
    seen = threading.Event()
    real = trigger_module.open_store

    class Watched:
        def __init__(self, store: Any) -> None:
            self.store = store

        def list_transfers(self, address: Any = None, *args: Any, **kwargs: Any) -> Any:
            rows = self.store.list_transfers(address, *args, **kwargs)
            if address == world.address:
                seen.set()
            return rows

        def __getattr__(self, name: str) -> Any:
            return getattr(self.store, name)

    def open_store(url: str | None = None) -> Any:
        return Watched(real(url))

    monkeypatch.setattr(trigger_module, "open_store", open_store)
    monkeypatch.setattr(sensor_module, "open_store", open_store)
    return seen


class Deposits(threading.Thread):
    """Once the sensor waits: the forged callback, proven (disputed) first; then the real
    deposit, credited by later sweeps."""

    def __init__(self, world: DepositWorld, looked: threading.Event) -> None:
        super().__init__(daemon=True)
        self.world, self.looked = world, looked
        self.forged = self.real = ""
        self.error: BaseException | None = None
        self.done = threading.Event()

    def run(self) -> None:
        try:
            w = self.world
            assert self.looked.wait(60), "the sensor never looked at the store"
            self.forged = w.transfer("1", callback=False)  # 1 USDT really moved ...
            w.forge("1000", tx_hash=self.forged)  # ... claimed, signed, as 1,000
            w.stored(self.forged)
            w.solidify()
            assert w.sweep() == []  # disputed: other_amount
            self.real = w.transfer("250")
            w.stored(self.real)
            w.solidify()
            while not self.done.is_set():  # the deposit_credit DAG's sweeps, meanwhile
                w.sweep()
                self.done.wait(0.1)
        except BaseException as exc:
            self.error = exc


@pytest.mark.parametrize("dag_id", ["te_transfer_sensor_proven_poke",
                                    "te_transfer_sensor_proven_deferrable"])
def test_a_forged_callback_is_never_handed_on_the_real_deposit_is_once_proven(
        dag_id, world, looked, airflow_db):
    deposits = Deposits(world, looked)
    deposits.start()
    try:
        dagrun = DAGS[dag_id].test(run_conf={"address": world.address, "min_amount": "100"})
    finally:
        deposits.done.set()
        deposits.join(60)
    if deposits.error is not None:
        raise deposits.error
    out = run_outcome(dag_id, dagrun.run_id, dagrun.state)
    assert out["__run__"] == "success"
    state, _, transfer = out["wait"]
    assert state == "success"
    assert transfer["tx_hash"] == deposits.real != deposits.forged
    with world.ledger() as ledger:
        [credit] = ledger.credits(tx_hash=deposits.real)
        assert ledger.claim(deposits.forged).state == "disputed"  # type: ignore[union-attr]
    stored = world.store.get_transfer(deposits.real)
    assert stored is not None
    assert transfer == {
        "id": stored.id, "tx_hash": deposits.real, "log_index": 0,
        "from": credit.from_address, "to": world.address, "amount": "250", "token": "USDT",
        "contract": world.node.usdt_contract, "block_number": credit.block_number,
        "block_timestamp_ms": credit.block_timestamp_ms,
        "received_at": stored.received_at.isoformat(), "source": "callback", "proven": True}
    chain = world.chain.info(deposits.real, solid=True)
    assert (transfer["block_number"], transfer["block_timestamp_ms"]) == (
        chain["blockNumber"], chain["blockTimeStamp"])
    assert out["credit"][2] == {"tx_hash": deposits.real, "credited": "250 USDT"}
