"""A day of withdrawals on the sandbox chain: the energy keeper vs burning vs a fixed hourly rental.

One sandbox (its own process), its day compressed (``--time-scale 0.0025``: a day in
216 s, a block every 7.5 ms, a rented hour 9 s). Three hot wallets send the same
withdrawals, at the same moments, to the same kinds of recipient (80% USDT holders,
20% first-time), at a rate that varies through the day (a quarter of ``--peak`` at
night, ``--peak`` per hour in the afternoon): signed USDT transfers built, signed and
broadcast with tronpy, as a payout system's own code sends them.

- **keeper**: the energy keeper as the ``energy_keeper`` DAG runs it, here as plain
  objects in one process: its watcher (``KeeperWatch``, the trigger's rule) polls the
  wallet every 30 s of chain time and wakes the keeper (``Keeper.keep``) on a crossing
  of the floor or a rental's end; a run every 30 min is the safety net. Its purchases go
  through the purchase journal (SQLite) like every other.
- **burn**: nothing rented: the chain burns TRX for every transfer's energy.
- **fixed**: enough energy for the busiest hour of this very traffic, rented at the
  start of every hour (what "rent a fixed large amount hourly" has to rent never to burn).

Printed: per wallet, the transfers, the TRX paid for rentals, the TRX the chain burned
(energy and bandwidth, from the receipts), the transfers that burned TRX for energy,
and the total; the ratios keeper / burn, fixed / burn and keeper / fixed; and whether
each aim is met: no keeper transfer burns TRX for energy, its spend within the daily
budget, no order above the price cap, no purchase made twice (every journaled purchase
one order at the service, every order one journaled purchase).

``--recovery off,on`` runs the day once per setting, one after the other, on a fresh
sandbox each (``off``: ``--no-resource-recovery``, usage only grows, the sandbox before
issue 37; ``on``: usage recovers over java-tron's 24 h window), and prints the two side
by side.

    .venv/bin/python bench/keeper_day.py [--time-scale 0.0025] [--peak 40] [--seed 27]
        [--floor 400000] [--target 800000] [--recovery on|off|off,on]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import tempfile
import threading
import time
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import requests
from tronpy import Tron
from tronpy.keys import PrivateKey
from tronpy.providers import HTTPProvider

from airflow_provider_tronenergy.client import TronEnergyClient
from airflow_provider_tronenergy.keeper.keep import Keeper
from airflow_provider_tronenergy.keeper.policy import KeeperPolicy
from airflow_provider_tronenergy.keeper.reading import Seen, seen_in
from airflow_provider_tronenergy.keeper.registry import KeeperRegistry
from airflow_provider_tronenergy.keeper.watch import KeeperWatch
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.purchase_journal import EntryState, PurchaseJournal
from tronenergy_sandbox.process import SandboxProcess, start_sandbox

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
HOLDER, FIRST_TIME = 64_285, 130_285  # the sandbox chain's charge at its default factor
DAY = 86_400.0
FEE_LIMIT = 30_000_000


@dataclass(frozen=True)
class Withdrawal:
    at: float  # seconds of chain time from the start of the day
    first_time: bool


def traffic(peak: float, seed: int) -> list[Withdrawal]:
    """Poisson arrivals at rate(h) = peak x (0.25 + 0.75 x sin^2(pi h / 24)) per hour."""
    rng, t = random.Random(seed), 0.0
    out: list[Withdrawal] = []
    while True:
        rate = peak * (0.25 + 0.75 * math.sin(math.pi * t / DAY) ** 2) / 3600
        t += rng.expovariate(rate)
        if t >= DAY:
            return out
        out.append(Withdrawal(t, rng.random() < 0.2))


def busiest_hour_energy(withdrawals: list[Withdrawal]) -> int:
    hours = [0] * 24
    for w in withdrawals:
        hours[int(w.at // 3600)] += FIRST_TIME if w.first_time else HOLDER
    return max(hours)


class Sandbox:
    """The sandbox's control API and its chain, through tronpy."""

    def __init__(self, process: SandboxProcess) -> None:
        self.process = process
        self.root = f"{process.root_url}/sandbox"
        self.session = requests.Session()
        self.tron = Tron(HTTPProvider(process.root_url + "/"))
        self.usdt = self.tron.get_contract(USDT)

    def call(self, method: str, path: str, body: Any = None, **query: str) -> Any:
        answer = self.session.request(method, self.root + path, json=body, params=query,
                                      timeout=60)
        answer.raise_for_status()
        return json.loads(answer.text, parse_float=Decimal)["data"]

    def wallet(self) -> tuple[PrivateKey, str]:
        key = PrivateKey.random()
        address = key.public_key.to_base58check_address()
        self.call("POST", f"/addresses/{address}/balances", {"trx": "100000", "usdt": "1000000"})
        return key, address

    def recipient(self, first_time: bool) -> str:
        address: str = PrivateKey.random().public_key.to_base58check_address()
        self.call("POST", f"/addresses/{address}/activate")
        if not first_time:
            self.call("POST", f"/addresses/{address}/holder", {"token": "USDT"})
        return address

    def send(self, key: PrivateKey, owner: str, to: str) -> None:
        txn = (self.usdt.functions.transfer(to, 1_000_000).with_owner(owner)
               .fee_limit(FEE_LIMIT).build().sign(key))
        txn.broadcast()


