"""How many signed ``GET /energy/price`` requests per second the sandbox serves here.

Later benchmarks run against the sandbox; this shows it is not their
bottleneck (aim: >= 1,500/s on a 2-core machine). The sandbox runs as its own
process (the CLI, with uvloop where installed); load comes from client processes
on persistent connections. Key-only and signed requests are measured side by
side, so the ratio shows what verification costs.

    .venv/bin/python bench/sandbox_throughput.py [--seconds 5] [--clients 2]
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.process import start_sandbox
from tronenergy_protocol.signing import sign_request

PATH = "/v1/energy/price?rent_time=1"


def _worker(url: str, key: str, secret: str, signed: bool, seconds: float, out: object) -> None:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    done = errors = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        headers = {"X-API-Key": key}
        if signed:
            ts = str(int(time.time()))
            headers["X-Timestamp"] = ts
            headers["X-Signature"] = sign_request(secret, "v1", ts, "GET", PATH)
        conn.request("GET", PATH, headers=headers)
        response = conn.getresponse()
        response.read()
        if response.status == 200:
            done += 1
        else:
            errors += 1
    out.put((done, errors))  # type: ignore[attr-defined]


def measure(url: str, key: str, secret: str, *, signed: bool, seconds: float,
            clients: int) -> float:
    queue: multiprocessing.Queue[tuple[int, int]] = multiprocessing.Queue()
    workers = [
        multiprocessing.Process(target=_worker, args=(url, key, secret, signed, seconds, queue))
        for _ in range(clients)
    ]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    results = [queue.get() for _ in workers]
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - started
    errors = sum(e for _, e in results)
    if errors:
        raise SystemExit(f"{errors} requests failed")
    return sum(d for d, _ in results) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=2)
    args = parser.parse_args()
    sandbox = start_sandbox(log_level="info")  # as users run it: one access-log line each
    try:
        measure(sandbox.url, sandbox.api_key, sandbox.api_secret, signed=True, seconds=0.5,
                clients=1)  # warm-up
        key_only = measure(sandbox.url, sandbox.api_key, sandbox.api_secret, signed=False,
                           seconds=args.seconds, clients=args.clients)
        signed = measure(sandbox.url, sandbox.api_key, sandbox.api_secret, signed=True,
                         seconds=args.seconds, clients=args.clients)
    finally:
        sandbox.stop()
    print(f"sandbox GET /energy/price, {args.clients} client processes, {args.seconds:g} s each")
    print(f"  key only : {key_only:8.0f} req/s")
    print(f"  signed   : {signed:8.0f} req/s")
    print(f"  signed / key-only ratio : {signed / key_only:.2f}")
    print(f"  signed / 1,500 target   : {signed / 1500:.2f}x "
          f"({'meets' if signed >= 1500 else 'BELOW'} the aim)")


if __name__ == "__main__":
    main()
