"""Service requests while 1 and 500 orders wait in one triggerer: shared budget vs own polls.

Real ``TronEnergyOrderTrigger.run()`` coroutines, all in one event loop as in a
triggerer, wait on orders that stay pending, against the sandbox over HTTP with
50 ms of latency added to every order read. Counted where requests leave the
client: requests per poll interval, the peak in any one-second window, and the
most reads of one order within one poll interval. Aims (issue 15): the peak never
above the connection's ``order_poll_budget``, and no more than one read per
waiting order per interval. For contrast, the same waits each with their own
client and no budget (what every trigger did before ``orders/poll.py``).

    .venv/bin/python bench/order_poll_budget.py [--waiting 500] [--seconds 8]
            [--interval 2] [--budget 10]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="tronenergy-bench-"))
os.environ["AIRFLOW__LOGGING__LOGGING_LEVEL"] = "ERROR"  # 500 waits' status lines hide the table

import requests

from airflow_provider_tronenergy.client import RetryPolicy, TronEnergyClient
from airflow_provider_tronenergy.client.aio import TronEnergyAsyncClient
from airflow_provider_tronenergy.orders.wait import OrderWatch, await_order
from airflow_provider_tronenergy.triggers.order import TronEnergyOrderTrigger
from tronenergy_protocol.address import random_address
from tronenergy_sandbox.process import SandboxProcess, start_sandbox

STARTS: list[tuple[float, str]] = []
_real_get = TronEnergyAsyncClient.get_order


async def _counted_get(self: TronEnergyAsyncClient, order_id: str) -> Any:
    STARTS.append((time.monotonic(), order_id))
    return await _real_get(self, order_id)


TronEnergyAsyncClient.get_order = _counted_get  # type: ignore[method-assign]


def _orders(server: SandboxProcess, count: int) -> list[str]:
    root = server.root_url + "/sandbox"
    session = requests.Session()
    ids = []
    with TronEnergyClient(server.url, server.api_key, server.api_secret) as client:
        for _ in range(count):
            target = random_address()
            session.post(f"{root}/addresses/{target}/activate", timeout=10).raise_for_status()
            ids.append(client.buy_energy(target).order_id)
    session.post(f"{root}/faults", json={"kind": "latency", "path": "/energy/order/*",
                                         "method": "GET", "latency_ms": 50},
                 timeout=10).raise_for_status()
    return ids


async def _shared(order_id: str, interval: float, end: float) -> None:
    async for _ in TronEnergyOrderTrigger(order_id, "tronenergy_default", interval,
                                          end_time=end).run():
        pass


def _own(server: SandboxProcess) -> Callable[[str, float, float], Awaitable[None]]:
    async def wait(order_id: str, interval: float, end: float) -> None:
        async with TronEnergyAsyncClient(server.url, server.api_key, server.api_secret,
                                         retry=RetryPolicy(max_attempts=1)) as client:
            watch = OrderWatch(order_id, poll_interval=interval, end_time=end,
                               log=logging.getLogger("bench"))
            await await_order(client.get_order, watch)

    return wait


def measure(wait: Callable[[str, float, float], Awaitable[None]], ids: list[str],
            interval: float, seconds: float) -> dict[str, Any]:
    """Requests sent during ``seconds`` of waiting; the waits are then cancelled."""
    STARTS.clear()
    end = time.time() + 3600  # the orders never end: the window is cut by cancelling

    async def main() -> None:
        waits = asyncio.gather(*(wait(order_id, interval, end) for order_id in ids))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(waits, seconds)

    began = time.monotonic()
    asyncio.run(main())
    elapsed = time.monotonic() - began
    starts = sorted(t for t, _ in STARTS if t < began + seconds)
    peak = max(sum(1 for t in starts if s <= t < s + 1.0) for s in starts)
    per_order: dict[str, list[float]] = {}
    for t, order_id in STARTS:
        per_order.setdefault(order_id, []).append(t)
    most = max(max(sum(1 for t in ts if s <= t < s + interval) for s in ts)
               for ts in per_order.values())
    return {"requests": len(starts), "per_interval": len(starts) / (seconds / interval),
            "peak": peak, "most_per_order": most, "elapsed": elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--waiting", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--budget", type=float, default=10.0)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    # Its own process, so the sandbox does not share this one's GIL; orders stay pending.
    server = start_sandbox("--time-scale", "1000", "--balance", str(3 * args.waiting + 10))
    try:
        os.environ["AIRFLOW_CONN_TRONENERGY_DEFAULT"] = json.dumps({
            "conn_type": "tronenergy", "host": server.url, "login": server.api_key,
            "password": server.api_secret, "extra": {"order_poll_budget": args.budget}})
        ids = _orders(server, args.waiting)
        print(f"{args.interval:g} s poll interval, budget {args.budget:g} requests/s, "
              f"{args.seconds:g} s per run, 50 ms latency per read\n")
        print(f"{'waiting':>8} {'mode':<12} {'requests':>9} {'per interval':>13} "
              f"{'peak /s':>8} {'max reads of one order per interval':>36}")
        met = True
        for count in (1, args.waiting):
            for mode, wait in (("shared", _shared), ("own polls", _own(server))):
                row = measure(wait, ids[:count], args.interval, args.seconds)
                print(f"{count:>8} {mode:<12} {row['requests']:>9} "
                      f"{row['per_interval']:>13.1f} {row['peak']:>8} "
                      f"{row['most_per_order']:>36}")
                if mode == "shared":
                    met &= row["peak"] <= args.budget and row["most_per_order"] <= 1
        print(f"\naim: shared peak <= budget ({args.budget:g}/s) and <= 1 read per waiting "
              f"order per interval: {'met' if met else 'NOT met'}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