class Lines(logging.Handler):
    """The keeper's log lines, kept for the report (a task log would show them)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self.log = logging.getLogger("keeper_day")
        self.log.propagate = False
        self.log.setLevel(logging.INFO)
        self.log.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def run_keeper(sandbox: Sandbox, wallet: str, scale: float, policy: KeeperPolicy,
               journal: PurchaseJournal, registry: KeeperRegistry, stop: threading.Event,
               log: Lines, wakes: list[str]) -> None:
    """The watcher's loop and the keeper's runs, in chain time scaled to real time."""
    client = TronEnergyClient(sandbox.process.url, sandbox.process.api_key,
                              sandbox.process.api_secret)
    node = TronNodeClient(sandbox.process.root_url, usdt_contract=USDT)
    watch = KeeperWatch(rewake_after=600 * scale)
    runs = 0

    def keep(why: str, seen: dict[str, Seen] | None = None) -> None:
        nonlocal runs
        runs += 1
        wakes.append(why)
        Keeper("bench", policy, client, node, journal, scope=f"run-{runs}", log=log.log,
               hour_seconds=3600 * scale, registry=registry,
               wake_max_age=60 * scale).keep([wallet], seen=seen)

    keep("the first scheduled run")
    next_safety = time.monotonic() + 1800 * scale
    while not stop.is_set():
        wakes_now = watch.poll(registry.watched("bench"), node, 20, time.monotonic())
        if wakes_now:  # the run starts from what the watcher read, as the operator's does
            keep(wakes_now[0].reason, seen_in([w.to_dict() for w in wakes_now], "bench"))
        elif time.monotonic() >= next_safety:
            keep("the scheduled safety net")
        if time.monotonic() >= next_safety:
            next_safety = time.monotonic() + 1800 * scale
        stop.wait(30 * scale)


def rent_hourly(client: TronEnergyClient, wallet: str, energy: int, start: float,
                scale: float, stop: threading.Event) -> None:
    """The fixed strategy: ``energy`` for 1 h, ordered on the hour (a cron at :00)."""
    for hour in range(24):
        if stop.wait(max(0.0, start + hour * 3600 * scale - time.monotonic())):
            return
        client.buy_energy(wallet, energy, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-scale", type=float, default=0.0025)
    parser.add_argument("--peak", type=float, default=40.0, help="withdrawals per hour, at most")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--floor", type=int, default=400_000,
                        help="energy; covers a burst while a wake's rental arrives")
    parser.add_argument("--target", type=int, default=800_000)
    parser.add_argument("--recovery", default="on",
                        help="on, off, or both in order (off,on): usage recovering or not")
    args = parser.parse_args()
    modes = [m.strip() for m in args.recovery.split(",")]
    if not modes or any(m not in ("on", "off") for m in modes):
        parser.error("--recovery takes on, off or a list of them (off,on)")
    results = {}
    for mode in modes:
        print(f"\n== resource recovery {mode} ==", flush=True)
        results[mode] = run_day(args, recovery=mode == "on")
    if len(results) > 1:
        print("\nside by side (recovery " + " / ".join(results) + "):")
        for name in next(iter(results.values())):
            print(f"  {name:34} " + " / ".join(str(r[name]) for r in results.values()))


def run_day(args: argparse.Namespace, *, recovery: bool) -> dict[str, Any]:
    """One compressed day on a fresh sandbox; the report's figures."""
    scale = args.time_scale
    withdrawals = traffic(args.peak, args.seed)
    fixed_energy = busiest_hour_energy(withdrawals)
    policy = KeeperPolicy(floor=args.floor, target=args.target,
                          max_price_per_10k_trx=Decimal("0.5"),
                          max_daily_spend_trx=Decimal("5000"), renew_before_seconds=600 * scale)
    work = Path(tempfile.mkdtemp(prefix="keeper-day-"))
    flags = () if recovery else ("--no-resource-recovery",)
    process = start_sandbox("--time-scale", str(scale), *flags,
                            log_file=str(work / "sandbox.log"))
    try:
        sandbox = Sandbox(process)
        sandbox.call("POST", "/balance", {"balance": "1000000"})
        (keeper_key, keeper_w), (burn_key, burn_w), (fixed_key, fixed_w) = (
            sandbox.wallet() for _ in range(3))
        recipients = [[sandbox.recipient(w.first_time) for w in withdrawals] for _ in range(3)]
        journal = PurchaseJournal(f"sqlite:///{work / 'journal.db'}")
        registry = KeeperRegistry(f"sqlite:///{work / 'journal.db'}")
        client = TronEnergyClient(process.url, process.api_key, process.api_secret)
        first = sum(w.first_time for w in withdrawals)
        print(f"a day of {len(withdrawals)} withdrawals per wallet ({first} "
              f"first-time), peak {args.peak:g}/h, time scale {scale:g} (a day in "
              f"{DAY * scale:.0f} s); fixed rental {fixed_energy:,} energy per hour", flush=True)

        stop, log = threading.Event(), Lines()
        wakes: list[str] = []
        keeper = threading.Thread(target=run_keeper, args=(
            sandbox, keeper_w, scale, policy, journal, registry, stop, log, wakes), daemon=True)
        keeper.start()
        time.sleep(60 * scale)  # the first run's order delivered, as a deployment starts
        start = time.monotonic()
        fixed = threading.Thread(target=rent_hourly, args=(
            client, fixed_w, fixed_energy, start, scale, stop), daemon=True)
        fixed.start()
        for i, w in enumerate(withdrawals):
            delay = start + w.at * scale - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            for key, owner, pool in ((keeper_key, keeper_w, recipients[0]),
                                     (burn_key, burn_w, recipients[1]),
                                     (fixed_key, fixed_w, recipients[2])):
                sandbox.send(key, owner, pool[i])
        lag = time.monotonic() - start - DAY * scale
        stop.set()
        keeper.join(30)
        time.sleep(max(0.5, 60 * scale))  # the last transfers in a block
        return report(sandbox, journal, policy, withdrawals, log, wakes, lag,
                      {"keeper": keeper_w, "burn": burn_w, "fixed": fixed_w})
    finally:
        process.stop()


