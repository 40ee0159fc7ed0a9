"""2,000 addresses checked by one TronEnergyCheckAddressOperator vs a sequential loop of hook calls.

The sandbox adds 50 ms to every request, as a real network would (its latency
fault), so the comparison is about overlapping round trips, not CPU. Aim
(issue 4): >= 6x with the default max_concurrency.

    .venv/bin/python bench/batch_check.py [--addresses 2000] [--latency-ms 50]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ["AIRFLOW_HOME"] = tempfile.mkdtemp(prefix="tronenergy-bench-")
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import requests

from support.process import start_sandbox
from tronenergy_protocol.address import random_address


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addresses", type=int, default=2000)
    parser.add_argument("--latency-ms", type=int, default=50)
    args = parser.parse_args()
    sandbox = start_sandbox()
    try:
        os.environ["AIRFLOW_CONN_TRONENERGY_DEFAULT"] = json.dumps({
            "conn_type": "tronenergy", "host": sandbox.url, "login": sandbox.api_key,
            "password": sandbox.api_secret})
        from airflow_provider_tronenergy.fanout import DEFAULT_MAX_CONCURRENCY
        from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
        from airflow_provider_tronenergy.operators.address import TronEnergyCheckAddressOperator

        addresses = [random_address() for _ in range(args.addresses)]
        requests.post(f"{sandbox.root_url}/sandbox/faults", timeout=10,
                      json={"kind": "latency", "latency_ms": args.latency_ms, "path": "*"})
        logging.getLogger("airflow").setLevel(logging.WARNING)

        operator = TronEnergyCheckAddressOperator(task_id="bench", addresses=addresses)
        started = time.perf_counter()
        results = operator.execute(context={})  # type: ignore[arg-type]
        batch_seconds = time.perf_counter() - started
        assert len(results) == len(addresses)

        client = TronEnergyHook().get_conn()
        started = time.perf_counter()
        for address in addresses:
            client.check_address(address)
        sequential_seconds = time.perf_counter() - started
    finally:
        sandbox.stop()
    print(f"{args.addresses} addresses, sandbox latency {args.latency_ms} ms per request, "
          f"max_concurrency {DEFAULT_MAX_CONCURRENCY}")
    print(f"  TronEnergyCheckAddressOperator : {batch_seconds:7.2f} s  "
          f"({args.addresses / batch_seconds:7.0f} addresses/s)")
    print(f"  sequential hook loop : {sequential_seconds:7.2f} s  "
          f"({args.addresses / sequential_seconds:7.0f} addresses/s)")
    speedup = sequential_seconds / batch_seconds
    print(f"  speed-up             : {speedup:7.1f}x  (aim >= 6x: "
          f"{'met' if speedup >= 6 else 'NOT met'})")


if __name__ == "__main__":
    main()
