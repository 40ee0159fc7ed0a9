"""The main job: the batch-payout DAG end to end against the embedded sandbox.

Run through ``bash scripts/main.sh`` (which makes the virtual environment). It
starts a sandbox on a free loopback port, configures the ``tronenergy``
connection through the environment, runs ``airflow dags test
batch_payout_preparation`` in a fresh AIRFLOW_HOME on SQLite, prints a short
report, and stops everything it started, on success, failure or Ctrl-C.

The report is plain text: bold only on a terminal (never with ``NO_COLOR``), and
no log line of Airflow's (``[info] ... loc=...``) reaches it: the DAG runs' output
goes to their log files, the in-process watcher's logging to ``watcher.log``, and
only a log line's message is shown as progress.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import requests

from airflow_provider_tronenergy.protocol.address import random_address
from airflow_provider_tronenergy.sandbox.process import SandboxProcess, start_sandbox, stop_process

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".main-job"
DAG_ID = "batch_payout_preparation"
LOG_LINE = re.compile(r"^\S+ \[(?P<level>\w+)\s*\] (?P<message>.*?)\s+\[[^\]\s]+\]"
                      r"(?:\s+\w+=\S+)*\s*$")
"""A line of Airflow's console log: ``<time> [info     ] <message>  [<logger>] loc=...``."""


def bold(text: str) -> str:
    """Bold on a terminal; plain in a file, a pipe, or with ``NO_COLOR`` set."""
    if os.environ.get("NO_COLOR") or not sys.stdout.isatty():
        return text
    return f"\033[1m{text}\033[0m"


def step(message: str) -> None:
    print(f"{bold('==>')} {message}", flush=True)


def detail(message: str) -> None:
    print(f"    {message}", flush=True)


class Sandbox:
    """The control API, to set up the world a payout batch meets."""

    def __init__(self, sandbox: SandboxProcess) -> None:
        self.root = f"{sandbox.root_url}/sandbox"

    def call(self, method: str, path: str, body: Any = None) -> Any:
        response = requests.request(method, self.root + path, json=body, timeout=10)
        response.raise_for_status()
        return json.loads(response.text, parse_float=Decimal)["data"]

    def wallet(self, *, activated: bool, holder: bool) -> str:
        address = random_address()
        if activated:
            self.call("POST", f"/addresses/{address}/activate")
        if holder:
            self.call("POST", f"/addresses/{address}/holder", {"token": "USDT"})
        return address


def airflow_env(home: Path, sandbox: SandboxProcess) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "example_dags"),
        "AIRFLOW__LOGGING__COLORED_CONSOLE_LOG": "False",
        "NO_COLOR": "1",  # the DAG runs' logs are files: no colour codes in them
        # The sandbox is also a TRON node: the payout DAG reads the chain through it.
        "AIRFLOW_CONN_TRON_NODE_DEFAULT": json.dumps({"conn_type": "tron_node",
                                                      "host": sandbox.root_url}),
        "AIRFLOW_CONN_TRONENERGY_DEFAULT": json.dumps({
            "conn_type": "tronenergy", "host": sandbox.url, "login": sandbox.api_key,
            "password": sandbox.api_secret,
            "extra": {"webhook_secret": sandbox.webhook_secret}}),
    })
    return env


def log_message(line: str) -> str | None:
    """The message of one of Airflow's console log lines; None for any other line."""
    found = LOG_LINE.match(line.rstrip("\n"))
    return found["message"].strip() if found else None


def run_dag_test(env: dict[str, str], conf: dict[str, Any], log: Path,
                 dag_id: str = DAG_ID) -> int:
    """``airflow dags test``, its output to ``log``; shown: each task as it ends, and the
    message (never the raw line) of each purchase and credit."""
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "airflow", "dags", "test", dag_id, "-c", json.dumps(conf)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        assert process.stdout is not None
        for line in process.stdout:
            out.write(line)
            if "[DAG TEST] end task" in line:
                task = line.split("task_id=", 1)[1].split()[0]
                detail(f"done: {task}")
            elif (message := log_message(line)) and (
                    message.startswith("credited ")
                    or (message.startswith("bought ") and " energy for " in message)):
                detail(message)
        return process.wait()


