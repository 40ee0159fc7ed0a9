"""The group committer's writer thread, deadlines and receipts, on a real SQLite store."""

from __future__ import annotations

import asyncio
import threading

import pytest

from airflow_provider_tronenergy.callbacks.batcher import CommitTimeout, GroupCommitter
from airflow_provider_tronenergy.callbacks.events import VerifiedTransfer
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.callbacks.verify import parse_transfer
from support.callbacks import callback_body
from tronenergy_protocol.signing import sign_callback

SECRET = "whsec_group_commit"


def event() -> VerifiedTransfer:
    body = callback_body()
    return parse_transfer(body, signature=sign_callback(SECRET, body), verified_by="key")


def writer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "tronenergy-commit"]


def test_answered_callbacks_leave_the_deadline_queue_long_before_their_deadline(
        sqlite_store: CallbackStore):
    # Holding every answered future until its deadline kept seconds of requests alive
    # and sent them into the old GC generations; they must go within a sweep or two.
    committer = GroupCommitter(sqlite_store, commit_timeout=2.0)

    async def scenario() -> int:
        results = await asyncio.gather(*(committer.submit(event()) for _ in range(200)))
        assert not any(r.duplicate for r in results)
        await asyncio.sleep(0.3)  # a few sweeps, far below the 2 s deadline
        left = len(committer._deadlines)
        await committer.aclose()
        return left

    assert asyncio.run(scenario()) == 0
    assert sqlite_store.max_id() == 200


def test_one_writer_serves_successive_event_loops_and_stops_on_close(
        sqlite_store: CallbackStore):
    before = len(writer_threads())
    committer = GroupCommitter(sqlite_store)

    async def one_round() -> bool:
        return (await committer.submit(event())).duplicate

    # A mounted app may see its loop replaced (tests, a restarted server): answers
    # must reach whichever loop is waiting now.
    assert asyncio.run(one_round()) is False
    assert asyncio.run(one_round()) is False
    assert len(writer_threads()) == before + 1

    async def close() -> None:
        await committer.aclose()

    asyncio.run(close())
    assert len(writer_threads()) == before
    assert sqlite_store.max_id() == 2
    with pytest.raises(RuntimeError, match="shutting down"):
        asyncio.run(one_round())


def test_a_commit_past_its_deadline_is_answered_with_a_timeout(sqlite_store: CallbackStore):
    gate = threading.Event()

    class Held:
        def record_many(self, events):
            gate.wait(5)
            return sqlite_store.record_many(events)

    committer = GroupCommitter(Held(), commit_timeout=0.2)

    async def scenario() -> None:
        with pytest.raises(CommitTimeout):
            await committer.submit(event())
        gate.set()
        await committer.aclose()

    asyncio.run(scenario())
    assert sqlite_store.max_id() == 1  # it landed after all: the retry is a duplicate


def test_receipts_are_unique_per_commit_and_redrawn_in_a_forked_child(
        sqlite_store: CallbackStore, monkeypatch):
    first, second = sqlite_store.writer.next_receipt(), sqlite_store.writer.next_receipt()
    assert first != second and len(first) == len(second) == 16
    assert first[:6] == second[:6]
    real_pid = sqlite_store.writer.receipt_owner
    monkeypatch.setattr("os.getpid", lambda: real_pid + 1)
    child = sqlite_store.writer.next_receipt()
    assert child[:6] != first[:6] or child[6:] != first[6:]
    assert child[6:] == f"{0:010x}"  # a fresh sequence in the child
