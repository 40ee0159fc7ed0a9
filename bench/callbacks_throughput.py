"""Durably committed callbacks per second, against the same receiver with storage switched off.

The receiver runs as its own process (uvloop and httptools, as the CLI runs it)
on a SQLite file (WAL, synchronous=FULL: every 200 follows an fsync'd group
commit). Load comes from client processes with 32 concurrent senders in all,
each on a persistent connection, each callback unique and freshly signed.
Storage off and on are measured in short alternating rounds in one run, so
both modes see the same machine (a shared 2-core VM drifts by +-20% within a
minute); the ratio is of the means, and the per-round ratios show the spread.
p50/p99 are per-request latencies seen by the senders.

    .venv/bin/python bench/callbacks_throughput.py [--seconds 2] [--senders 32] [--rounds 6]
            [--store postgresql://postgres@127.0.0.1/test]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.callbacks import RawConnection, callback_body
from tronenergy_protocol.signing import sign_callback

SECRET = "whsec_bench"


# -- the receiver process ------------------------------------------------------------------


def serve(store_url: str | None) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Mount, Route

    from airflow_provider_tronenergy.callbacks import CallbackStore, create_app
    from tronenergy_protocol.serving import bind_socket, run_event_loop

    store = CallbackStore(store_url) if store_url else None
    if store is not None:
        store.ensure_schema()
    receiver = create_app(store, SECRET, storage=store is not None)

    async def stats(request: Request) -> JSONResponse:
        committer = receiver.state.committer
        return JSONResponse(committer.stats.__dict__ if committer else {})

    app = Starlette(routes=[Route("/bench/stats", stats), Mount("/", receiver)])
    sock = bind_socket("127.0.0.1", 0)
    print(f"listening on {sock.getsockname()[1]}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", access_log=False,
                                           http="httptools", lifespan="off"))
    run_event_loop(server.serve(sockets=[sock]))


class Receiver:
    def __init__(self, store_url: str | None) -> None:
        args = [sys.executable, __file__, "--serve"] + (["--store", store_url] if store_url
                                                         else [])
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        match = re.search(r"listening on (\d+)", self.process.stdout.readline())
        if match is None:
            raise SystemExit("receiver did not start")
        self.root = f"http://127.0.0.1:{match.group(1)}"
        self.url = f"{self.root}/callbacks"

    def stats(self) -> dict[str, int]:
        import urllib.request

        with urllib.request.urlopen(f"{self.root}/bench/stats", timeout=10) as response:
            return dict(json.load(response))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


# -- the senders ---------------------------------------------------------------------------


def _signed(count: int) -> list[tuple[bytes, dict[str, str]]]:
    """Unique, signed callbacks made before the clock starts: the senders stay cheap."""
    out = []
    for _ in range(count):
        body = callback_body()
        out.append((body, {"Content-Type": "application/json",
                           "X-Signature": sign_callback(SECRET, body)}))
    return out


def _client(url: str, senders: int, seconds: float, out: multiprocessing.Queue,
            ready: multiprocessing.Barrier) -> None:
    prepared = _signed(int(seconds * 6000))

    async def sender(deadline: float, latencies: list[float]) -> int:
        conn = RawConnection(url)
        done = 0
        while time.perf_counter() < deadline:
            body, headers = prepared.pop() if prepared else _signed(1)[0]
            started = time.perf_counter()
            status, answer = await conn.post(body, headers, timeout=10)
            if status != 200:
                raise SystemExit(f"callback answered {status}: {answer!r}")
            latencies.append(time.perf_counter() - started)
            done += 1
        conn.close()
        return done

    async def main() -> tuple[float, list[float]]:
        latencies: list[float] = []
        started = time.perf_counter()
        counts = await asyncio.gather(*(sender(started + seconds, latencies)
                                        for _ in range(senders)))
        return sum(counts) / (time.perf_counter() - started), latencies

    ready.wait()
    try:
        import uvloop

        rate, latencies = uvloop.run(main())
    except ImportError:
        rate, latencies = asyncio.run(main())
    out.put((rate, latencies))


def measure(url: str, senders: int, seconds: float, processes: int) -> tuple[float, list[float]]:
    """Callbacks per second (all client processes together) and sorted latencies."""
    queue: multiprocessing.Queue = multiprocessing.Queue()
    ready = multiprocessing.Barrier(processes)
    per_process = [senders // processes + (i < senders % processes) for i in range(processes)]
    workers = [multiprocessing.Process(target=_client, args=(url, n, seconds, queue, ready))
               for n in per_process]
    for worker in workers:
        worker.start()
    results = [queue.get() for _ in workers]
    for worker in workers:
        worker.join()
        if worker.exitcode:
            raise SystemExit("a sender failed")
    latencies = sorted(x for _, lat in results for x in lat)
    return sum(rate for rate, _ in results), latencies


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, all threads (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def scratch_store(url: str | None, tmp: str) -> Iterator[str]:
    """A fresh SQLite file, or a fresh schema on PostgreSQL that is dropped afterwards."""
    if not url:
        yield f"sqlite:///{os.path.join(tmp, 'bench.db')}"
        return
    import secrets
    from urllib.parse import quote

    import sqlalchemy as sa

    from airflow_provider_tronenergy.callbacks import CallbackStore

    schema = f"tronenergy_bench_{secrets.token_hex(4)}"
    engine = CallbackStore(url).engine
    with engine.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        joiner = "&" if "?" in url else "?"
        yield f"{url}{joiner}options={quote(f'-csearch_path={schema}')}"
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        engine.dispose()


def percentile(sorted_values: list[float], p: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per mode and round")
    parser.add_argument("--senders", type=int, default=32)
    parser.add_argument("--processes", type=int, default=2, help="client processes")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--store", help="SQLAlchemy URL (default: a fresh SQLite file)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.store)
        return

    with tempfile.TemporaryDirectory() as tmp, scratch_store(args.store, tmp) as store_url:
        results: dict[str, list[tuple[float, list[float]]]] = {"off": [], "on": []}
        cpu = {"off": 0.0, "on": 0.0}
        stats: dict[str, int] = {}
        receivers = {"off": Receiver(None), "on": Receiver(store_url)}
        try:
            for receiver in receivers.values():  # warm-up
                measure(receiver.url, args.senders, 0.5, args.processes)
            for _ in range(args.rounds):
                for mode in ("off", "on"):
                    pid = receivers[mode].process.pid
                    before = cpu_seconds(pid)
                    results[mode].append(measure(receivers[mode].url, args.senders,
                                                 args.seconds, args.processes))
                    cpu[mode] += cpu_seconds(pid) - before
            stats = receivers["on"].stats()
        finally:
            for receiver in receivers.values():
                receiver.stop()

        from airflow_provider_tronenergy.callbacks import CallbackStore

        store = CallbackStore(store_url)
        stored = store.max_id()
        store.close()

    def summary(mode: str) -> tuple[float, float, float, float]:
        rate = sum(r for r, _ in results[mode]) / len(results[mode])
        latencies = sorted(x for _, lat in results[mode] for x in lat)
        cpu_us = cpu[mode] / len(latencies) * 1e6
        return (rate, percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000,
                cpu_us)

    off, on = summary("off"), summary("on")
    backend = "PostgreSQL" if args.store and "postgres" in args.store else "SQLite (WAL, FULL)"
    print(f"callback receiver, {args.senders} concurrent senders in {args.processes} processes, "
          f"{args.rounds} x {args.seconds:g} s per mode, store: {backend}, {os.cpu_count()} CPUs")
    for label, (rate, p50, p99, cpu_us) in (("storage off (ceiling)", off),
                                            ("stored durably       ", on)):
        print(f"  {label}: {rate:8.0f} callbacks/s   p50 {p50:6.1f} ms   p99 {p99:6.1f} ms"
              f"   receiver CPU {cpu_us:5.0f} us/callback")
    if stats.get("batches"):
        print(f"  group commit: {stats['rows']} rows in {stats['batches']} commits "
              f"(mean {stats['rows'] / stats['batches']:.1f}, largest {stats['largest_batch']}, "
              f"{stats['commit_seconds'] / stats['batches'] * 1000:.1f} ms each); "
              f"rows in the store: {stored}")
    per_round = sorted(a[0] / b[0] for a, b in zip(results["on"], results["off"], strict=True))
    print(f"  per-round ratios: {' '.join(f'{r:.2f}' for r in per_round)}")
    ratio = on[0] / off[0]
    print(f"  stored / ceiling ratio: {ratio:.2f} "
          f"({'meets' if ratio >= 0.5 else 'BELOW'} the 0.5 aim)")


if __name__ == "__main__":
    main()
