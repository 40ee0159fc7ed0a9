"""Many order waits on one connection in one triggerer: one client, the connection's request
budget, and one pause for every wait on a 429 (orders/poll.py).

The triggers run for real (``TronEnergyOrderTrigger.run()``, several in one event loop, as
in a triggerer) against the sandbox over HTTP. What the service was sent is recorded where
it leaves the client: each ``get_order`` call's start, and each answer's end. The checks
are bounds the budget guarantees however slow the machine is (requests are never closer
together than the budget allows); none asserts that anything is fast.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from airflow_provider_tronenergy.client import RateLimitedError
from airflow_provider_tronenergy.client.aio import TronEnergyAsyncClient
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyConnectionError, TronEnergyHook
from airflow_provider_tronenergy.orders import poll as order_poll
from airflow_provider_tronenergy.orders.poll import RequestBudget
from airflow_provider_tronenergy.triggers.order import TronEnergyOrderTrigger
from support import orders
from support.control import Control
from support.sandbox import default_connection

sandbox = orders.sandbox


@dataclass
class Wire:
    """What the async clients sent: (start, order_id), (end, order_id, 429?), clients made."""

    starts: list[tuple[float, str]] = field(default_factory=list)
    rate_limited_at: list[float] = field(default_factory=list)
    clients: int = 0
    closed: int = 0


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> Iterator[Wire]:
    seen = Wire()
    real_init, real_get, real_close = (TronEnergyAsyncClient.__init__,
                                       TronEnergyAsyncClient.get_order,
                                       TronEnergyAsyncClient.aclose)

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        seen.clients += 1
        real_init(self, *args, **kwargs)

    async def get_order(self: Any, order_id: str) -> Any:
        seen.starts.append((time.monotonic(), order_id))
        try:
            return await real_get(self, order_id)
        except RateLimitedError:
            seen.rate_limited_at.append(time.monotonic())
            raise

    async def aclose(self: Any) -> None:
        seen.closed += 1
        await real_close(self)

    monkeypatch.setattr(TronEnergyAsyncClient, "__init__", init)
    monkeypatch.setattr(TronEnergyAsyncClient, "get_order", get_order)
    monkeypatch.setattr(TronEnergyAsyncClient, "aclose", aclose)
    yield seen
    assert order_poll._POLLERS == {}  # the last wait to leave closed its poller


def budget_conn(monkeypatch: pytest.MonkeyPatch, sandbox: Any, budget: object) -> str:
    return default_connection(monkeypatch, sandbox, **orders.CONN_OPTIONS,
                              order_poll_budget=budget)


def run_together(order_ids: list[str], *, poll: float, end_in: float = 30.0,
                 ) -> list[list[dict[str, Any]]]:
    """Each trigger's events, all triggers run concurrently in one event loop."""

    async def one(order_id: str) -> list[dict[str, Any]]:
        trigger = TronEnergyOrderTrigger(order_id, "tronenergy_default", poll,
                                         end_time=time.time() + end_in)
        return [event.payload async for event in trigger.run()]

    async def main() -> list[list[dict[str, Any]]]:
        return list(await asyncio.wait_for(asyncio.gather(*map(one, order_ids)), 120))

    return asyncio.run(main())


def most_in_one_second(starts: list[float]) -> int:
    return max(sum(1 for t in starts if s <= t < s + 1.0) for s in starts)


def test_many_waits_share_one_client_and_the_budget(control: Control, sandbox, monkeypatch,
                                                    wire):
    budget_conn(monkeypatch, sandbox, 20)
    ids = [control.buy() for _ in range(30)]
    for order_id in ids:
        control.count_polls(order_id)
    control.succeed(ids[0])  # the manual clock: every order has succeeded

    results = run_together(ids, poll=0.01)

    assert [[e["status"] for e in events] for events in results] == [["success"]] * 30
    assert wire.clients == 1 and wire.closed == 1  # one connection pool for all 30 waits
    starts = sorted(t for t, _ in wire.starts)
    assert len(starts) == 30 and [control.polls(i) for i in ids] == [1] * 30
    # 20 requests a second, evenly spaced: 30 starts span at least 29 gaps of 50 ms
    # (10 ms of slack for the event loop between the budget and the recording).
    assert starts[-1] - starts[0] >= 29 / 20 - 0.01
    assert most_in_one_second(starts) <= 20 + 1