def read_result(home: Path, dag_id: str = DAG_ID,
                task_id: str = "publish_batch_ready") -> Any:
    with sqlite3.connect(home / "airflow.db") as db:
        row = db.execute(
            "SELECT value FROM xcom WHERE dag_id = ? AND task_id = ? "
            "AND key = 'return_value' ORDER BY timestamp DESC LIMIT 1",
            (dag_id, task_id)).fetchone()
    if row is None:
        return None
    value = row[0]
    while isinstance(value, (str, bytes)):
        value = json.loads(value, parse_float=Decimal)
    return value


def report(ready: dict[str, Any], orders: list[dict[str, Any]]) -> None:
    """The batch as a person checks it: units in every header, the event's own figures."""
    step("report")
    detail(f"{'recipient':36} {'amount':>10} {'energy':>9} {'energy cost':>12} "
           f"{'activated':>10}")
    detail(f"{'':36} {'USDT':>10} {'energy':>9} {'TRX':>12}")
    rows = ready["recipients"]
    for row in rows:
        detail(f"{row['recipient']:36} {row['amount']:>10} {row['energy']:>9,} "
               f"{row['energy_cost']:>12} {'yes' if row['activated'] else '':>10}")
    amounts = sum((Decimal(row["amount"]) for row in rows), Decimal(0))
    paid = sum((Decimal(row["energy_cost"]) for row in rows), Decimal(0))
    detail(f"{'total':36} {amounts.normalize():>10f} {ready['total_energy']:>9,} "
           f"{paid.normalize():>12f} {ready['activations']:>10}")
    detail("(energy cost: each recipient's share, by energy, of what the energy orders cost)")
    detail("")
    detail(f"transfers prepared      {ready['transfers']}")
    detail(f"recipients activated    {ready['activations']} ({ready['activation_cost']} TRX)")
    chain, confirmation = ready["onchain"], ready["confirmation"]
    if chain.get("onchain"):
        wallet = chain["wallet"]
        detail(f"hot wallet before       {wallet['trx']} TRX, {wallet['usdt']} USDT, "
               f"{wallet['energy_available']:,} energy available")
        detail(f"energy needed           {ready['total_energy']:,} energy "
               f"({chain['estimated_by_node']} transfers estimated by the node)")
        detail(f"energy on hand used     {ready['energy_on_hand_used']:,} energy "
               "(the wallet's own: not rented, so not saved by renting)")
    else:
        detail(f"on-chain checks         none ({chain.get('reason')})")
        detail(f"energy needed           {ready['total_energy']:,} energy")
    detail(f"energy rented           {ready['energy_bought']:,} energy for "
           f"{ready['rent_time']} h in {len(ready['orders'])} "
           f"order{'' if len(ready['orders']) == 1 else 's'}:")
    for order in ready["orders"]:
        detail(f"   {order['mode']:10} {order['energy']:>9,} energy  {order['cost']:>10} TRX  "
               f"{order['status']}  tx {str(order.get('tx_hash'))[:16]}...")
    for tx in confirmation.get("confirmed", []):
        detail(f"   confirmed on chain: tx {tx['tx_hash'][:16]}... in block {tx['block_number']}"
               f"{' (solidified)' if tx['solidified'] else ''}")
    if confirmation.get("onchain") is not False:
        detail(f"energy available after  {confirmation['energy_available']:,} energy")
    prices = ready.get("prices") or {}
    if prices:
        source = prices["source"]
        detail(f"burn prices             {prices['energy_sun']} sun per energy "
               f"({source['energy_price']}), {prices['bandwidth_sun']} sun per bandwidth byte "
               f"({source['bandwidth_price']}), {Decimal(prices['activation_sun']) / 10**6} TRX "
               f"per account ({source['activation_fee']}); USDT energy factor "
               f"{prices['energy_factor']} ({source['energy_factor']})")
    detail("")
    for line in money_lines(ready):
        detail(line)
    detail(f"sandbox orders placed   {len(orders)} "
           f"({sum(o['kind'] == 'activate' for o in orders)} activations)")


