"""One bench on two checkouts side by side in one run: before, after, before, after.

Each run is the checkout's own ``bench/NAME.py`` with ``PYTHONPATH`` set to that
checkout (so its package is the one imported) and the same arguments, one after the
other, so both see the same machine load; the load average is read before each run.
Every run's output is kept in ``--logs``; the table lists, per figure the bench
prints (its extractor below), the before and after values (median of the runs),
after / before, and whether the aim holds: counts that do not depend on load
(requests, energy, TRX, task instances) equal, times and rates within ``--tolerance``.

    .venv/bin/python bench/before_after.py --before ../bench-before NAME [--times 2]
        [--tolerance 1.15] [--logs DIR] -- [the bench's arguments]
    .venv/bin/python bench/before_after.py --parse DIR   # the table again from kept logs
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

PYTHON = sys.executable
HIGHER, LOWER, EQUAL = "higher is better", "lower is better", "equal"


@dataclass(frozen=True)
class Figure:
    """A figure a bench prints: its name, a regex whose first group is the number, and
    which way is better."""

    name: str
    pattern: str
    better: str
    group: int = 1


def num(text: str) -> float:
    """A printed number; a verdict word as 1 (met) or 0 (not met)."""
    word = text.strip().lower()
    if word in ("met", "meets", "yes"):
        return 1.0
    if word in ("not met", "missed", "below", "no"):
        return 0.0
    return float(text.replace(",", ""))


AIM = r"(met|MET|NOT met|MISSED|meets|BELOW)"


FIGURES: dict[str, list[Figure]] = {
    "hook_vs_raw": [
        Figure("hook us per request", r"hook\s+([\d.]+) us/request", LOWER),
        Figure("raw us per request", r"raw requests.Session\s+([\d.]+) us", LOWER),
        Figure("hook / raw", r"hook / raw\s*=\s*([\d.]+)x", LOWER),
        Figure("HttpHook / hook", r"HttpHook / hook\s*=\s*([\d.]+)x", HIGHER),
    ],
    "batch_check": [
        Figure("operator s", r"Operator :\s*([\d.]+) s", LOWER),
        Figure("sequential loop s", r"sequential hook loop :\s*([\d.]+) s", LOWER),
        Figure("speed-up (x)", r"speed-up\s*:\s*([\d.]+)x", HIGHER),
    ],
    "payout_send": [
        Figure("node requests per payout", r"node requests/payout\s*:\s*([\d.]+)", LOWER),
        Figure("node requests", r"node requests/payout\s*:\s*[\d.]+ \(([\d,]+) calls", LOWER),
        Figure("journal reads of the latest attempts", r"journal calls:.*\blatest ([\d,]+)",
               LOWER),
        Figure("get_now_block", r"node calls:.*\bget_now_block ([\d,]+)", LOWER),
        Figure("estimate_transfer_energy", r"node calls:.*estimate_transfer_energy ([\d,]+)",
               LOWER),
        Figure("charged / rented", r"charged / rented\s*:\s*([\d.]+)", EQUAL),
        Figure("OUT_OF_ENERGY", r"OUT_OF_ENERGY ([\d,]+)", EQUAL),
        Figure("TRX burned per transfer", r"burned with the rental ([\d.]+)", EQUAL),
        Figure("timed part s", r"time\s*:\s*([\d.]+) s", LOWER),
        Figure("CPU s, sending process", r"CPU while timed: this process ([\d.]+) s", LOWER),
        Figure("CPU s, sandbox", r"CPU while timed:.*the sandbox ([\d.]+) s", LOWER),
        Figure("every aim met", r"every aim: " + AIM, HIGHER),
    ],
    "onchain_planning": [
        Figure("on-chain / chain-blind TRX", r"chain-blind TRX spent: ([\d.]+)", EQUAL),
        Figure("on-chain: energy bought", r"on-chain\s+energy needed\s+[\d,]+\s+bought\s+([\d,]+)",
               EQUAL),
        Figure("on-chain: TRX spent", r"on-chain\s+energy needed.*TRX spent\s+([\d.]+)", EQUAL),
        Figure("chain-blind: TRX spent", r"chain-blind\s+energy needed.*TRX spent\s+([\d.]+)",
               EQUAL),
        Figure("aim met", r"chain-blind TRX spent.*aim " + AIM, HIGHER),
    ],
    "energy_planned_vs_charged": [
        Figure("batch energy charged", r"(?m)^\s*batch\s+\d+\s+([\d,]+)", EQUAL),
        Figure("batch energy, first plan", r"(?m)^\s*batch\s+\d+\s+[\d,]+\s+([\d,]+)", EQUAL),
        Figure("batch energy, second plan",
               r"(?m)^\s*batch\s+\d+\s+[\d,]+\s+[\d,]+\s+([\d,]+)", EQUAL),
        Figure("rounds with the aim met", r"with a node: aim \S+(?: met)? in (\d+) of", HIGHER),
    ],
    "order_poll_budget": [
        Figure("500 waiting, shared: requests", r"(?m)^\s*500 shared\s+(\d+)", LOWER),
        Figure("500 waiting, shared: per interval", r"(?m)^\s*500 shared\s+\d+\s+([\d.]+)",
               LOWER),
        Figure("500 waiting, shared: peak /s", r"(?m)^\s*500 shared\s+\d+\s+[\d.]+\s+(\d+)",
               LOWER),
        Figure("500 waiting, shared: most reads of one order",
               r"(?m)^\s*500 shared\s+\d+\s+[\d.]+\s+\d+\s+(\d+)", EQUAL),
        Figure("aim met", r"order per interval: " + AIM, HIGHER),
    ],
    "node_broadcast": [
        Figure("getaccount reads /s", r"getaccount reads\s*:\s*([\d.]+)", HIGHER),
        Figure("transfers accepted /s", r"transfers accepted\s*:\s*([\d.]+)", HIGHER),
        Figure("accepted / reads", r"accepted / reads\s*:\s*([\d.]+)", HIGHER),
        Figure("aim met", r"every one executed: " + AIM, HIGHER),
    ],
    "payout_scale": [
        Figure("batch 100: wall s", r"(?m)^\s*batch\s+100\s+\S+\s+([\d.]+)", LOWER),
        Figure("batch 100: task instances",
               r"(?m)^\s*batch\s+100\s+\S+\s+[\d.]+\s+[\d.]+\s+(\d+)", EQUAL),
        Figure("batch 100: service requests",
               r"(?m)^\s*batch\s+100\s+\S+\s+[\d.]+\s+[\d.]+\s+\d+\s+(\d+)", LOWER),
        Figure("batch 100: peak RSS MiB",
               r"(?m)^\s*batch\s+100\s+\S+\s+[\d.]+\s+[\d.]+\s+\d+\s+\d+\s+(\d+)", LOWER),
        Figure("batch 100: XCom KiB",
               r"(?m)^\s*batch\s+100\s+\S+(?:\s+[\d.]+){5}\s+(\d+)", LOWER),
    ],
    "keeper_day": [
        Figure("keeper / burn", r"keeper / burn : ([\d.]+)", LOWER),
        Figure("fixed / burn", r"fixed / burn : ([\d.]+)", LOWER),
        Figure("keeper orders", r"(?m)^keeper\s+[\d,]+\s+([\d,]+)", LOWER),
        Figure("keeper transfers burned for energy",
               r"(?m)^keeper(?:\s+[\d,.]+){4}\s+([\d,]+)", LOWER),
        Figure("keeper runs", r"keeper: (\d+) runs", LOWER),
        Figure("every aim met", r"every aim: " + AIM, HIGHER),
    ],
    "transfer_triggers": [
        Figure("shared, 500 waiting: queries per poll cycle",
               r"queries per poll cycle ([\d.]+) vs", LOWER),
        Figure("own polls, 500 waiting: per interval", r"own polls.*per poll interval ([\d.]+)",
               LOWER),
    ],
    "sandbox_throughput": [
        Figure("signed req/s", r"signed\s*:\s*([\d.]+) req/s", HIGHER),
        Figure("signed / key-only", r"signed / key-only ratio : ([\d.]+)", HIGHER),
    ],
    "callbacks_throughput": [
        Figure("stored callbacks/s", r"stored[^:\n]*:\s*([\d.]+) callbacks/s", HIGHER),
        Figure("stored / ceiling", r"stored / ceiling ratio: ([\d.]+)", HIGHER),
    ],
    "receiver_limits_throughput": [
        Figure("guarded callbacks/s", r"guarded :\s*([\d.]+) callbacks/s", HIGHER),
        Figure("guarded / plain", r"guarded / plain: ([\d.]+)", HIGHER),
    ],
    "receiver_slow_body": [
        Figure("% got 200 under attack", r"([\d.]+)% of signed callbacks got 200", HIGHER),
        Figure("share under attack / without", r"under attack / without: ([\d.]+)", HIGHER),
    ],
    "energy_page": [
        Figure("365 days, warm ms", r"(?m)^[^\n]*365[^\n]*?\d+ ms\s+(\d+) ms", LOWER),
        Figure("aim met", r"aim: a year's page data.*: " + AIM, HIGHER),
    ],
    "deposit_scan": [
        Figure("USDT: requests", r"USDT: .*?blocks/s\); ([\d,]+) requests", LOWER),
        Figure("USDT: requests per block", r"USDT: .*?requests \(([\d.]+)/block", LOWER),
        Figure("USDT: blocks/s", r"USDT: [\d,]+ blocks in [\d.]+ s \((\d+) blocks/s", HIGHER),
        Figure("USDT: credited", r"USDT: .*?credited ([\d,]+) of", EQUAL),
        Figure("TRX: requests", r"TRX: .*?blocks/s\); ([\d,]+) requests", LOWER),
        Figure("TRX: credited", r"TRX: .*?credited ([\d,]+) of", EQUAL),
        Figure("live: max s after solid", r"live: .*max ([\d.]+) s", LOWER),
    ],
    "dag_parse_cost": [
        *(Figure(f"{name}: parse s", rf"(?m)^{name}\.py\s+([\d.]+)", LOWER)
          for name in ("batch_payout_preparation", "batch_payout_send", "deposit_watch",
                       "energy_keeper")),
    ],
}
"""Extractors for the benches' own lines; a bench without one shows its summary lines."""


