"""The payout example at 100, 1,000 and 10,000 recipients: does preparation scale with the batch?

Two shapes of the same DAG, side by side in one run: ``batch``, the example DAG
as users copy it (``example_dags/batch_payout_preparation.py``: every order in one
``TronEnergyBatchBuyOperator`` task, one ``TronEnergyOrdersSensor`` for all), and
``mapped`` (``bench/dags/batch_payout_mapped.py``: the same DAG with a mapped
purchase task and a mapped sensor task per order). Each size and shape gets a
fresh sandbox (its own process; 50 ms of latency added to every call of the
energy service's API, none to its node API), a fresh SQLite metadata DB, and a
realistic mix of recipients (70% USDT holders, 25% first-time, 5% inactive), the
same batch for both shapes. The DAG runs with ``airflow dags test`` in a child
process, as the main job runs it, with the sandbox as its TRON node too. Printed
per shape and size: wall time of the run, time per recipient, task instances
created, service requests made, peak RSS of the run, and bytes of XCom written;
then, per shape, the ratio of time per recipient at the largest size to the
middle one and whether each aim is met.

Aims (issue 15): the largest batch (10,000) prepared in under 2 minutes; time per
recipient there no more than 1.1x that at 1,000; task instances not growing with
the number of orders; XCom and memory growing linearly, not worse.

    .venv/bin/python bench/payout_scale.py [--sizes 100,1000,10000] [--latency-ms 50]
        [--shapes batch,mapped] [--mapped-max-size N]

``--mapped-max-size`` caps the mapped shape's sizes (say so when quoting figures).
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

from tronenergy_protocol.address import random_address  # noqa: E402
from tronenergy_sandbox.process import SandboxProcess, start_sandbox  # noqa: E402

MIX = (("holder", 70), ("first-time", 25), ("inactive", 5))
# The sandbox's clock at 1/4 speed: an order succeeds 0.75 s after it is placed and a
# 1 h rental lasts 15 minutes, longer than any run here buys and waits. (At 1/100, a
# rental lasted 36 s: the first orders of 10,000 recipients expired before the last
# were bought, and the on-chain confirmation rightly refused the batch.)
TIME_SCALE = 0.25
# shape: (DAG id, DAGs folder)
SHAPES = {"batch": (DAG_ID, ROOT / "example_dags"),
          "mapped": (f"{DAG_ID}_mapped", ROOT / "bench" / "dags")}


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


def run_size(shape: str, size: int, latency_ms: int, seed_of_batch: int) -> dict[str, Any]:
    dag_id, dags_folder = SHAPES[shape]
    sandbox = start_sandbox("--time-scale", str(TIME_SCALE), "--balance", str(10 * size + 1000))
    try:
        sender, payouts = seed(sandbox, size, random.Random(seed_of_batch))
        home = Path(tempfile.mkdtemp(prefix="tronenergy-scale-home-"))
        env = airflow_env(home, sandbox)
        env["AIRFLOW__CORE__DAGS_FOLDER"] = str(dags_folder)
        subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        requests.post(f"{sandbox.root_url}/sandbox/faults", json={
            "kind": "latency", "path": "*", "latency_ms": latency_ms}, timeout=10
        ).raise_for_status()
        conf = {"payouts_file": str(payouts), "sender_address": sender, "rent_time": "1",
                "max_spend_trx": str(10 * size), "confirm_timeout_seconds": "120"}
        log = home / "dag-test.log"
        started = time.monotonic()
        with log.open("w") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "airflow", "dags", "test", dag_id, "-c", json.dumps(conf)],
                stdout=out, stderr=subprocess.STDOUT, env=env)
            _, status, usage = os.wait4(process.pid, 0)
        wall = time.monotonic() - started
        with sqlite3.connect(home / "airflow.db") as db:
            state = db.execute("SELECT state FROM dag_run WHERE dag_id = ?", (dag_id,)).fetchone()
            tis = db.execute("SELECT COUNT(*) FROM task_instance WHERE dag_id = ?",
                             (dag_id,)).fetchone()[0]
            xcom = db.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM xcom WHERE dag_id = ?",
                              (dag_id,)).fetchone()[0]
        return {"shape": shape, "size": size, "state": state[0] if state else "none",
                "exit": status >> 8,
                "wall": wall, "per_recipient_ms": 1000 * wall / size, "task_instances": tis,
                "requests": requests_made(sandbox), "rss_mib": usage.ru_maxrss / 1024,
                "xcom_kib": xcom / 1024, "log": str(log)}
    finally:
        sandbox.stop()


def aims(rows: list[dict[str, Any]]) -> dict[str, bool]:
    """The issue's aims, for one shape's rows (its largest size against the one before)."""
    big, mid = rows[-1], rows[-2]
    ratio = big["per_recipient_ms"] / mid["per_recipient_ms"]
    grow = big["size"] / mid["size"]
    return {"all runs succeeded": all(r["state"] == "success" for r in rows),
            f"{big['size']:,} prepared in under 2 minutes ({big['wall']:.1f} s)":
                big["wall"] < 120,
            f"time per recipient {big['size']:,} vs {mid['size']:,}: {ratio:.2f} <= 1.1":
                ratio <= 1.1,
            f"task instances do not grow with the orders ({mid['task_instances']} -> "
            f"{big['task_instances']})": big["task_instances"] <= mid["task_instances"],
            "XCom grows linearly": big["xcom_kib"] <= mid["xcom_kib"] * grow * 1.1,
            "memory grows linearly": big["rss_mib"] <= mid["rss_mib"] * grow * 1.1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--shapes", default="batch,mapped",
                        help="comma-separated, from: " + ", ".join(SHAPES))
    parser.add_argument("--mapped-max-size", type=int, default=0,
                        help="skip the mapped shape above this many recipients (0: no cap)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = [s for s in args.shapes.split(",") if s]
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        parser.error(f"unknown shapes {unknown}; known: {', '.join(SHAPES)}")
    print(f"payout example, {args.latency_ms} ms added to every service call; mix "
          + ", ".join(f"{share}% {kind}" for kind, share in MIX) + "; shapes: "
          + ", ".join(f"{s} ({SHAPES[s][0]})" for s in shapes))
    if args.mapped_max_size and "mapped" in shapes:
        print(f"the mapped shape is capped at {args.mapped_max_size:,} recipients "
              "(--mapped-max-size): its larger sizes are not measured")
    print(f"\n{'shape':>7} {'recipients':>10} {'state':>8} {'wall s':>8} {'ms/recipient':>13} "
          f"{'task inst.':>10} {'requests':>9} {'peak RSS MiB':>13} {'XCom KiB':>9}")
    rows: dict[str, list[dict[str, Any]]] = {shape: [] for shape in shapes}
    for i, size in enumerate(sizes):
        for shape in shapes:  # the same batch for every shape, one after the other
            if shape == "mapped" and args.mapped_max_size and size > args.mapped_max_size:
                print(f"{shape:>7} {size:>10}  not run (--mapped-max-size "
                      f"{args.mapped_max_size:,})", flush=True)
                continue
            row = run_size(shape, size, args.latency_ms, args.seed * 1000 + i)
            rows[shape].append(row)
            print(f"{shape:>7} {size:>10} {row['state']:>8} {row['wall']:>8.1f} "
                  f"{row['per_recipient_ms']:>13.2f} {row['task_instances']:>10} "
                  f"{row['requests']:>9} {row['rss_mib']:>13.0f} {row['xcom_kib']:>9.0f}",
                  flush=True)
            if row["state"] != "success":
                print(f"{'':>19}the run did not succeed; its log: {row['log']}")
    for shape, measured in rows.items():
        if len(measured) < 2:
            continue
        print(f"\n{shape}:")
        for aim, met in aims(measured).items():
            print(f"aim: {aim}: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