def money_lines(ready: dict[str, Any]) -> list[str]:
    """The event's money figures, each with what it compares (its ``figures``, shortened)."""
    provided = min(ready["energy_bought"],
                   ready["total_energy"] - ready["energy_on_hand_used"])
    sun = (ready.get("prices") or {}).get("energy_sun", "?")
    factor = ready["saving_factor"]
    rows = [
        ("paid for energy", ready["energy_cost"],
         "what the orders cost (the recipients' energy cost sums to it)"),
        ("burning instead", ready["burn_cost_bought"],
         f"the {provided:,} energy renting provided, burned at {sun} sun per energy"),
        ("saved by renting", ready["saving"],
         "burning instead - paid for energy"
         + (f" (burning costs {factor}x as much)" if factor else "")),
        ("renting it all", ready["whole_batch_rental_cost"],
         f"all {ready['total_energy']:,} energy at {ready['price_per_10k']} TRX per 10,000 energy"),
        ("saved by energy on hand", ready["saving_vs_whole_rental"],
         "renting it all - paid for energy"),
        ("burning it all", ready["burn_cost"],
         f"all {ready['total_energy']:,} energy burned, none on hand"),
        ("activations", ready["activation_cost"],
         f"{ready['activations']} recipient{'' if ready['activations'] == 1 else 's'} "
         "activated"),
        ("total spent", ready["total_cost"], "paid for energy + activations"),
    ]
    return ([f"{'money':24}{'TRX':>12}  what it compares"]
            + [f"{name:24}{value:>12}  {what}" for name, value, what in rows])


class Receiver:
    """``tronenergy-receiver`` on a free port: verifies and stores the service's callbacks."""

    def __init__(self, store_url: str, webhook_secret: str, log: Path) -> None:
        self.log = log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "airflow_provider_tronenergy.callbacks", "--port", "0",
             "--store", store_url, "--log-level", "info"],
            stdout=subprocess.PIPE, stderr=self.log, text=True,
            env={**os.environ, "TRONENERGY_WEBHOOK_SECRET": webhook_secret,
                 "PYTHONUNBUFFERED": "1"})
        assert self.process.stdout is not None
        first = ""
        for line in iter(self.process.stdout.readline, ""):
            if line.startswith("tronenergy receiver listening on "):
                first = line
                break
        if not first:
            raise RuntimeError(f"the receiver did not start; see {log}")
        self.url = first.rsplit(" ", 1)[-1].strip()
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    def stop(self) -> None:
        stop_process(self.process)
        self.log.close()


def first_watched_transfer(store_url: str, address: str, consumer: str) -> dict[str, Any]:
    """What the deposit DAG's AssetWatcher does in the triggerer: one event per transfer.

    It runs in this process, so its logging goes to ``watcher.log``, not into the report.
    """
    import asyncio

    from airflow.sdk.log import configure_logging

    from airflow_provider_tronenergy.triggers.transfer import TronEnergyTransferWatchTrigger

    configure_logging(output=(WORK / "watcher.log").open("a", encoding="utf-8"),
                      colored_console_log=False)

    trigger = TronEnergyTransferWatchTrigger(addresses=[address], consumer=consumer,
                                             store_url=store_url, poll_interval=0.2)

    async def first() -> dict[str, Any]:
        async for event in trigger.run():
            return dict(event.payload)
        raise RuntimeError("the watcher stopped")

    return asyncio.run(asyncio.wait_for(first(), timeout=60))


def deposits(env: dict[str, str], world: Sandbox, receiver: Receiver) -> list[dict[str, Any]]:
    """Register a deposit address, pay into it, and let the deposit DAG credit it once."""
    from airflow_provider_tronenergy.callbacks.store import CallbackStore

    store_url = env["TRONENERGY_CALLBACK_STORE"]
    (deposit_address,) = json.loads(env["AIRFLOW_VAR_TRONENERGY_DEPOSIT_ADDRESSES"])
    step("registering the deposit address (deposit_addresses_register DAG)")
    if run_dag_test(env, {}, WORK / "dag-register.log", "deposit_addresses_register") != 0:
        raise RuntimeError("deposit_addresses_register failed; see .main-job/dag-register.log")
    store = CallbackStore(store_url)
    store.start_offset("deposit_credit")  # the watcher starts now: older transfers never fire
    step(f"a customer deposits 250.75 USDT into {deposit_address}")
    tx = world.call("POST", "/transfers", {"from": random_address(), "to": deposit_address,
                                           "amount": "250.75", "token": "USDT"})["tx_hash"]
    detail(f"on-chain tx {tx[:16]}...; the service calls back {receiver.url}")
    transfer = first_watched_transfer(store_url, deposit_address, "deposit_credit")
    detail(f"callback verified and stored; the watcher fired for tx {transfer['tx_hash'][:16]}...")
    step("crediting it (deposit_credit DAG, from the store), twice: the second credits nothing")
    for attempt in (1, 2):
        code = run_dag_test(env, {}, WORK / f"dag-credit-{attempt}.log",
                            "deposit_credit")
        if code != 0:
            raise RuntimeError(f"deposit_credit failed; see .main-job/dag-credit-{attempt}.log")
    credited = read_result(Path(env["AIRFLOW_HOME"]), "deposit_credit", "credit_deposits")
    with sqlite3.connect(WORK / "deposits.db") as db:
        rows = db.execute("SELECT tx_hash, amount, token, to_address FROM credited_deposits"
                          ).fetchall()
    detail(f"second run credited {len(credited or [])} (already credited)")
    return [{"tx_hash": r[0], "amount": r[1], "token": r[2], "to": r[3]} for r in rows]