def run_one(tree: Path, bench: str, args: list[str], log: Path) -> dict[str, object]:
    load = os.getloadavg()
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with log.open("w") as out:
        rc = subprocess.call([PYTHON, str(tree / "bench" / f"{bench}.py"), *args],
                             cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - started
    meta = {"tree": str(tree), "args": args, "rc": rc, "wall_s": round(wall, 1),
            "load": [round(x, 2) for x in load],
            "load_after": [round(x, 2) for x in os.getloadavg()]}
    log.with_suffix(".json").write_text(json.dumps(meta))
    return meta


def values(bench: str, text: str, extra: list[Figure]) -> dict[str, float]:
    found: dict[str, float] = {}
    for figure in FIGURES.get(bench, []) + extra:
        match = re.search(figure.pattern, text)
        if match:
            found[figure.name] = num(match.group(figure.group))
    return found


def show(xs: list[float]) -> str:
    return " / ".join(f"{int(x):,}" if x == int(x) else f"{x:g}" for x in xs)


def table(logs: Path, tolerance: float, extra: list[Figure]) -> None:
    bench = logs.name.split("@")[0]
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    loads: list[float] = []
    for meta_path in sorted(logs.glob("*.json")):
        meta = json.loads(meta_path.read_text())
        side = meta_path.stem.split("-")[1]
        text = meta_path.with_suffix(".log").read_text()
        got = values(bench, text, extra)
        got["wall time s"] = meta["wall_s"]
        got["exit code"] = meta["rc"]
        runs[side].append(got)
        loads.append(meta["load"][0])
    if not loads:
        print(f"\n{bench}: no finished run in {logs}")
        return
    better = {f.name: f.better for f in FIGURES.get(bench, []) + extra}
    better.update({"wall time s": LOWER, "exit code": EQUAL})
    print(f"\n{bench}: {len(runs['before'])} before / {len(runs['after'])} after runs, "
          f"alternating; load average {min(loads):.1f}-{max(loads):.1f}")
    print("| bench | figure | before | after | after/before | aim met? |")
    print("|---|---|---|---|---|---|")
    names = [n for n in better if any(n in r for r in runs["before"] + runs["after"])]
    for name in names:
        b = [r[name] for r in runs["before"] if name in r]
        a = [r[name] for r in runs["after"] if name in r]
        if not a or not b:
            print(f"| {bench} | {name} | {b or '-'} | {a or '-'} | | not measured |")
            continue
        mb, ma = statistics.median(b), statistics.median(a)
        ratio = ma / mb if mb else (1.0 if ma == mb else float("inf"))
        rule = better[name]
        met = (ma == mb if rule == EQUAL else ratio <= tolerance if rule == LOWER
               else ratio >= 1 / tolerance)
        print(f"| {bench} | {name} | {show(b)} | {show(a)} | {ratio:.3f} | "
              f"{'met' if met else 'NOT met'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bench", nargs="?")
    parser.add_argument("--before", type=Path)
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--times", type=int, default=2, help="runs of each side")
    parser.add_argument("--tolerance", type=float, default=1.15,
                        help="times and rates: after within this factor of before")
    parser.add_argument("--logs", type=Path, default=None)
    parser.add_argument("--parse", type=Path, default=None, help="print the table of kept logs")
    parser.add_argument("--figure", action="append", default=[],
                        help="NAME=REGEX[=lower|higher|equal]: one more figure to extract")
    args, rest = parser.parse_known_args()
    rest = [r for r in rest if r != "--"]
    extra = []
    for spec in args.figure:
        name, pattern, *rule = spec.split("=", 2)
        extra.append(Figure(name, pattern, {"lower": LOWER, "higher": HIGHER,
                                            "equal": EQUAL}[rule[0] if rule else "lower"]))
    if args.parse:
        table(args.parse, args.tolerance, extra)
        return
    if not args.bench or not args.before:
        parser.error("a bench and --before are needed (or --parse DIR)")
    logs = args.logs or Path("/tmp") / f"{args.bench}@{int(time.time())}"
    logs = logs.parent / f"{args.bench}@{logs.name.split('@')[-1]}"
    logs.mkdir(parents=True, exist_ok=True)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    for i in range(args.times):
        for side, tree in trees.items():
            meta = run_one(tree, args.bench, rest, logs / f"{i}-{side}.log")
            print(f"run {i} {side}: rc {meta['rc']}, {meta['wall_s']} s, load {meta['load']}",
                  flush=True)
    print(f"logs: {logs}")
    table(logs, args.tolerance, extra)


if __name__ == "__main__":
    main()
