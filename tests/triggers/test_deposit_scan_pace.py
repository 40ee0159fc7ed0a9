"""A trigger reading a paced node waits for its slot in a thread: the triggerer's event loop
runs on meanwhile (issue 45; the payout and keeper triggers read the node the same way,
``asyncio.to_thread``)."""

from __future__ import annotations

import asyncio
import json
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_tronenergy.pace.store import connection_pace
from airflow_provider_tronenergy.triggers.deposit_scan import TronNodeDepositScanTrigger
from support.control import Control
from support.sandbox import node_extra
from tronenergy_sandbox import SandboxServer

API_KEY = "node-key-2b3c4d5e-7777-4bd1-9a3e-0000feedbeef"


def test_a_paced_read_leaves_the_event_loop_free(sandbox: SandboxServer, control: Control,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", f"sqlite:///{tmp_path / 'journal.db'}")
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_PACED", json.dumps({
        "conn_type": "tron_node", "host": sandbox.root_url, "password": API_KEY,
        "extra": node_extra(requests_per_second="15")}))
    # another sharer of the key was answered 429 with Retry-After: 2, so everyone waits
    connection_pace(sandbox.root_url, API_KEY, Decimal(15)).slow(2.0)
    after = int(control.call("GET", "/chain")["solidified"]) + 3  # a block every 30 ms here
    trigger = TronNodeDepositScanTrigger(tron_node_conn_id="tron_node_paced", after_block=after,
                                         poll_interval_seconds=0.05, end_time=time.time() + 20)

    async def run() -> tuple[dict[str, Any], int]:
        ticks, done = 0, asyncio.Event()

        async def tick() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.05)

        ticker = asyncio.create_task(tick())
        async for event in trigger.run():
            done.set()
            await ticker
            return dict(event.payload), ticks
        raise AssertionError("no event")

    event, ticks = asyncio.run(asyncio.wait_for(run(), 30))
    assert event["status"] == "moved"
    # ~40 ticks while the read waited 2 s for its slot; 1 if the wait had held the loop
    assert ticks >= 10, ticks
    pace = connection_pace(sandbox.root_url, API_KEY, Decimal(15))
    row = pace.store.row(pace.key)
    assert row is not None and row["slowed"] == 1 and row["taken"] >= 1