def test_a_429_pauses_every_wait_of_the_connection(control: Control, sandbox, monkeypatch,
                                                   wire):
    budget_conn(monkeypatch, sandbox, 50)
    ids = [control.buy() for _ in range(8)]
    control.succeed(ids[0])
    control.fault(kind="rate_limit", path="/energy/order/*", method="GET", retry_after=1,
                  count=1)

    results = run_together(ids, poll=0.01)

    assert [[e["status"] for e in events] for events in results] == [["success"]] * 8
    [limited] = wire.rate_limited_at
    after = [t for t, _ in wire.starts if t > limited]
    assert after, "the rate-limited order and the others were read again"
    assert min(after) >= limited + 1.0  # no wait of the connection sent anything sooner
    assert len(wire.starts) == 9  # eight reads and the one answered 429


def test_a_wait_reads_its_order_at_most_once_per_interval_and_the_budget_caps_all(
        control: Control, sandbox, monkeypatch, wire):
    budget_conn(monkeypatch, sandbox, 8)
    ids = [control.buy() for _ in range(6)]  # they stay pending: the clock stands still

    started = time.monotonic()
    results = run_together(ids, poll=0.2, end_in=2.0)  # 30 reads a second wanted, 8 allowed
    elapsed = time.monotonic() - started

    assert [[e["status"] for e in events] for events in results] == [["timeout"]] * 6
    for order_id in ids:
        mine = sorted(t for t, o in wire.starts if o == order_id)
        # A poll interval between reads, but for the one last read at end_time (so an
        # order that ended just before the deadline is not reported as a timeout).
        gaps = [b - a for a, b in itertools.pairwise(mine)][:-1]
        assert mine and all(gap >= 0.2 - 0.01 for gap in gaps), mine
    starts = sorted(t for t, _ in wire.starts)
    assert len(starts) <= 8 * elapsed + 1
    assert most_in_one_second(starts) <= 8 + 1


@pytest.mark.parametrize("budget", [0, -1, "abc", "١٠", "nan", True])
def test_a_bad_budget_is_refused_before_any_task_calls_the_service(monkeypatch, sandbox,
                                                                    budget):
    budget_conn(monkeypatch, sandbox, budget)
    hook = TronEnergyHook()
    with pytest.raises(TronEnergyConnectionError, match="order_poll_budget"):
        hook.get_conn()


def test_the_budget_defaults_to_ten_and_reads_decimal_text(monkeypatch, sandbox):
    default_connection(monkeypatch, sandbox, **orders.CONN_OPTIONS)
    conn = TronEnergyHook.get_connection("tronenergy_default")
    assert TronEnergyHook.order_poll_budget(conn) == 10.0
    budget_conn(monkeypatch, sandbox, "2.5")
    conn = TronEnergyHook.get_connection("tronenergy_default")
    assert TronEnergyHook.order_poll_budget(conn) == 2.5


def test_request_budget_spaces_starts_and_serves_in_arrival_order():
    async def main() -> tuple[list[int], list[float]]:
        budget = RequestBudget(40)
        order: list[int] = []
        times: list[float] = []

        async def take(n: int) -> None:
            await budget.slot()
            order.append(n)
            times.append(time.monotonic())

        tasks = []
        for n in range(12):
            tasks.append(asyncio.create_task(take(n)))
            await asyncio.sleep(0)  # each arrives before the next
        await asyncio.gather(*tasks)
        budget.pause(0.3)
        paused_at = time.monotonic()
        await take(99)
        return order, [*times[:-1], times[-1] - paused_at]

    order, times = asyncio.run(main())
    assert order == [*range(12), 99]
    assert all(b - a >= 1 / 40 - 0.002 for a, b in itertools.pairwise(times[:12]))
    assert times[-1] >= 0.3 - 0.002
