"""Store queries per poll interval with 1 vs 500 waiting TronTransferTriggers.

Every waiting trigger subscribes to Airflow 3.3's real ``SharedStreamManager`` with
its ``shared_stream_key``, as the triggerer does; the poll then runs on the real
clock while another thread keeps storing transfers nobody waits for. Counted: the
store queries made during a steady window, per poll cycle (one sleep of
``poll_interval``) and per ``poll_interval`` of wall time, with 1 and with 500
triggers side by side. Aim (issue 5): equal. For contrast, the same with each
trigger polling on its own (``run()``, what Airflow < 3.3 does).

    .venv/bin/python bench/transfer_triggers.py [--waiting 500] [--seconds 3]
            [--interval 0.05] [--store sqlite:///...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="tronenergy-bench-"))

from airflow_provider_tronenergy.callbacks.events import VerifiedTransfer, to_micro
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.triggers import transfer as transfer_module
from airflow_provider_tronenergy.triggers.transfer import TronEnergyTransferTrigger
from tronenergy_protocol.address import random_address


class CountingStore:
    """The real store, counting queries: the shared poll's and each trigger's own."""

    def __init__(self, store: CallbackStore) -> None:
        self.store = store
        self.queries = 0
        self.lookups = 0  # one trigger's query for its own recipient
        self.cycles = 0  # poll sleeps, counted by the sleep wrapper below

    def list_transfers(self, address: Any = None, *args: Any, **kwargs: Any) -> Any:
        self.queries += 1
        if address is not None:
            self.lookups += 1
        return self.store.list_transfers(address, *args, **kwargs)

    def max_id(self) -> int:
        self.queries += 1
        return self.store.max_id()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


class CountingAsyncio:
    """``asyncio`` as the triggers module sees it, counting poll sleeps (cycles)."""

    def __init__(self, counting: CountingStore) -> None:
        self.counting = counting

    async def sleep(self, delay: float, result: Any = None) -> Any:
        self.counting.cycles += 1
        return await asyncio.sleep(delay, result)

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)


def unwatched_transfer() -> VerifiedTransfer:
    amount = "1.5"
    return VerifiedTransfer(
        tx_hash=secrets.token_hex(32), from_address=random_address(),
        to_address=random_address(), amount=amount, amount_micro=to_micro(amount),
        token="TRX", block_number=1, block_timestamp_ms=int(time.time() * 1000),
        sent_at=int(time.time()), received_at_ms=int(time.time() * 1000),
        raw_body=b"{}", signature="0" * 64, verified_by="key")


@dataclass
class Result:
    waiting: int
    mode: str
    per_cycle: float  # store queries per sleep of the shared poll loop
    per_interval: float  # store queries per poll_interval of wall time
    lookups_at_start: int
    poll_loops: int


async def measure(store: CallbackStore, waiting: int, seconds: float, interval: float,
                  shared: bool) -> Result:
    counting = CountingStore(store)
    transfer_module.open_store = lambda store_url=None: counting  # type: ignore[assignment]
    transfer_module.asyncio = CountingAsyncio(counting)  # type: ignore[assignment]
    after_id = store.max_id()
    triggers = [TronEnergyTransferTrigger(proven=False, address=random_address(), after_id=after_id,
                                          poll_interval_seconds=interval) for _ in range(waiting)]
    tasks: list[asyncio.Task[Any]] = []
    opened: list[int] = []
    manager = None
    if shared:
        from airflow.triggers.shared_stream import SharedStreamManager

        original = TronEnergyTransferTrigger.open_shared_stream.__func__  # type: ignore[attr-defined]

        async def counted(cls: Any, kwargs: dict[str, Any]) -> Any:
            opened.append(1)
            async for item in original(cls, kwargs):
                yield item

        TronEnergyTransferTrigger.open_shared_stream = classmethod(counted)  # type: ignore[assignment,method-assign]
        manager = SharedStreamManager()

        async def consume(trigger_id: int, trigger: TronEnergyTransferTrigger) -> None:
            key = trigger.shared_stream_key()
            stream = manager.subscribe(trigger_id=trigger_id, trigger=trigger, key=key)
            try:
                async for _ in trigger.filter_shared_stream(stream):
                    pass
            finally:
                await manager.unsubscribe(trigger_id, key)

        tasks = [asyncio.ensure_future(consume(i, t)) for i, t in enumerate(triggers)]
    else:
        async def alone(trigger: TronEnergyTransferTrigger) -> None:
            async for _ in trigger.run():
                pass

        tasks = [asyncio.ensure_future(alone(t)) for t in triggers]

    # Warm-up: shared triggers each catch up once on what was stored before they joined.
    while counting.cycles < 2 or (shared and counting.lookups < waiting):
        await asyncio.sleep(interval / 4)
    lookups_at_start = counting.lookups
    stop = threading.Event()

    def traffic() -> None:  # transfers nobody waits for: the poll has rows to read
        while not stop.wait(interval / 2):
            store.record(unwatched_transfer())

    writer = threading.Thread(target=traffic, daemon=True)
    writer.start()
    queries, cycles, started = counting.queries, counting.cycles, time.monotonic()
    await asyncio.sleep(seconds)
    queries, cycles = counting.queries - queries, counting.cycles - cycles
    elapsed = time.monotonic() - started
    stop.set()
    writer.join()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    if manager is not None:
        await manager.stop_all()
        TronEnergyTransferTrigger.open_shared_stream = classmethod(original)  # type: ignore[assignment,method-assign]
    loops = len(opened) if shared else waiting
    return Result(waiting, "shared stream" if shared else "own poll (run)",
                  queries / max(1, cycles), queries / (elapsed / interval),
                  lookups_at_start, loops)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waiting", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--store", default=None, help="store URL (default: a temp SQLite)")
    parser.add_argument("--no-contrast", action="store_true",
                        help="skip the per-trigger run() polls (Airflow < 3.3) for contrast")
    args = parser.parse_args()
    url = args.store or f"sqlite:///{tempfile.mkdtemp(prefix='tronenergy-bench-')}/cb.db"
    store = CallbackStore(url)
    store.ensure_schema()
    print(f"store {store.safe_url}; poll interval {args.interval}s; "
          f"{args.seconds}s steady window each; unwatched traffic every {args.interval / 2}s")
    try:
        import airflow.triggers.shared_stream  # noqa: F401
    except ImportError:
        raise SystemExit("needs Airflow >= 3.3 (airflow.triggers.shared_stream)") from None

    runs = [(1, True), (args.waiting, True)]
    if not args.no_contrast:
        runs += [(1, False), (args.waiting, False)]
    results = [asyncio.run(measure(store, n, args.seconds, args.interval, shared))
               for n, shared in runs]
    print(f"{'waiting':>8}  {'mode':<16} {'poll loops':>10} {'queries/cycle':>14} "
          f"{'queries/interval':>17} {'one-off lookups':>16}")
    for r in results:
        shared = r.mode == "shared stream"
        # Own polls have no common cycle, and their lookups are their polls.
        per_cycle = f"{r.per_cycle:.2f}" if shared else "-"
        lookups = str(r.lookups_at_start) if shared else "-"
        print(f"{r.waiting:>8}  {r.mode:<16} {r.poll_loops:>10} {per_cycle:>14} "
              f"{r.per_interval:>17.2f} {lookups:>16}")
    one, many = results[0], results[1]
    ratio = many.per_cycle / one.per_cycle
    print(f"shared stream, {args.waiting} vs 1 waiting: store queries per poll cycle "
          f"{many.per_cycle:.2f} vs {one.per_cycle:.2f} (ratio {ratio:.2f}),"
          f" per poll interval {many.per_interval:.2f} vs {one.per_interval:.2f} "
          f"(ratio {many.per_interval / one.per_interval:.2f}); aim: equal")
    if not args.no_contrast:
        alone_one, alone_many = results[2], results[3]
        print(f"own polls (Airflow < 3.3): per poll interval {alone_many.per_interval:.2f} vs "
              f"{alone_one.per_interval:.2f} (ratio "
              f"{alone_many.per_interval / alone_one.per_interval:.1f})")
    store.close()


if __name__ == "__main__":
    main()
