"""The sync exchange's deadline leaves nothing behind (issue 36).

1,000 calls of each sync client through the shared exchange against dripping
servers (each in its own process, so that only the clients' threads and
descriptors are counted), each call cut at a 0.05 s deadline: the process ends
with the threads and file descriptors it started with.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_tronenergy.client import NoResponseError, RetryPolicy, TronEnergyClient
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.models import USDT_MAINNET
from support import hostile_server
from support.clients import API_KEY, API_SECRET

DEADLINE = 0.05
CALLS = 1_000
THREADS = 10  # 1,000 calls of 0.05 s in seconds, not a minute
SHAPES = ["status-length", "body-close-gzip", "body-chunked-gzip-pooled"]
ACCOUNT = {"success": True, "code": 10000, "message": "",
           "data": {"user_id": 1, "username": "a@b.c", "balance": 10, "available_balance": 10,
                    "frozen_amount": 0, "pending_orders_count": 0,
                    "recharge_address": USDT_MAINNET}}


@contextmanager
def dripping_servers(body: object) -> Iterator[list[str]]:
    """One dripping server per shape, each in its own process; their roots."""
    with ExitStack() as stack:
        roots = []
        for shape in SHAPES:
            process = subprocess.Popen(
                [sys.executable, hostile_server.__file__, shape, "0.02", json.dumps(body)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            stack.callback(process.wait, 10)
            stack.callback(process.stdin.close)  # type: ignore[union-attr]
            roots.append(f"http://127.0.0.1:{process.stdout.readline().strip()}")  # type: ignore[union-attr]
        yield roots


def counts() -> tuple[int, int, int]:
    """(Python threads, OS threads, open file descriptors) of this process, once settled.

    A joined thread leaves /proc/self/task a moment after Python sees it end: the
    counts are read until they hold still for 0.1 s (at most 3 s).
    """
    def read() -> tuple[int, int, int]:
        return (threading.active_count(), len(os.listdir("/proc/self/task")),
                len(os.listdir("/proc/self/fd")))

    last, still_since, give_up = read(), time.monotonic(), time.monotonic() + 3
    while time.monotonic() - still_since < 0.1 and time.monotonic() < give_up:
        time.sleep(0.01)
        now = read()
        if now != last:
            last, still_since = now, time.monotonic()
    return last


def run_calls(calls: list[Callable[[], object]], error: type[Exception]) -> int:
    """Run each call (``THREADS`` at a time); how many raised ``error``."""
    def one(call: Callable[[], object]) -> int:
        try:
            call()
        except error as exc:
            assert "overall deadline" in str(exc), exc
            return 1
        return 0

    with ThreadPoolExecutor(THREADS) as pool:
        return sum(pool.map(one, calls))


def calls(which: str, roots: list[str]) -> tuple[list[Callable[[], object]], list[Any]]:
    """``CALLS`` calls spread over one new client per server; and the clients (to close)."""
    if which == "service":
        service = [TronEnergyClient(f"{root}/v1", API_KEY, API_SECRET,
                                    timeout=(1.0, 1.0, DEADLINE), retry=RetryPolicy(max_attempts=1))
                   for root in roots]
        return [service[i % len(roots)].get_account for i in range(CALLS)], list(service)
    nodes = [TronNodeClient(root, timeout=(1.0, 1.0, DEADLINE), max_retries=3) for root in roots]
    return ([partial(nodes[i % len(roots)].get_account, USDT_MAINNET) for i in range(CALLS)],
            list(nodes))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
@pytest.mark.parametrize("which", ["service", "node"])
def test_a_thousand_cut_calls_leave_no_thread_or_socket(which: str) -> None:
    body = ACCOUNT if which == "service" else {"address": "41" + "00" * 20, "balance": 0}
    error = NoResponseError if which == "service" else NodeError
    with dripping_servers(body) as roots:
        warm, made = calls(which, roots)  # first use: imports, anything made once per process
        run_calls(warm[:30], error)
        for client in made:
            client.close()
        before = counts()
        todo, made = calls(which, roots)
        cut = run_calls(todo, error)
        for client in made:
            client.close()
        after = counts()
    # Every call was cut but the pooled shape's prompt answers (every other call there).
    assert cut >= CALLS * 2 // 3
    assert after == before, f"threads, OS threads, descriptors: {before} -> {after}"
