"""Crash drill: SIGKILL the receiver (the CLI, on a SQLite file) with >= 1,000 callbacks in flight.

Senders behave like the service: every callback is retried until it gets a 200.
Afterwards every tx_hash that ever got a 200 must be stored, and none twice.
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import time
from pathlib import Path

from airflow_provider_tronenergy.callbacks import CallbackStore
from support.callbacks import (
    RawConnection,
    ReceiverProcess,
    callback_body,
    start_receiver,
    transfer_data,
)
from support.ports import release_port, reserve_port
from tronenergy_protocol.signing import sign_callback

SECRET = "whsec_crash_drill"
CALLBACKS = 1500
SENDERS = 100
KILL_AT = (250, 900)  # acknowledged callbacks at each SIGKILL


def test_sigkill_with_callbacks_in_flight_loses_nothing_and_duplicates_nothing(tmp_path: Path):
    db = tmp_path / "drill.db"
    store_url = f"sqlite:///{db}"
    env = {"TRONENERGY_WEBHOOK_SECRET": SECRET}
    # Reserved (support.ports): the receiver is started again on it after each kill.
    port = str(reserve_port())
    receiver: ReceiverProcess = start_receiver("--port", port, "--store", store_url, env=env)
    data = {d["tx_hash"]: d for d in (transfer_data(amount=f"{n}.000001") for n in
                                      range(1, CALLBACKS + 1))}
    acked: set[str] = set()
    duplicates_acked = 0
    failures = 0
    unexpected: list[str] = []
    in_flight_at_kill: list[int] = []
    rng = random.Random(7)

    async def send_until_acknowledged(conn: RawConnection, tx_hash: str) -> None:
        nonlocal duplicates_acked, failures
        while True:
            body = callback_body(data[tx_hash])  # each attempt signed afresh, as the service does
            try:
                status, answer = await conn.post(
                    body, {"X-Signature": sign_callback(SECRET, body),
                           "Content-Type": "application/json"})
            except ConnectionError:
                failures += 1
            else:
                if status == 200:
                    acked.add(tx_hash)
                    duplicates_acked += json.loads(answer)["duplicate"]
                    return
                if status != 503:
                    unexpected.append(f"{status} {answer!r}")
                    return
            await asyncio.sleep(0.05 + rng.random() * 0.1)  # a scaled-down retry delay

    async def senders(queue: asyncio.Queue[str]) -> None:
        async def worker() -> None:
            conn = RawConnection(receiver.url)
            while not queue.empty():
                tx_hash = queue.get_nowait()
                await send_until_acknowledged(conn, tx_hash)
                if rng.random() < 0.05:  # a 200 lost on the way back: sent again
                    await send_until_acknowledged(conn, tx_hash)
            conn.close()

        await asyncio.gather(*(worker() for _ in range(SENDERS)))

    async def killer() -> None:
        nonlocal receiver
        for threshold in KILL_AT:
            while len(acked) < threshold:
                await asyncio.sleep(0.002)
            receiver.kill()
            in_flight_at_kill.append(CALLBACKS - len(acked))
            receiver = await asyncio.to_thread(
                start_receiver, "--port", port, "--store", store_url, env=env)

    async def drill() -> None:
        queue: asyncio.Queue[str] = asyncio.Queue()
        for tx_hash in data:
            queue.put_nowait(tx_hash)
        await asyncio.wait_for(asyncio.gather(senders(queue), killer()), 90)

    started = time.monotonic()
    try:
        asyncio.run(drill())
    finally:
        receiver.stop()
        release_port(int(port))
    elapsed = time.monotonic() - started

    assert not unexpected, unexpected[:5]
    assert in_flight_at_kill[0] >= 1000, in_flight_at_kill
    assert failures > 0, "the kills should have broken some requests mid-flight"
    assert acked == set(data)

    store = CallbackStore(store_url)
    stored = store.list_transfers(limit=10_000)
    store.close()
    hashes = [t.tx_hash for t in stored]
    assert len(hashes) == len(set(hashes)), "a tx_hash was stored twice"
    assert set(hashes) == acked, "an acknowledged callback was lost"
    assert all(t.amount_text == data[t.tx_hash]["amount"] for t in stored)
    assert [t.id for t in stored] == sorted(t.id for t in stored)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    print(f"crash drill: {CALLBACKS} callbacks, kills with {in_flight_at_kill} unacknowledged, "
          f"{failures} broken requests, {duplicates_acked} duplicate 200s, {elapsed:.1f} s")
