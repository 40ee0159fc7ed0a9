"""The deposits watcher (TronEnergyTransferWatchTrigger) on a callback store it may not open
(``StoreNotShared``: SQLite while the executor runs tasks on several hosts): one error event
its woken run fails on, no second one for the same cause, the store read again, and the
watch on from the committed offset once the person said one host is meant. Both ways the
triggerer runs it: the shared stream (Airflow >= 3.3) and its own ``run()``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.callbacks import access
from airflow_provider_tronenergy.callbacks.store import ENV_STORE_URL, CallbackStore
from airflow_provider_tronenergy.triggers import transfer as transfer_module
from airflow_provider_tronenergy.triggers.stops import stops_in
from airflow_provider_tronenergy.triggers.transfer import TronEnergyTransferWatchTrigger
from support.triggers import Collector, Triggerer, record, until
from tronenergy_protocol.address import random_address

CONSUMER = "deposit_credit"
CELERY = "airflow.providers.celery.executors.celery_executor.CeleryExecutor"
OPT_IN = f"{ENV_STORE_URL}_SINGLE_HOST"


@pytest.fixture
def refused(store: CallbackStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The store refused in the triggerer until ``OPT_IN`` is set; each opening recorded."""
    store.set_offset(CONSUMER, 0)  # the consumer exists: it resumes from its offset
    monkeypatch.setattr(sqlstore, "configured_executors", lambda: [CELERY])
    monkeypatch.delenv(OPT_IN, raising=False)
    monkeypatch.setattr(transfer_module, "STOP_RECHECK_SECONDS", 0.02)
    opened: list[str] = []

    def counted(store_url: str | None = None) -> CallbackStore:
        try:
            made = access.open_store(store_url)
        except sqlstore.StoreNotShared:
            opened.append("refused")
            raise
        opened.append("opened")
        return made

    monkeypatch.setattr(transfer_module, "open_store", counted)
    return opened


def watcher() -> TronEnergyTransferWatchTrigger:
    trigger = TronEnergyTransferWatchTrigger(proven=False, consumer=CONSUMER,
                                             poll_interval_seconds=0.02)
    return TronEnergyTransferWatchTrigger(**trigger.serialize()[1])


def assert_one_stop(payloads: list[Any]) -> None:
    stop = payloads[0]
    assert stop == {"consumer": CONSUMER, "status": "error", "retryable": False,
                    "message": stop["message"]}, stop
    assert stop["message"].startswith("the callback store is a SQLite file on this host")
    assert f"{OPT_IN}=true" in stop["message"]
    assert stops_in(payloads, consumer=CONSUMER) == [stop["message"]]  # told once


def test_the_shared_stream_stops_once_then_resumes(store, refused, monkeypatch):
    shared_stream = pytest.importorskip("airflow.triggers.shared_stream")
    address = random_address()

    async def scenario() -> list[Any]:
        manager = shared_stream.SharedStreamManager(ack_timeout=600)
        triggerer = Triggerer(manager)
        triggerer.start(1, watcher())
        await until(lambda: refused.count("refused") >= 3, what="the store read again")
        while_stopped = record(store, address, "7")
        monkeypatch.setenv(OPT_IN, "true")  # the person's fix, read by the next recheck
        await until(lambda: len(triggerer.events) >= 2, what="the transfer after the fix")
        manager.confirm_persisted([seq for _, seq, _ in triggerer.events if seq is not None])
        await until(lambda: store.committed_offset(CONSUMER) == while_stopped.id,
                    what="the offset committed past the transfer")
        await triggerer.stop()
        return [payload for _, _, payload in triggerer.events]

    payloads = asyncio.run(scenario())
    assert_one_stop(payloads)
    assert [p["to"] for p in payloads[1:]] == [address]


def test_its_own_poll_stops_once_then_resumes(store, refused, monkeypatch):
    address = random_address()

    async def scenario() -> list[Any]:
        collector = Collector(watcher().run())
        await until(lambda: refused.count("refused") >= 3, what="the store read again")
        record(store, address, "7")
        monkeypatch.setenv(OPT_IN, "true")
        await until(lambda: len(collector.payloads) >= 2, what="the transfer after the fix")
        await collector.stop()
        return collector.payloads

    payloads = asyncio.run(scenario())
    assert_one_stop(payloads)
    assert [p["to"] for p in payloads[1:]] == [address]
