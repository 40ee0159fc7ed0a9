"""The Asset watcher's trigger with ``proven=True`` (the default), on real parts: the sandbox
chain and service, signed callbacks into the real receiver, the deposit ledger's sweeps.

A forged callback (an inflated amount for a real transfer) never fires; the real deposit
fires once the ledger credited it, with the chain's figures; while a callback waits for its
proof, the committed offset never passes it (a restart reads it again), in the standalone
loop (``run``) and in the shared stream's producer alike. Before ``proven`` the watcher fired
every callback at once, the forged one included, as the callback said it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from airflow_provider_tronenergy.triggers.transfer import TronEnergyTransferWatchTrigger
from support.deposits import DepositWorld, settings_world
from support.triggers import Collector, until
from tronenergy_protocol.address import random_address

CONSUMER = "proven-watch"


@pytest.fixture
def world(request: pytest.FixtureRequest, tmp_path: Any,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[DepositWorld]:
    """The deposit world, its store and ledger the triggerer's."""
    yield from settings_world(request, tmp_path, monkeypatch)


def watcher(world: DepositWorld, **kwargs: Any) -> TronEnergyTransferWatchTrigger:
    return TronEnergyTransferWatchTrigger(addresses=[world.address], consumer=CONSUMER,
                                          poll_interval_seconds=0.02, **kwargs)


async def in_thread(call: Any, *args: Any) -> Any:
    return await asyncio.to_thread(call, *args)


async def deposits(world: DepositWorld) -> tuple[str, str]:
    """A forged callback and a real deposit, stored; the real one not yet proven."""
    forged = await in_thread(lambda: world.transfer("1", callback=False))
    await in_thread(lambda: world.forge("1000", tx_hash=forged))
    await in_thread(world.stored, forged)  # stored first: the lower id
    real = await in_thread(lambda: world.transfer("7.25"))
    await in_thread(world.stored, real)
    return forged, real


def test_the_standalone_loop_fires_only_what_the_chain_proved(world, monkeypatch):
    monkeypatch.setattr("airflow_provider_tronenergy.triggers.transfer.RUN_COMMIT_GRACE", 0.0)
    world.store.start_offset(CONSUMER)  # a new consumer starts at the present

    async def scenario() -> None:
        collector = Collector(watcher(world).run())
        forged, real = await deposits(world)
        await in_thread(world.sweep)  # neither block is solid: both wait
        await asyncio.sleep(0.2)
        assert collector.payloads == []
        held = world.store.get_transfer(forged)
        assert held is not None
        assert world.store.start_offset(CONSUMER) < held.id  # never past a held callback
        world.solidify()
        assert [t.tx_hash for t in await in_thread(world.sweep)] == [real]
        await until(lambda: collector.payloads != [], what="the proven deposit's event")
        await asyncio.sleep(0.2)  # polls go on: the forged one never fires
        await collector.stop()
        [event] = collector.payloads
        assert (event["tx_hash"], event["amount"], event["proven"]) == (real, "7.25", True)
        assert event["log_index"] == 0 and event["source"] == "callback"
        with world.ledger() as ledger:
            assert ledger.claim(forged).state == "disputed"  # type: ignore[union-attr]
        last = world.store.get_transfer(real)
        assert last is not None
        assert world.store.start_offset(CONSUMER) == last.id  # both decided: committed

    asyncio.run(scenario())


def test_the_shared_stream_producer_holds_the_offset_until_decided(world):
    world.store.start_offset(CONSUMER)
    trigger = watcher(world)
    producer = TronEnergyTransferWatchTrigger.create_shared_stream_producer(
        trigger.serialize()[1])

    async def scenario() -> None:
        items: list[tuple[Any, int]] = []

        async def drain() -> None:
            async for item in producer.open_stream():
                items.append(item)

        task = asyncio.ensure_future(drain())
        forged, real = await deposits(world)
        await asyncio.sleep(0.2)
        assert items == []  # both wait for their proof: nothing to hand on or commit
        world.solidify()
        await in_thread(world.sweep)
        await until(lambda: len(items) == 2, what="both decided")
        task.cancel()
        (first, first_offset), (second, second_offset) = items
        ids = {tx: world.store.get_transfer(tx).id for tx in (forged, real)}  # type: ignore
        assert first is None and first_offset == ids[forged]  # disputed: passed, not fired
        assert second["tx_hash"] == real and second["amount"] == "7.25"
        assert second_offset == ids[real]
        events = [e.payload async for e in _events(trigger, items)]
        assert [e["tx_hash"] for e in events] == [real]

    asyncio.run(scenario())


async def _events(trigger: TronEnergyTransferWatchTrigger, items: list[tuple[Any, int]]) -> Any:
    async def stream() -> Any:
        for item, _ in items:
            yield item

    async for event in trigger.filter_shared_stream(stream()):
        yield event


def test_not_proven_fires_the_forged_callback_as_it_said(world, monkeypatch):
    """``proven=False`` (a watcher that only wakes the crediting DAG): every callback."""
    monkeypatch.setattr("airflow_provider_tronenergy.triggers.transfer.RUN_COMMIT_GRACE", 0.0)
    world.store.start_offset(CONSUMER)

    async def scenario() -> None:
        collector = Collector(watcher(world, proven=False).run())
        forged, real = await deposits(world)
        await until(lambda: len(collector.payloads) == 2, what="both callbacks")
        await collector.stop()
        assert [(e["tx_hash"], e["amount"], e["proven"]) for e in collector.payloads] == [
            (forged, "1000", False), (real, "7.25", False)]

    asyncio.run(scenario())


def test_a_callback_into_no_deposit_address_is_passed_once_the_sweeps_read_past_it(world,
                                                                                    monkeypatch):
    """A watcher on every address: a callback the sweeps read past without a credit or a
    claim (into an address that is no deposit address) does not hold the offset for ever."""
    monkeypatch.setattr("airflow_provider_tronenergy.triggers.transfer.RUN_COMMIT_GRACE", 0.0)
    world.store.start_offset(CONSUMER)
    other = world.watch(random_address())

    async def scenario() -> None:
        collector = Collector(TronEnergyTransferWatchTrigger(consumer=CONSUMER,
                                                             poll_interval_seconds=0.02).run())
        elsewhere = await in_thread(lambda: world.transfer("9", to=other))
        await in_thread(world.stored, elsewhere)
        real = await in_thread(lambda: world.transfer("2.5"))
        await in_thread(world.stored, real)
        world.solidify()
        assert [t.tx_hash for t in await in_thread(world.sweep)] == [real]
        await until(lambda: collector.payloads != [], what="the deposit's event")
        last = world.store.get_transfer(real)
        assert last is not None
        await until(lambda: world.store.start_offset(CONSUMER) == last.id,
                    what="the offset past both")
        await collector.stop()
        assert [(e["tx_hash"], e["amount"]) for e in collector.payloads] == [(real, "2.5")]

    asyncio.run(scenario())
