"""The payout example at 100, 1,000 and 10,000 recipients: does preparation scale with the batch?

Each size gets a fresh sandbox (its own process; 50 ms of latency added to every
call of the energy service's API, none to its node API), a fresh SQLite metadata
DB, and a realistic mix of recipients (70% USDT holders, 25% first-time, 5%
inactive). The real example DAG then runs with ``airflow dags test`` in a child
process, as the main job runs it, with the sandbox as its TRON node too. Printed
per size: wall time of the run, time per recipient, task instances created,
service requests made, peak RSS of the run, and bytes of XCom written; then the
ratio of time per recipient at the largest size to the middle one.

Aims (issue 15): the largest batch (10,000) prepared in under 2 minutes; time per
recipient there no more than 1.1x that at 1,000; task instances not growing with
the number of orders; XCom and memory growing linearly, not worse.

    .venv/bin/python bench/payout_scale.py [--sizes 100,1000,10000] [--latency-ms 50]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from main_job import DAG_ID, airflow_env  # noqa: E402 - the main job's own set-up

from airflow_provider_tronenergy.protocol.address import random_address  # noqa: E402
from airflow_provider_tronenergy.sandbox.process import SandboxProcess, start_sandbox  # noqa: E402

MIX = (("holder", 70), ("first-time", 25), ("inactive", 5))


def seed(sandbox: SandboxProcess, size: int, rng: random.Random) -> tuple[str, Path]:
    """The hot wallet and a payouts file of ``size`` recipients in the issue's mix."""
    root = f"{sandbox.root_url}/sandbox"
    session = requests.Session()

    def post(path: str, body: Any = None) -> None:
        session.post(root + path, json=body, timeout=30).raise_for_status()

    sender = random_address()
    post(f"/addresses/{sender}/activate")
    post(f"/addresses/{sender}/balances", {"trx": str(2 * size + 100),
                                           "usdt": str(2000 * size)})
    kinds = [kind for kind, share in MIX for _ in range(size * share // 100)]
    kinds += ["holder"] * (size - len(kinds))
    rng.shuffle(kinds)
    rows = []
    for kind in kinds:
        address = random_address()
        if kind != "inactive":
            post(f"/addresses/{address}/activate")
        if kind == "holder":
            post(f"/addresses/{address}/holder", {"token": "USDT"})
        rows.append(f"{address},{rng.randint(1, 1999)}.{rng.randint(0, 99):02d}\n")
    payouts = Path(tempfile.mkdtemp(prefix="tronenergy-scale-")) / "payouts.csv"
    payouts.write_text("recipient,amount\n" + "".join(rows))
    session.close()
    return sender, payouts


def requests_made(sandbox: SandboxProcess) -> int:
    faults = requests.get(f"{sandbox.root_url}/sandbox/faults", timeout=10).json()["data"]
    return sum(f["fired"] for f in faults if f["kind"] == "latency")


def run_size(size: int, latency_ms: int, rng: random.Random) -> dict[str, Any]:
    sandbox = start_sandbox("--time-scale", "0.01", "--balance", str(10 * size + 1000))
    try:
        sender, payouts = seed(sandbox, size, rng)
        home = Path(tempfile.mkdtemp(prefix="tronenergy-scale-home-"))
        env = airflow_env(home, sandbox)
        subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        requests.post(f"{sandbox.root_url}/sandbox/faults", json={
            "kind": "latency", "path": "*", "latency_ms": latency_ms}, timeout=10
        ).raise_for_status()
        conf = {"payouts_file": str(payouts), "sender_address": sender, "rent_time": "1",
                "max_cost_trx": str(10 * size), "confirm_timeout": "120"}
        log = home / "dag-test.log"
        started = time.monotonic()
        with log.open("w") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "airflow", "dags", "test", DAG_ID, "-c", json.dumps(conf)],
                stdout=out, stderr=subprocess.STDOUT, env=env)
            _, status, usage = os.wait4(process.pid, 0)
        wall = time.monotonic() - started
        with sqlite3.connect(home / "airflow.db") as db:
            state = db.execute("SELECT state FROM dag_run WHERE dag_id = ?", (DAG_ID,)).fetchone()
            tis = db.execute("SELECT COUNT(*) FROM task_instance WHERE dag_id = ?",
                             (DAG_ID,)).fetchone()[0]
            xcom = db.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM xcom WHERE dag_id = ?",
                              (DAG_ID,)).fetchone()[0]
        return {"size": size, "state": state[0] if state else "none", "exit": status >> 8,
                "wall": wall, "per_recipient_ms": 1000 * wall / size, "task_instances": tis,
                "requests": requests_made(sandbox), "rss_mib": usage.ru_maxrss / 1024,
                "xcom_kib": xcom / 1024, "log": str(log)}
    finally:
        sandbox.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = random.Random(args.seed)
    print(f"payout example, {args.latency_ms} ms added to every service call; mix "
          + ", ".join(f"{share}% {kind}" for kind, share in MIX) + "\n")
    print(f"{'recipients':>10} {'state':>8} {'wall s':>8} {'ms/recipient':>13} "
          f"{'task inst.':>10} {'requests':>9} {'peak RSS MiB':>13} {'XCom KiB':>9}")
    rows = []
    for size in sizes:
        row = run_size(size, args.latency_ms, rng)
        rows.append(row)
        print(f"{size:>10} {row['state']:>8} {row['wall']:>8.1f} {row['per_recipient_ms']:>13.2f} "
              f"{row['task_instances']:>10} {row['requests']:>9} {row['rss_mib']:>13.0f} "
              f"{row['xcom_kib']:>9.0f}", flush=True)
        if row["state"] != "success":
            print(f"           the run did not succeed; its log: {row['log']}")
    if len(rows) < 2:
        return
    big, mid = rows[-1], rows[-2]
    ratio = big["per_recipient_ms"] / mid["per_recipient_ms"]
    tis_flat = big["task_instances"] <= mid["task_instances"]
    xcom_linear = big["xcom_kib"] <= mid["xcom_kib"] * big["size"] / mid["size"] * 1.1
    rss_linear = big["rss_mib"] <= mid["rss_mib"] * big["size"] / mid["size"] * 1.1
    ok = {"all runs succeeded": all(r["state"] == "success" for r in rows),
          f"{big['size']:,} prepared in under 2 minutes": big["wall"] < 120,
          f"time per recipient {big['size']:,} vs {mid['size']:,}: {ratio:.2f} <= 1.1":
              ratio <= 1.1,
          "task instances do not grow with the orders": tis_flat,
          "XCom grows linearly": xcom_linear, "memory grows linearly": rss_linear}
    print()
    for aim, met in ok.items():
        print(f"aim: {aim}: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
