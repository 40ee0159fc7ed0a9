"""A payout batch and a deposit scan through one rate-limited node key, in two workers at once.

The sandbox runs in its own process (the CLI, ``--time-scale 1``: a block every 3 s as on
mainnet) and is the TRON node. Its node API is limited as TronGrid limits a key
(``POST /sandbox/rate-limit``: ``--rate`` requests a second per ``TRON-PRO-API-KEY``, 429
with TronGrid's body and ``Retry-After`` above it). Two worker processes share one
``tron_node`` connection (one URL, one key) and its ``requests_per_second`` (``--rate``):
its pace is kept in the purchase journal's database (``pace.store``; SQLite in a temporary
folder on this host, or ``--store``, e.g. the PostgreSQL every host of a deployment shares).

- **payouts** (worker 1): ``--payouts`` USDT payouts prepared and their energy rented as
  bench/payout_send.py does, before the limit and outside the timing; then, timed, what
  ``TronPayoutOperator`` does in its worker: a send pass and the watch every 3 s until
  every payout is confirmed. Exactly once: one successful transfer per recipient on chain.
- **deposit scan** (worker 2): ``--blocks`` blocks before the solid head filled with
  ``--deposits`` deposits among other traffic (bench/deposit_scan.py's day), then, timed,
  one ``DepositScan`` run over them (16 reads in flight, the scan's own budget above the
  pace). Exactly once: every deposit credited once, the ledger's total the chain's.

Before them, the store's round trip: ``--reservations`` slots reserved from 8 threads at
once (1,000 a second, so none waits for its slot): milliseconds per reservation, median and
99th percentile, and the reservations a second one row takes, against the rate asked.

Then **a keeper day** (``--keeper-time-scale``, bench/keeper_day.py's day on a sandbox of
its own, its key alone limited to ``--rate``): the keeper's watcher and runs read the node
through the same kind of paced connection. Its reads follow the chain's clock, not a
batch, so no ideal pace applies: printed are the keeper's requests at the sandbox, the
429s, the busiest second, and keeper_day's own aims (no purchase twice, none burned).
``--phases`` picks ``batch`` (payouts and scan), ``keeper``, or both.

Both batch workers start at once when both are ready. Printed per worker: its time and
node requests, and for the two together: the requests and 429s the sandbox counted while
they ran, the time, and the time at the limit's ideal pace (requests / rate) beside it
(aim: within 1.3x), and the busiest second at the sandbox.

    .venv/bin/python bench/node_pace.py [--rate 15] [--payouts 1000] [--blocks 2000]
        [--deposits 200] [--store URL] [--reservations 2000] [--phases batch,keeper]
        [--keeper-time-scale 0.0025]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

os.environ["AIRFLOW_HOME"] = tempfile.mkdtemp(prefix="tronenergy-bench-")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import deposit_scan as scan_bench  # bench/deposit_scan.py: its day of traffic
import payout_send as payout_bench  # bench/payout_send.py: its batch and send

from airflow_provider_tronenergy.client import TronEnergyClient
from airflow_provider_tronenergy.deposits.ledger import DepositLedger
from airflow_provider_tronenergy.deposits.scan.core import DepositScan, ScanSettings
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.pace.store import PaceStore, SqlPace, pace_key
from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.payout.rows import payouts
from airflow_provider_tronenergy.payout.send import SendSettings
from tronenergy_protocol.address import random_address
from tronenergy_sandbox.chain.multicall import MULTICALL
from tronenergy_sandbox.process import start_sandbox

USDT = payout_bench.USDT
NODE_KEY = "bench-node-key"
"""The key both workers send (the sandbox's node does not check it; it limits per key)."""
RATIO_AIM = 1.3


def pace_of(cfg: dict[str, Any]) -> SqlPace:
    """The connection's shared pace, as the tron_node hook builds it (``connection_pace``)."""
    return SqlPace(PaceStore(cfg["store"], table_prefix=cfg["prefix"]),
                   pace_key(cfg["root"], NODE_KEY), Decimal(cfg["rate"]))


def ready_then_wait() -> None:
    """Tell the parent this worker is prepared; start when it says so."""
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        raise SystemExit("no go")


def payouts_worker(cfg: dict[str, Any]) -> dict[str, Any]:
    sandbox = SimpleNamespace(root_url=cfg["root"], url=cfg["url"])
    control = payout_bench.Control(sandbox)  # type: ignore[arg-type]
    size = int(cfg["payouts"])
    rng = random.Random(cfg["seed"])
    os.environ[f"AIRFLOW_CONN_{payout_bench.NODE_CONN.upper()}"] = json.dumps(
        {"conn_type": "tron_node", "host": cfg["root"], "extra": {"multicall": MULTICALL}})
    client = TronEnergyClient(cfg["url"], os.environ["BENCH_SERVICE_KEY"],
                              os.environ["BENCH_SERVICE_SECRET"])
    with payout_bench.signer_of("local", 0) as signer:
        sender = signer.address
        control.call("POST", f"/addresses/{sender}/balances",
                     {"trx": str(size + 1_000), "usdt": str(1_000 * size)})
        batch_id = f"pace-{size}-{int(time.time())}"
        made = payout_bench.recipients(control, size, rng)
        rows = [{"recipient": a, "amount": f"{rng.randint(1, 999)}.{rng.randint(0, 99):02d}"}
                for a, _ in made]
        with TronNodeClient(cfg["root"], usdt_contract=USDT) as plain:
            plan, _, _ = payout_bench.rent(client, plain, sender, rows, batch_id)
        batch = payouts([{**row, "energy": r["energy"]} for row, r in
                         zip(rows, plan["recipients"], strict=True)], batch_id=batch_id)
        store = PayoutJournal(f"sqlite:///{cfg['workdir']}/payouts.db")
        store.ensure_schema()
        journal = payout_bench.Counting(store)
        with TronNodeClient(cfg["root"], api_key=NODE_KEY, usdt_contract=USDT,
                            multicall=MULTICALL, pace=pace_of(cfg)) as paced:
            node = payout_bench.Counting(paced)
            ready_then_wait()
            started = time.perf_counter()
            status, _, passes = payout_bench.send_batch(
                journal, node, signer, SendSettings(contract=USDT), batch, sender, batch_id,
                3.0)
            elapsed = time.perf_counter() - started
    on_chain = control.call("GET", "/chain/transactions", owner=sender)
    successes = Counter(t["to"] for t in on_chain
                        if ((t.get("receipt") or {}).get("receipt") or {}).get("result")
                        == "SUCCESS")
    once = len(successes) == size and set(successes.values()) == {1} and len(on_chain) == size
    return {"seconds": elapsed, "requests": sum(node.calls.values()),
            "confirmed": status.confirmed, "passes": passes, "once": once,
            "calls": node.report()}


def scan_worker(cfg: dict[str, Any]) -> dict[str, Any]:
    settings = ScanSettings(start=cfg["first"], max_blocks_per_run=10_000_000, max_concurrency=16,
                            max_requests_per_second=1000.0)
    with TronNodeClient(cfg["root"], api_key=NODE_KEY, pace=pace_of(cfg)) as node, \
            DepositLedger(f"sqlite:///{cfg['workdir']}/ledger.db") as ledger:
        ready_then_wait()
        started = time.perf_counter()
        report = DepositScan(ledger, node, cfg["addresses"], token="USDT",
                             settings=settings).run(credited_by="bench")
        elapsed = time.perf_counter() - started
        rows = [c for c in ledger.credits(limit=100_000) if c.token == "USDT"]
        keys = {(c.tx_hash, c.log_index) for c in rows}
        once = len(keys) == len(rows) == cfg["wanted"] \
            and sum(ledger.totals("USDT").values()) == cfg["wanted_total"]
    return {"seconds": elapsed, "requests": report.requests, "blocks": report.blocks,
            "credited": len(rows), "wanted": cfg["wanted"], "once": once}


def round_trip(store_url: str, prefix: str, count: int) -> tuple[float, float, float]:
    """Milliseconds per reservation (median, 99th percentile) and reservations a second,
    8 threads reserving at once."""
    from concurrent.futures import ThreadPoolExecutor

    store = PaceStore(store_url, table_prefix=prefix)
    key = pace_key("http://round-trip.invalid", secrets.token_hex(8))
    store.reserve(key, 1_000, 10**9)  # the table and the row made, outside the figures

    def one(_: int) -> float:
        started = time.perf_counter()
        store.reserve(key, 1_000, 10**9)
        return (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        took = sorted(pool.map(one, range(count)))
    per_second = count / (time.perf_counter() - started)
    store.close()
    return took[len(took) // 2], took[int(len(took) * 0.99)], per_second


def worker_main(kind: str, config: str) -> None:
    logging.getLogger("airflow_provider_tronenergy").setLevel(logging.ERROR)
    cfg = json.loads(Path(config).read_text())
    result = (payouts_worker if kind == "payouts" else scan_worker)(cfg)
    print("RESULT " + json.dumps(result), flush=True)


def start_worker(kind: str, config: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, __file__, "--worker", kind, "--config",
                             str(config)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)


def wait_for(process: subprocess.Popen[str], word: str) -> str:
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith(word):
            return line[len(word):].strip()
    raise SystemExit(f"a worker ended before {word!r} (exit {process.wait()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", choices=("payouts", "scan"), help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    parser.add_argument("--rate", default="15")
    parser.add_argument("--payouts", type=int, default=1_000)
    parser.add_argument("--blocks", type=int, default=2_000)
    parser.add_argument("--deposits", type=int, default=200)
    parser.add_argument("--store", default="", help="the pace's database (default: SQLite "
                        "in a temporary folder, as the journal's default on one host)")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--reservations", type=int, default=2_000)
    parser.add_argument("--phases", default="batch,keeper")
    parser.add_argument("--keeper-time-scale", type=float, default=0.0025)
    args = parser.parse_args()
    if args.worker:
        worker_main(args.worker, args.config)
        return
    workdir = Path(tempfile.mkdtemp(prefix="tronenergy-node-pace-"))
    phases = [p for p in args.phases.split(",") if p]
    if "batch" in phases:
        batch_phase(args, workdir)
    if "keeper" in phases:
        keeper_phase(args, workdir)


def batch_phase(args: argparse.Namespace, workdir: Path) -> None:
    sandbox = start_sandbox("--time-scale", "1", "--balance", "100000000")
    processes: list[subprocess.Popen[str]] = []
    try:
        control = scan_bench.Control(sandbox)  # type: ignore[arg-type]
        rng = random.Random(args.seed)
        addresses = [random_address() for _ in range(50)]
        solid = int(control.call("GET", "/chain")["solidified"])
        first = solid - args.blocks + 1
        traffic = scan_bench.day_of_traffic(first, args.blocks, args.deposits, addresses, rng)
        control.call("POST", "/chain/blocks/transfers", {"transfers": traffic})
        wanted = [t for t in traffic if t.get("token", "USDT") == "USDT"
                  and t["to"] in addresses and "contract" not in t and not t.get("failed")]
        cfg = {"root": sandbox.root_url, "url": sandbox.url, "rate": args.rate,
               "store": args.store or f"sqlite:///{workdir / 'journal.db'}",
               "prefix": f"bench{secrets.token_hex(3)}_", "workdir": str(workdir),
               "seed": args.seed, "payouts": args.payouts, "first": first,
               "addresses": addresses, "wanted": len(wanted),
               "wanted_total": sum(t["units"] for t in wanted)}
        median, p99, per_second = round_trip(cfg["store"], cfg["prefix"], args.reservations)
        print(f"pace store round trip: {median:.2f} ms per reservation (median), p99 "
              f"{p99:.2f} ms, {args.reservations:,} from 8 threads at once: "
              f"{per_second:.0f} reservations/s (the pace asks {args.rate}/s)", flush=True)
        config = workdir / "config.json"
        config.write_text(json.dumps(cfg))
        env = {**os.environ, "BENCH_SERVICE_KEY": sandbox.api_key,
               "BENCH_SERVICE_SECRET": sandbox.api_secret}
        print(f"a node key limited to {args.rate} requests/s at the sandbox (429 above it), "
              f"shared by two workers at requests_per_second={args.rate} (pace in "
              f"{'the given store' if args.store else 'SQLite'}): {args.payouts:,} payouts; "
              f"a scan of {args.blocks:,} blocks ({len(wanted):,} USDT deposits)", flush=True)
        started = time.perf_counter()
        processes = [start_worker(kind, config, env) for kind in ("payouts", "scan")]
        for process in processes:
            wait_for(process, "ready")
        print(f"prepared in {time.perf_counter() - started:.1f} s", flush=True)
        control.call("POST", "/rate-limit", {"requests_per_second": args.rate})
        started = time.perf_counter()
        for process in processes:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        results = [json.loads(wait_for(process, "RESULT ")) for process in processes]
        elapsed = time.perf_counter() - started
        counts = control.call("GET", "/rate-limit")
        report(args, results, counts, elapsed)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
        sandbox.stop()


def report(args: argparse.Namespace, results: list[dict[str, Any]], counts: dict[str, Any],
           elapsed: float) -> None:
    rate = float(args.rate)
    pay, scan = results
    print(f"payouts : {pay['confirmed']:,} confirmed in {pay['seconds']:.1f} s, "
          f"{pay['requests']:,} node requests ({pay['passes']} send pass(es)); exactly one "
          f"transfer per recipient: {'yes' if pay['once'] else 'NO'}\n"
          f"          node calls: {pay['calls']}")
    print(f"scan    : {scan['blocks']:,} blocks in {scan['seconds']:.1f} s, "
          f"{scan['requests']:,} node requests; credited {scan['credited']:,} of "
          f"{scan['wanted']:,}, each once and the totals the chain's: "
          f"{'yes' if scan['once'] else 'NO'}")
    requests_seen = int(counts["requests"])
    ideal = requests_seen / rate
    busiest = max((int(s["requests"]) for s in counts["per_second"][1:-1]), default=0)
    print(f"together: {requests_seen:,} requests and {counts['limited']} answered 429 at the "
          f"sandbox, in {elapsed:.1f} s; at the limit's ideal pace {ideal:.1f} s: ratio "
          f"{elapsed / ideal:.2f} (aim <= {RATIO_AIM}: "
          f"{'met' if elapsed / ideal <= RATIO_AIM else 'NOT met'}); busiest whole second "
          f"{busiest} requests")


def keeper_phase(args: argparse.Namespace, workdir: Path) -> None:
    """keeper_day's day, its node client paced and its key limited at the sandbox."""
    import keeper_day
    import requests

    store = args.store or f"sqlite:///{workdir / 'keeper-journal.db'}"
    prefix = f"bench{secrets.token_hex(3)}_"
    paces: dict[str, SqlPace] = {}
    counts: dict[str, Any] = {}
    start, client = keeper_day.start_sandbox, keeper_day.TronNodeClient

    def limited_sandbox(*options: str, **kwargs: Any) -> Any:
        process = start(*options, **kwargs)
        requests.post(f"{process.root_url}/sandbox/rate-limit", timeout=10, json={
            "requests_per_second": args.rate, "api_key": NODE_KEY}).raise_for_status()
        paces["pace"] = SqlPace(PaceStore(store, table_prefix=prefix),
                                pace_key(process.root_url, NODE_KEY), Decimal(args.rate))
        stop = process.stop

        def counted_stop() -> None:
            counts.update(requests.get(f"{process.root_url}/sandbox/rate-limit",
                                       timeout=10).json()["data"])
            stop()

        process.stop = counted_stop  # type: ignore[method-assign]
        return process

    def paced_client(url: str, **options: Any) -> TronNodeClient:
        return client(url, api_key=NODE_KEY, pace=paces["pace"], **options)

    keeper_day.start_sandbox = limited_sandbox
    keeper_day.TronNodeClient = paced_client  # type: ignore[misc]
    day = argparse.Namespace(time_scale=args.keeper_time_scale, peak=40.0, seed=27,
                             floor=400_000, target=800_000)
    print(f"\n== a keeper day, its node key limited to {args.rate}/s and paced at it ==",
          flush=True)
    started = time.perf_counter()
    figures = keeper_day.run_day(day, recovery=True)
    elapsed = time.perf_counter() - started
    per_second = counts.get("per_second", [])
    busiest = max((int(s["requests"]) for s in per_second[1:-1]), default=0)
    print(f"keeper day: {counts.get('requests', 0):,} node requests by the keeper's key and "
          f"{counts.get('limited', 0)} answered 429 at the sandbox in {elapsed:.1f} s "
          f"({int(counts.get('requests', 0)) / elapsed:.1f}/s on average, busiest whole "
          f"second {busiest}); keeper_day's aims: {figures['every aim']}")


if __name__ == "__main__":
    main()
