"""The keeper's watcher (TronEnergyKeeperTrigger) against the sandbox's chain: it wakes the
keeper once per crossing, for the wallets its registry names, and nobody when blind; on a
node of another chain it wakes the keeper once with an error its run fails on, and polls
again once the connection is fixed."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from airflow_provider_tronenergy.keeper.registry import KeeperRegistry
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.triggers.keeper import TronEnergyKeeperTrigger
from support.sandbox import node_connection_json
from support.waiting import wait_until


@pytest.fixture
def registry(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", url)  # the triggerer's configuration
    made = KeeperRegistry(url)
    yield made
    made.close()


def events_within(trigger: TronEnergyKeeperTrigger, seconds: float,
                  during: Any = None) -> list[dict[str, Any]]:
    """The events the trigger fires in ``seconds`` (``during()`` runs halfway)."""
    fired: list[dict[str, Any]] = []

    async def collect() -> None:
        async for event in trigger.run():
            fired.append(event.payload)

    async def main() -> None:
        task = asyncio.create_task(collect())
        await asyncio.sleep(seconds / 2)
        if during is not None:
            await asyncio.to_thread(during)
        await asyncio.sleep(seconds / 2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    return fired


def test_a_wallet_crossing_its_floor_wakes_the_keeper_once(control, node_conn, registry):
    low, high = control.wallet(trx="1", staked=50_000), control.wallet(trx="1", staked=300_000)
    registry.register("hot", [(low, 200_000, None), (high, 200_000, None)])
    trigger = TronEnergyKeeperTrigger(keeper="hot", poll_interval_seconds=0.05)
    spend = lambda: control.post(f"/addresses/{high}/energy", {"used": 150_000})  # noqa: E731
    fired = events_within(trigger, 1.5, during=spend)
    # The spent 150,000 starts recovering at once (java-tron's 24 h window, 28,800 blocks of
    # 30 ms here): a few dozen energy back by the time the watcher reads it.
    spent = fired[1]["available"] if len(fired) == 2 else None
    assert spent is not None and 150_000 <= spent < 151_000, fired
    # Each wake carries what the watcher read, at the chain's time: the run uses it.
    read_at = [event.pop("read_at") for event in fired]
    assert all(isinstance(at, float) and at > 1.7e9 for at in read_at), read_at
    assert fired == [
        {"keeper": "hot", "wallet": low, "available": 50_000, "limit": 50_000, "used": 0,
         "floor": 200_000, "reason": "below the floor"},
        {"keeper": "hot", "wallet": high, "available": spent, "limit": 300_000,
         "used": 300_000 - spent, "floor": 200_000, "reason": "below the floor"}]


def test_a_blind_watcher_wakes_nobody(control, registry, monkeypatch, capfd):
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", json.dumps(
        {"conn_type": "tron_node", "host": "http://127.0.0.1:9"}))
    registry.register("hot", [(control.wallet(trx="1"), 200_000, None)])
    trigger = TronEnergyKeeperTrigger(keeper="hot", poll_interval_seconds=0.05)
    assert events_within(trigger, 1.0) == []
    assert "the chain or the registry could not be read" in capfd.readouterr().out


def test_a_node_of_another_chain_wakes_the_keeper_once_with_an_error(control, sandbox, registry,
                                                                     monkeypatch):
    """It logged on each poll and woke nobody, for ever. Now: one error event (its run fails
    on it, not retried), block 0 read again every ``rewake_after`` without a second event,
    and polling again once the connection says the node's chain."""
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", json.dumps(
        {"conn_type": "tron_node", "host": sandbox.root_url}))  # mainnet said; it is not
    low = control.wallet(trx="1", staked=50_000)
    registry.register("hot", [(low, 200_000, None)])
    reads: list[str] = []
    read = TronNodeClient.get_genesis_block_id

    def counted(client: TronNodeClient) -> str | None:
        reads.append("block 0")
        return read(client)

    monkeypatch.setattr(TronNodeClient, "get_genesis_block_id", counted)
    trigger = TronEnergyKeeperTrigger(keeper="hot", poll_interval_seconds=0.05,
                                      rewake_after_seconds=0.05)

    def fix() -> None:  # once block 0 was read again (and no second event came of it)
        wait_until(lambda: len(reads) >= 3, message="block 0 read again")
        monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", node_connection_json(sandbox))

    fired = events_within(trigger, 2.0, during=fix)
    stop, *rest = fired
    assert stop == {"keeper": "hot", "status": "error", "retryable": False,
                    "message": stop["message"]}, stop
    assert "connection 'tron_node_default' says network mainnet" in stop["message"]
    assert [event for event in rest if "status" in event] == []  # told once
    assert rest and (rest[0]["wallet"], rest[0]["reason"]) == (low, "below the floor"), fired


def test_its_kwargs_are_identifiers_only():
    path, kwargs = TronEnergyKeeperTrigger(keeper="hot").serialize()
    assert path == "airflow_provider_tronenergy.triggers.keeper.TronEnergyKeeperTrigger"
    assert kwargs == {"keeper": "hot", "tron_node_conn_id": "tron_node_default",
                      "poll_interval_seconds": 30.0, "max_requests_per_poll": 20,
                      "rewake_after_seconds": 600.0}