def report(sandbox: Sandbox, journal: PurchaseJournal, policy: KeeperPolicy,
           withdrawals: list[Withdrawal], log: Lines, wakes: list[str], lag: float,
           wallets: dict[str, str]) -> dict[str, Any]:
    orders = sandbox.call("GET", "/orders")
    rows = {}
    for name, wallet in wallets.items():
        txs = sandbox.call("GET", "/chain/transactions", owner=wallet)
        mine = [o for o in orders if o["target_address"] == wallet]
        rented = sum((Decimal(str(o["cost"])) for o in mine), Decimal(0))
        infos = [t.get("receipt") or {} for t in txs]  # java-tron's transaction info
        burned = sum((Decimal(i.get("fee", 0)) for i in infos), Decimal(0)) / 10**6
        energy_burn = sum(1 for i in infos if i.get("receipt", {}).get("energy_fee"))
        failed = sum(1 for i in infos if i.get("receipt", {}).get("result", "SUCCESS")
                     != "SUCCESS")
        rows[name] = (len(txs), len(mine), rented, burned, energy_burn, failed)
    print(f"\n{'wallet':8} {'transfers':>9} {'orders':>6} {'rented TRX':>11} {'burned TRX':>11} "
          f"{'burned for energy':>17} {'failed':>6} {'total TRX':>11}")
    total: dict[str, Decimal] = {}
    for name, (n, o, rented, burned, energy_burn, failed) in rows.items():
        total[name] = rented + burned
        print(f"{name:8} {n:9,} {o:6,} {rented:11.2f} {burned:11.2f} {energy_burn:17,} "
              f"{failed:6,} {total[name]:11.2f}")
    ratio = {k: total[k] / total["burn"] for k in ("keeper", "fixed")}
    print(f"\nkeeper / burn : {ratio['keeper']:.3f}   fixed / burn : {ratio['fixed']:.3f}   "
          f"keeper / fixed : {total['keeper'] / total['fixed']:.3f}")
    entries = journal.with_prefix("keeper:bench:")
    placed = [e for e in entries if e.state in (EntryState.PLACED, EntryState.ENDED)]
    keeper_orders = [o for o in orders if o["target_address"] == wallets["keeper"]]
    identities = [e.identity for e in placed]
    prices = {Decimal(str(o["cost"])) * 10_000 / o["energy_amount"] for o in keeper_orders}
    aims = {
        "no keeper transfer burned TRX for energy": rows["keeper"][4] == 0,
        "every withdrawal sent, none failed": all(
            r[0] == len(withdrawals) and r[5] == 0 for r in rows.values()),
        f"keeper's spend within its daily budget ({policy.max_daily_spend_trx} TRX)":
            rows["keeper"][2] <= policy.max_daily_spend_trx,
        f"no order above the cap ({policy.max_price_per_10k_trx} TRX per 10,000)":
            all(p <= policy.max_price_per_10k_trx for p in prices),
        "no purchase made twice (journal <-> orders one to one)":
            len(set(identities)) == len(identities) == len(keeper_orders)
            and {e.order_id for e in placed} == {o["order_id"] for o in keeper_orders},
    }
    print(f"keeper: {len(wakes)} runs ({sum('floor' in w for w in wakes)} on a floor crossing, "
          f"{sum('rental' in w for w in wakes)} on a rental's end, "
          f"{sum('safety' in w for w in wakes)} safety net), {len(placed)} purchases; "
          f"traffic ran {lag:+.1f} s behind its schedule at the end")
    for line in [line for line in log.lines if line.startswith("keeper ")][:5]:
        print(f"  {line}")
    for aim, met in aims.items():
        print(f"  {'MET ' if met else 'MISSED'} {aim}")
    print(f"\nevery aim: {'MET' if all(aims.values()) else 'MISSED'}")
    return {"keeper / burn": f"{ratio['keeper']:.3f}", "fixed / burn": f"{ratio['fixed']:.3f}",
            "keeper / fixed": f"{total['keeper'] / total['fixed']:.3f}",
            "keeper TRX (rented + burned)": f"{total['keeper']:.2f}",
            "burn TRX": f"{total['burn']:.2f}", "keeper rentals": rows["keeper"][1],
            "keeper runs": len(wakes), "keeper transfers burned for energy": rows["keeper"][4],
            "fixed transfers burned for energy": rows["fixed"][4],
            "every aim": "MET" if all(aims.values()) else "MISSED",
            "traffic lag at the end (s)": f"{lag:+.1f}"}


if __name__ == "__main__":
    main()
