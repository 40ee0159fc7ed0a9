"""A day of blocks scanned for deposits on the sandbox's chain, 50 ms added to every node call.

The sandbox runs in its own process (the CLI, ``--time-scale 1``: a block every 3 s as on
mainnet) and is the TRON node. Its chain had a past: a day of blocks (28,800) before the
solid head is filled in one control request (``POST /sandbox/chain/blocks/transfers``) with
1,000 USDT deposits into 50 deposit addresses among other traffic (4,000 USDT transfers to
other addresses, 200 look-alike-token transfers and 100 failed calls to the deposit
addresses, 500 TRX transfers, 100 of them deposits). Then a latency fault adds 50 ms to
every node call (``/wallet*``, ``/walletsolidity*``) and, timed:

1. **Backlog**: one ``DepositScan`` run over the day (USDT), from ``start`` to the solid
   head, on one worker (``--concurrency`` threads within ``--rps`` requests per second),
   into a SQLite ledger. Reported: the time (aim: under 300 s), node requests per block
   (the scan's own count and the sandbox's count of delayed requests; aim: at most 1.05),
   and every deposit credited exactly once, the ledger's total the chain's. The TRX scan of
   the same day (``getblockbylimitnext``, 50 blocks a request) is reported beside it.
2. **Live**: the scan following the chain (``HeadWatch`` every ``--interval`` seconds, then a
   run, as the operator's worker mode does) while ``--live`` deposits arrive in the next
   blocks, a few seconds apart. Per deposit: when its block became solid (the block 19
   above it was produced, on the sandbox's clock, the wall clock here) to when the ledger
   credited it. Aim: at most two scan intervals.

    .venv/bin/python bench/deposit_scan.py [--blocks 28800] [--deposits 1000]
        [--latency-ms 50] [--concurrency 16] [--rps 400] [--interval 6] [--live 20]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import threading
import time
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

os.environ["AIRFLOW_HOME"] = tempfile.mkdtemp(prefix="tronenergy-bench-")

import requests

from airflow_provider_tronenergy.deposits.ledger import DepositLedger
from airflow_provider_tronenergy.deposits.scan.core import DepositScan, ScanSettings
from airflow_provider_tronenergy.deposits.scan.wait import HeadWatch, wait_for_head
from airflow_provider_tronenergy.node.client import TronNodeClient
from tronenergy_protocol.address import random_address
from tronenergy_sandbox.chain.blocks import SOLIDIFY_BLOCKS
from tronenergy_sandbox.process import SandboxProcess, start_sandbox

TIME_AIM_S = 300.0
MAX_REQUESTS_PER_BLOCK = 1.05
LATENCY_AIM_INTERVALS = 2


class Control:
    def __init__(self, sandbox: SandboxProcess) -> None:
        self.root = f"{sandbox.root_url}/sandbox"
        self.session = requests.Session()

    def call(self, method: str, path: str, body: Any = None) -> Any:
        response = self.session.request(method, self.root + path, json=body, timeout=600)
        response.raise_for_status()
        return json.loads(response.text, parse_float=Decimal)["data"]


def day_of_traffic(first: int, blocks: int, deposits: int, addresses: list[str],
                   rng: random.Random) -> list[dict[str, Any]]:
    """The deposits and the other traffic, each in a random block of the day."""
    def block() -> int:
        return first + rng.randrange(blocks)

    traffic = [{"block": block(), "to": rng.choice(addresses),
                "units": rng.randint(1, 10_000) * 10_000} for _ in range(deposits)]
    traffic += [{"block": block(), "to": random_address(), "units": rng.randint(1, 10**9)}
                for _ in range(4 * deposits)]
    look_alike = random_address()
    traffic += [{"block": block(), "to": rng.choice(addresses), "units": 10**9,
                 "contract": look_alike} for _ in range(deposits // 5)]
    traffic += [{"block": block(), "to": rng.choice(addresses), "units": 10**6, "failed": True}
                for _ in range(deposits // 10)]
    traffic += [{"block": block(), "token": "TRX", "units": rng.randint(1, 10**8),
                 "to": rng.choice(addresses) if i < deposits // 10 else random_address()}
                for i in range(deposits // 2)]
    return traffic


def delayed(control: Control, fault_id: int) -> int:
    return next(int(f["fired"]) for f in control.call("GET", "/faults") if f["id"] == fault_id)


def backlog(args: argparse.Namespace, sandbox: SandboxProcess, control: Control,
            workdir: Path) -> dict[str, Any]:
    rng = random.Random(args.seed)
    addresses = [random_address() for _ in range(50)]
    solid = int(control.call("GET", "/chain")["solidified"])
    first = solid - args.blocks + 1
    traffic = day_of_traffic(first, args.blocks, args.deposits, addresses, rng)
    started = time.perf_counter()
    control.call("POST", "/chain/blocks/transfers", {"transfers": traffic})
    print(f"placed {len(traffic):,} transactions into blocks {first:,} to {solid:,} "
          f"in {time.perf_counter() - started:.1f} s")
    fault = control.call("POST", "/faults", {"kind": "latency", "path": "/wallet*",
                                             "latency_ms": args.latency_ms})
    settings = ScanSettings(start=first, max_blocks_per_run=args.blocks,
                            max_concurrency=args.concurrency, max_requests_per_second=args.rps)
    out: dict[str, Any] = {"addresses": addresses, "first": first}
    with TronNodeClient(sandbox.root_url) as node, \
            DepositLedger(f"sqlite:///{workdir / 'ledger.db'}") as ledger:
        for token in ("USDT", "TRX"):
            before = delayed(control, fault["id"])
            scan = DepositScan(ledger, node, addresses, token=token, settings=settings)
            started = time.perf_counter()
            report = scan.run(credited_by="bench")
            seconds = time.perf_counter() - started
            sent = delayed(control, fault["id"]) - before
            wanted = [t for t in traffic if t.get("token", "USDT") == token
                      and t["to"] in addresses and "contract" not in t and not t.get("failed")]
            rows = [c for c in ledger.credits(limit=100_000) if c.token == token]
            keys = {(c.tx_hash, c.log_index) for c in rows}
            chain_total = sum(t["units"] for t in wanted)
            out[token] = {"seconds": seconds, "blocks": report.blocks,
                          "requests": report.requests, "delayed": sent,
                          "per_block": report.requests / report.blocks,
                          "delayed_per_block": sent / report.blocks,
                          "credited": len(report.credited), "wanted": len(wanted),
                          "once": len(keys) == len(rows) == len(wanted),
                          "totals_match": sum(ledger.totals(token).values()) == chain_total}
    return out


def live(args: argparse.Namespace, sandbox: SandboxProcess, control: Control,
         addresses: list[str], workdir: Path) -> list[float]:
    """Deposits arriving while the scan follows the chain: seconds from solid to credited."""
    interval = float(args.interval)
    block_s = int(control.call("GET", "/chain")["block_interval_ms"]) / 1000
    stop = threading.Event()
    url = f"sqlite:///{workdir / 'live.db'}"
    with TronNodeClient(sandbox.root_url) as node, DepositLedger(url) as ledger:
        settings = ScanSettings(max_concurrency=args.concurrency, max_requests_per_second=args.rps)
        scan = DepositScan(ledger, node, addresses, settings=settings)
        scan.run()  # the first run: start at the solid head now

        def follow() -> None:
            while not stop.is_set():
                watch = HeadWatch(scan.checkpoint() or 0, poll_interval=interval,
                                  end_time=time.time() + interval * 3, log=_Quiet())
                if wait_for_head(scan.tip, watch)["status"] == "moved":
                    scan.run(credited_by="live")

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        placed: set[str] = set()
        rng = random.Random(args.seed + 1)
        for _ in range(args.live):
            made = control.call("POST", "/chain/blocks/transfers", {"transfers": [
                {"to": rng.choice(addresses), "units": 1_000_000}]})  # the next block
            placed.add(made["transactions"][0]["txid"])
            time.sleep(rng.uniform(1, 4))
        deadline = time.time() + SOLIDIFY_BLOCKS * block_s + 4 * interval + 30
        credited: dict[str, float] = {}
        while len(credited) < len(placed) and time.time() < deadline:
            for c in ledger.credits(limit=10_000):
                if c.tx_hash in placed and c.block_timestamp_ms is not None:
                    # Solid once the block 19 above it is produced (the sandbox's clock is
                    # this machine's: time scale 1).
                    solid_at = c.block_timestamp_ms / 1000 + SOLIDIFY_BLOCKS * block_s
                    credited[c.tx_hash] = datetime.fromisoformat(c.credited_at).timestamp() \
                        - solid_at
            time.sleep(0.5)
        stop.set()
        follower.join(interval * 4)
    return sorted(credited.values()) + \
        [float("inf")] * (len(placed) - len(credited))


class _Quiet:
    def info(self, *args: Any) -> None: ...

    def warning(self, *args: Any) -> None: ...


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--blocks", type=int, default=28_800)
    parser.add_argument("--deposits", type=int, default=1_000)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rps", type=float, default=400)
    parser.add_argument("--interval", type=float, default=6)
    parser.add_argument("--live", type=int, default=20)
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="tronenergy-deposit-scan-"))
    sandbox = start_sandbox("--time-scale", "1")
    try:
        control = Control(sandbox)
        print(f"a day of blocks ({args.blocks:,}), {args.deposits:,} deposits among other "
              f"traffic, {args.latency_ms} ms added to every node call; concurrency "
              f"{args.concurrency}, at most {args.rps:g} requests/s")
        out = backlog(args, sandbox, control, workdir)
        for token in ("USDT", "TRX"):
            row = out[token]
            print(f"{token}: {row['blocks']:,} blocks in {row['seconds']:.1f} s "
                  f"({row['blocks'] / row['seconds']:.0f} blocks/s); "
                  f"{row['requests']:,} requests ({row['per_block']:.3f}/block; the sandbox "
                  f"delayed {row['delayed']:,}: {row['delayed_per_block']:.3f}/block); "
                  f"credited {row['credited']:,} of {row['wanted']:,}, each once: "
                  f"{row['once']}, ledger total = chain's: {row['totals_match']}")
        usdt = out["USDT"]
        print(f"aim: a day under {TIME_AIM_S:.0f} s: {usdt['seconds']:.1f} s "
              f"(ratio {usdt['seconds'] / TIME_AIM_S:.2f}) "
              f"{'met' if usdt['seconds'] < TIME_AIM_S else 'NOT met'}")
        worst = max(usdt["per_block"], usdt["delayed_per_block"])
        print(f"aim: at most {MAX_REQUESTS_PER_BLOCK} requests/block: {worst:.3f} "
              f"{'met' if worst <= MAX_REQUESTS_PER_BLOCK else 'NOT met'}")
        latencies = live(args, sandbox, control, out["addresses"], workdir)
        aim = LATENCY_AIM_INTERVALS * args.interval
        print(f"live: {len(latencies)} deposits, scan interval {args.interval:g} s: credited "
              f"after their block was solid in min {latencies[0]:.1f} s, median "
              f"{latencies[len(latencies) // 2]:.1f} s, max {latencies[-1]:.1f} s")
        print(f"aim: within {LATENCY_AIM_INTERVALS} scan intervals ({aim:g} s): max "
              f"{latencies[-1]:.1f} s (ratio {latencies[-1] / aim:.2f}) "
              f"{'met' if latencies[-1] <= aim else 'NOT met'}")
    finally:
        sandbox.stop()


if __name__ == "__main__":
    main()