def main() -> int:
    started = time.monotonic()
    shutil.rmtree(WORK, ignore_errors=True)
    home = WORK / "airflow-home"
    home.mkdir(parents=True)
    processes: list[SandboxProcess | Receiver] = []
    try:
        step("starting the sandbox (a local emulator of the energy service)")
        sandbox = start_sandbox("--time-scale", "0.05", "--state", str(WORK / "sandbox.sqlite"),
                                log_level="info", log_file=str(WORK / "sandbox.log"))
        processes.append(sandbox)
        detail(f"listening on {sandbox.url}")
        env = airflow_env(home, sandbox)
        os.environ.update({k: v for k, v in env.items() if k.startswith("AIRFLOW")})

        step("starting the callback receiver (verifies and stores signed callbacks)")
        store_url = f"sqlite:///{WORK / 'callbacks.db'}"
        receiver = Receiver(store_url, sandbox.webhook_secret, WORK / "receiver.log")
        processes.append(receiver)
        detail(f"listening on {receiver.url}")
        world = Sandbox(sandbox)
        env.update({
            "TRONENERGY_CALLBACK_STORE": store_url,
            "AIRFLOW_VAR_TRONENERGY_CALLBACK_URL": receiver.url,
            "AIRFLOW_VAR_TRONENERGY_DEPOSIT_ADDRESSES": json.dumps(
                [world.wallet(activated=True, holder=False)]),
            "TRONENERGY_DEPOSITS_DB": f"sqlite:///{WORK / 'deposits.db'}",
        })

        step("preparing a fresh Airflow metadata database (SQLite)")
        subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        step("setting up a payout batch: 3 USDT holders, 2 first-time, 2 inactive recipients")
        sender = world.wallet(activated=True, holder=True)
        # On chain: the hot wallet holds USDT and TRX and has 200,000 staked energy.
        world.call("POST", f"/addresses/{sender}/balances", {"trx": "150", "usdt": "5000"})
        world.call("POST", f"/addresses/{sender}/energy", {"staked": 200_000})
        recipients = ([world.wallet(activated=True, holder=True) for _ in range(3)]
                      + [world.wallet(activated=True, holder=False) for _ in range(2)]
                      + [world.wallet(activated=False, holder=False) for _ in range(2)])
        payouts = WORK / "payouts.csv"
        payouts.write_text("recipient,amount\n" + "".join(
            f"{address},{125 + 10 * i}.50\n" for i, address in enumerate(recipients)))
        detail(f"hot wallet {sender}; payouts in {payouts.relative_to(ROOT)}")

        step(f"running the {DAG_ID} DAG (airflow dags test)")
        log = WORK / "dag-test.log"
        code = run_dag_test(env, {"payouts_file": str(payouts), "sender_address": sender,
                                  "rent_time": "1", "max_cost_trx": "100"}, log)
        ready = read_result(home)
        if code != 0 or not isinstance(ready, dict):
            step(f"the DAG run FAILED (exit {code}); its log: {log.relative_to(ROOT)}")
            return 1
        credited = deposits(env, world, receiver)
        report(ready, world.call("GET", "/orders"))
        detail(f"deposits credited       {len(credited)}: " + ", ".join(
            f"{d['amount']} {d['token']} (tx {d['tx_hash'][:12]}...)" for d in credited))
        step(f"done in {time.monotonic() - started:.0f} s; logs in {WORK.relative_to(ROOT)}/")
        return 0
    except KeyboardInterrupt:
        step("interrupted")
        return 130
    except RuntimeError as exc:
        step(f"FAILED: {exc}")
        return 1
    finally:
        for process in processes:
            process.stop()


if __name__ == "__main__":
    sys.exit(main())
