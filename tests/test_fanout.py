"""One call per item over a bounded pool: input order, failures kept, one shared 429 pause.

Real threads and, for the pause, the real client against a service on a socket that
answers one 429 with a ``Retry-After``.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any

import pytest

from airflow_provider_tronenergy.client import RateLimitedError, RetryPolicy, TronEnergyClient
from airflow_provider_tronenergy.fanout import ItemFailure, RateGate, failure_report, run_batch
from airflow_provider_tronenergy.node.models import USDT_MAINNET
from support.clients import API_KEY, API_SECRET
from support.hostile_server import HostileServer, Seen, answer

log = logging.getLogger("tests.fanout")
ACCOUNT = {"success": True, "code": 10000, "message": "",
           "data": {"user_id": 1, "username": "a@b.c", "balance": 10, "available_balance": 10,
                    "frozen_amount": 0, "pending_orders_count": 0,
                    "recharge_address": USDT_MAINNET}}
LIMITED = {"success": False, "code": 40290, "message": "slow down", "data": None}


def test_results_come_in_input_order_with_each_failure_in_its_place():
    items = [f"T{i:02d}" for i in range(12)]

    def work(item: str) -> dict[str, Any]:
        index = int(item[1:])
        time.sleep(0.005 * (12 - index))  # later items finish first
        if index % 5 == 3:
            raise ValueError(f"bad {item}")
        return {"address": item, "n": index}

    results, failures = run_batch(items, work, max_concurrency=12, log=log, verb="checked")
    assert [r["address"] for r in results] == items
    assert results[3] == {"address": "T03", "error": "ValueError: bad T03"}
    assert results[4] == {"address": "T04", "n": 4}
    assert failures == [ItemFailure(3, "T03", "ValueError: bad T03"),
                        ItemFailure(8, "T08", "ValueError: bad T08")]


@pytest.mark.parametrize("limit", [1, 3])
def test_no_more_calls_at_once_than_max_concurrency_and_that_many_are_used(limit: int):
    full = threading.Condition()
    active, peak = [0], [0]

    def work(item: str) -> dict[str, Any]:
        with full:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            full.notify_all()
            full.wait_for(lambda: peak[0] >= limit, timeout=5)  # until the pool is full
        time.sleep(0.005)
        with full:
            active[0] -= 1
        return {"address": item}

    results, failures = run_batch([str(i) for i in range(4 * limit)], work,
                                  max_concurrency=limit, log=log, verb="checked")
    assert failures == [] and len(results) == 4 * limit
    assert peak[0] == limit


def test_a_small_batch_runs_its_items_at_once_and_a_limit_below_one_still_runs():
    names: set[str] = set()
    barrier = threading.Barrier(2, timeout=5)  # both items run at once: two threads

    def work(item: str) -> dict[str, Any]:
        names.add(threading.current_thread().name)
        barrier.wait()
        return {"address": item}

    run_batch(["a", "b"], work, max_concurrency=16, log=log, verb="checked")
    assert len(names) == 2 and all(n.startswith("tronenergy-batch") for n in names)
    results, failures = run_batch(["a", "b"], lambda item: {"address": item},
                                  max_concurrency=0, log=log, verb="checked")
    assert (results, failures) == ([{"address": "a"}, {"address": "b"}], [])


def test_an_empty_batch_calls_and_logs_nothing(caplog: pytest.LogCaptureFixture):
    with caplog.at_level(logging.INFO, logger=log.name):
        assert run_batch([], lambda item: {"address": item}, max_concurrency=4, log=log,
                         verb="checked") == ([], [])
    assert caplog.records == []


def test_progress_is_logged_about_every_tenth_and_at_the_end(caplog: pytest.LogCaptureFixture):
    def work(item: str) -> dict[str, Any]:
        if item == "7":
            raise KeyError(item)
        return {"address": item}

    with caplog.at_level(logging.INFO, logger=log.name):
        run_batch([str(i) for i in range(25)], work, max_concurrency=1, log=log,
                  verb="estimated")
    lines = [r.getMessage() for r in caplog.records]
    assert lines[:4] == ["estimated 2/25", "estimated 4/25", "estimated 6/25",
                         "estimated 8/25 (1 failed)"]
    assert len(lines) == 13 and lines[-1] == "estimated 25/25 (1 failed)"


def test_the_failure_report_names_each_failure_up_to_its_limit():
    failures = [ItemFailure(i, f"T{i}", f"ServerError: busy {i}") for i in range(5)]
    assert failure_report("checked", 9, failures[:2]) == (
        "2 of 9 addresses could not be checked:\n"
        "  T0: ServerError: busy 0\n"
        "  T1: ServerError: busy 1")
    cut = failure_report("activated", 9, failures, limit=3).splitlines()
    assert cut[0] == "5 of 9 addresses could not be activated:"
    assert cut[1:4] == ["  T0: ServerError: busy 0", "  T1: ServerError: busy 1",
                        "  T2: ServerError: busy 2"]
    assert cut[4] == "  ... and 2 more (see the task's XCom)" and len(cut) == 5


def test_a_429_is_waited_out_and_other_errors_are_not_retried():
    gate = RateGate()
    calls: list[float] = []

    def limited_once() -> str:
        calls.append(time.monotonic())
        if len(calls) == 1:
            raise RateLimitedError("slow down", retry_after=0.2)
        return "done"

    assert gate.call(limited_once) == "done"
    assert len(calls) == 2 and calls[1] - calls[0] >= 0.2

    def broken() -> str:
        calls.append(time.monotonic())
        raise ValueError("not a 429")

    calls.clear()
    with pytest.raises(ValueError):
        gate.call(broken)
    assert len(calls) == 1


def test_a_429_on_every_attempt_is_raised_after_the_last():
    gate, calls = RateGate(), [0]

    def always_limited() -> str:
        calls[0] += 1
        raise RateLimitedError("slow down", retry_after=0.01)

    with pytest.raises(RateLimitedError):
        gate.call(always_limited, attempts=3)
    assert calls[0] == 3


def test_a_later_shorter_pause_does_not_cut_a_longer_one():
    gate = RateGate()
    gate.pause(0.3)
    gate.pause(0.01)
    started = time.monotonic()
    gate.wait()
    assert time.monotonic() - started >= 0.25


def test_a_429_from_the_service_pauses_every_worker_for_its_retry_after():
    """One worker's 429 holds the others too: after it, nobody calls before Retry-After."""
    lock = threading.Lock()
    arrivals: list[float] = []

    def behave(sock: socket.socket, request: Seen) -> None:
        with lock:
            arrivals.append(time.monotonic())
            first = len(arrivals) == 1
        if first:
            answer(429, LIMITED, {"Retry-After": "0.4"})(sock, request)
        else:
            time.sleep(0.15)  # the others are still in flight when the 429 lands
            answer(200, ACCOUNT)(sock, request)

    with HostileServer(behave) as server:
        client = TronEnergyClient(f"{server.root}/v1", API_KEY, API_SECRET,
                                  retry=RetryPolicy(max_attempts=1))  # the gate waits, only
        gate = RateGate()

        def read(item: str) -> dict[str, Any]:
            return {"address": item, "user_id": gate.call(client.get_account).user_id}

        try:
            results, failures = run_batch([str(i) for i in range(8)], read, max_concurrency=4,
                                          log=log, verb="checked")
        finally:
            client.close()
    assert failures == [] and all(r["user_id"] == 1 for r in results)
    assert len(arrivals) == 9  # eight items, one of them twice
    limited_at, later = arrivals[0], sorted(arrivals)[4:]
    assert all(at >= limited_at + 0.38 for at in later), [at - limited_at for at in later]


def test_side_by_side_keeps_order_bounds_the_pool_and_raises_after_every_call_ended():
    from airflow_provider_tronenergy.fanout import side_by_side

    lock, running, most, ended = threading.Lock(), [0], [0], []
    gate = threading.Barrier(3)

    def call(item: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        if item < 3:
            gate.wait(timeout=10)  # three side by side at once, never more
        with lock:
            running[0] -= 1
            ended.append(item)
        if item == 4:
            raise ValueError("item 4")
        return item * 10

    assert side_by_side(call, [0, 1, 2, 3], max_concurrency=3) == [0, 10, 20, 30]
    assert most[0] == 3
    ended.clear()
    with pytest.raises(ValueError, match="item 4"):
        side_by_side(call, [0, 1, 2, 4, 5, 6], max_concurrency=3)
    assert sorted(ended) == [0, 1, 2, 4, 5, 6]  # nothing left running when it raised
    assert side_by_side(call, [7], max_concurrency=3) == [70]
    assert side_by_side(call, [], max_concurrency=3) == []
