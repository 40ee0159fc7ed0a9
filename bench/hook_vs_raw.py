"""The same signed GET through the hook, a raw requests.Session, and Airflow's HttpHook.

Aim (issue 3): the hook costs at most 1.15x a hand-written raw session, and is
at least 2x faster than HttpHook with the same headers. The sandbox runs as a
separate process; the three ways alternate in rounds so drift hits all alike.

    .venv/bin/python bench/hook_vs_raw.py [--requests 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ["AIRFLOW_HOME"] = tempfile.mkdtemp(prefix="tronenergy-bench-")
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import requests

from support.process import start_sandbox
from tronenergy_protocol.signing import sign_request

# The cheapest signed GET the service has: the bench compares client stacks, so the
# server's own work should be as small as possible.
PATH = "/v1/energy/price?rent_time=1"


def signed_headers(key: str, secret: str) -> dict[str, str]:
    ts = str(int(time.time()))
    return {"X-API-Key": key, "X-Timestamp": ts,
            "X-Signature": sign_request(secret, "v1", ts, "GET", PATH)}


def per_request(call: Callable[[], object], count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        call()
    return (time.perf_counter() - started) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sandbox = start_sandbox()
    try:
        root = sandbox.root_url
        os.environ["AIRFLOW_CONN_TRONENERGY_DEFAULT"] = json.dumps({
            "conn_type": "tronenergy", "host": sandbox.url, "login": sandbox.api_key,
            "password": sandbox.api_secret})
        os.environ["AIRFLOW_CONN_HTTP_TRON"] = json.dumps({"conn_type": "http", "host": root})

        from airflow.providers.http.hooks.http import HttpHook

        from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook

        hook = TronEnergyHook()
        session = requests.Session()
        http_hook = HttpHook(method="GET", http_conn_id="http_tron")

        def via_hook() -> object:
            return hook.get_conn().get_price(1)

        def via_raw() -> object:
            response = session.get(root + PATH,
                                   headers=signed_headers(sandbox.api_key, sandbox.api_secret),
                                   timeout=30)
            response.raise_for_status()
            return response.json()

        def via_http_hook() -> object:
            response = http_hook.run(PATH, headers=signed_headers(sandbox.api_key,
                                                                  sandbox.api_secret))
            return response.json()

        ways = {"hook": via_hook, "raw requests.Session": via_raw, "HttpHook": via_http_hook}
        for call in ways.values():  # warm-up: connections, imports, connection lookups
            per_request(call, 20)
        samples: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(args.rounds):
            for name, call in ways.items():
                samples[name].append(per_request(call, args.requests // args.rounds))
    finally:
        sandbox.stop()

    median = {name: statistics.median(values) for name, values in samples.items()}
    print(f"signed GET {PATH}, {args.requests} requests per way, "
          f"{args.rounds} alternating rounds (median per request)")
    for name, seconds in median.items():
        print(f"  {name:22s} {seconds * 1e6:8.0f} us/request")
    hook_vs_raw = median["hook"] / median["raw requests.Session"]
    http_vs_hook = median["HttpHook"] / median["hook"]
    print(f"  hook / raw       = {hook_vs_raw:.2f}x  (aim <= 1.15x: "
          f"{'met' if hook_vs_raw <= 1.15 else 'NOT met'})")
    print(f"  HttpHook / hook  = {http_vs_hook:.2f}x  (aim >= 2x: "
          f"{'met' if http_vs_hook >= 2 else 'NOT met'})")


if __name__ == "__main__":
    main()
