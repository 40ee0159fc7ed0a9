"""Group commit and concurrent duplicate deliveries, against the receiver under uvicorn."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx

from airflow_provider_tronenergy.callbacks import CallbackStore, create_app
from support.callbacks import ServedApp, callback_body, signed_headers, transfer_data
from support.waiting import wait_until

SECRET = "whsec_concurrency"


async def post_all(url: str, bodies: list[bytes]) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=len(bodies), max_keepalive_connections=len(bodies))
    async with httpx.AsyncClient(timeout=30, limits=limits, trust_env=False) as client:
        return list(await asyncio.gather(*(
            client.post(url, content=body, headers=signed_headers(SECRET, body))
            for body in bodies
        )))


def test_concurrent_duplicates_stored_exactly_once(sqlite_store: CallbackStore):
    app = create_app(sqlite_store, SECRET)
    same = callback_body(transfer_data(amount="50"))
    distinct = [callback_body(transfer_data(amount=f"{n}.5")) for n in range(1, 201)]
    bodies = [same] * 50 + distinct
    bodies[::2], bodies[1::2] = bodies[: len(bodies) // 2], bodies[len(bodies) // 2:]  # mix
    with ServedApp(app) as receiver:
        responses = asyncio.run(post_all(receiver.callback_url, bodies))
    assert [r.status_code for r in responses] == [200] * len(bodies)
    assert sum(r.json()["duplicate"] for r in responses) == 49
    stored = sqlite_store.list_transfers(limit=1000)
    assert len(stored) == 201
    assert len({t.tx_hash for t in stored}) == 201
    assert app.state.committer.stats.rows == 250  # every one went through a commit


class GatedStore:
    """Holds the first commit until released, to watch what waits behind it."""

    def __init__(self, store: CallbackStore) -> None:
        self.store = store
        self.gate = threading.Event()
        self.committed: list[int] = []
        self.held = 0

    def record_many(self, events):
        if not self.committed and not self.gate.is_set():
            self.held = len(events)
            self.gate.wait(10)
        results = self.store.record_many(events)
        self.committed.append(len(events))
        return results

    def ping(self) -> None:
        self.store.ping()


def test_each_200_waits_for_its_own_durable_commit(sqlite_store: CallbackStore):
    gated = GatedStore(sqlite_store)
    app = create_app(gated, SECRET)
    bodies = [callback_body() for _ in range(20)]
    results: list[list[httpx.Response]] = []
    with ServedApp(app) as receiver:
        sender = threading.Thread(
            target=lambda: results.append(asyncio.run(post_all(receiver.callback_url, bodies))))
        sender.start()
        pending = app.state.committer._pending
        wait_until(lambda: gated.held and gated.held + len(pending) == 20, 15,
                   "all 20 callbacks to arrive")
        time.sleep(0.2)
        # The first commit is held: nobody has an answer and nothing is stored.
        assert not results and sqlite_store.max_id() == 0
        assert sender.is_alive()
        gated.gate.set()
        sender.join(20)
    assert [r.status_code for r in results[0]] == [200] * 20
    # Everything that queued while the first commit was held shared the next one.
    held = gated.held
    assert gated.committed == ([held, 20 - held] if held < 20 else [20])
    assert len(sqlite_store.list_transfers()) == 20


class SlowStore:
    def __init__(self, store: CallbackStore, delay: float) -> None:
        self.store = store
        self.delay = delay

    def record_many(self, events):
        time.sleep(self.delay)
        return self.store.record_many(events)

    def ping(self) -> None:
        self.store.ping()


def test_a_commit_too_slow_for_the_deadline_gets_503_and_the_retry_is_a_duplicate(
        sqlite_store: CallbackStore):
    slow = SlowStore(sqlite_store, delay=0.6)
    body = callback_body()
    with ServedApp(create_app(slow, SECRET, commit_timeout=0.2)) as receiver:
        first = httpx.post(receiver.callback_url, content=body,
                           headers=signed_headers(SECRET, body), trust_env=False, timeout=10)
        assert first.status_code == 503 and first.json()["error"] == "commit_timeout"
        time.sleep(0.6)  # the commit lands after all
        slow.delay = 0
        retry = httpx.post(receiver.callback_url, content=body,
                           headers=signed_headers(SECRET, body), trust_env=False, timeout=10)
    assert retry.status_code == 200 and retry.json()["duplicate"] is True
    assert len(sqlite_store.list_transfers()) == 1


def test_storage_off_verifies_but_stores_nothing(sqlite_store: CallbackStore):
    with ServedApp(create_app(None, SECRET, storage=False)) as receiver:
        good = callback_body()
        ok = httpx.post(receiver.callback_url, content=good,
                        headers=signed_headers(SECRET, good), trust_env=False)
        forged = httpx.post(receiver.callback_url, content=good,
                            headers=signed_headers("nope", good), trust_env=False)
    assert ok.status_code == 200 and ok.json() == {"success": True}
    assert forged.status_code == 403
    assert sqlite_store.max_id() == 0


def test_a_full_queue_is_refused_not_buffered(sqlite_store: CallbackStore):
    from airflow_provider_tronenergy.callbacks.batcher import GroupCommitter, Overloaded
    from airflow_provider_tronenergy.callbacks.verify import parse_transfer
    from tronenergy_protocol.signing import sign_callback

    def event():
        body = callback_body()
        return parse_transfer(body, signature=sign_callback(SECRET, body), verified_by="key")

    gated = GatedStore(sqlite_store)
    committer = GroupCommitter(gated, max_pending=2)

    async def scenario() -> list[bool]:
        first = committer.submit(event())
        await asyncio.sleep(0.05)  # the writer took it and is held at the gate
        queued = [committer.submit(event()), committer.submit(event())]
        try:
            committer.submit(event())
        except Overloaded:
            refused = True
        else:
            refused = False
        gated.gate.set()
        results = await asyncio.gather(first, *queued)
        await committer.aclose()
        return [refused, *(r.duplicate for r in results)]

    assert asyncio.run(scenario()) == [True, False, False, False]
    assert len(sqlite_store.list_transfers()) == 3
