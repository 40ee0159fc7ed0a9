"""The main job: the batch-payout DAGs end to end against the embedded sandbox.

Run through ``bash scripts/main.sh`` (which makes the virtual environment). It
starts a sandbox (the energy service and the TRON chain) on a free loopback port,
configures the ``tronenergy`` and ``tron_node`` connections through the environment,
registers a deposit address, runs ``airflow dags test batch_payout_preparation``
then ``batch_payout_send`` twice (the second run sends nothing: counted on chain) on
fresh SQLite metadata, lets the deposit DAG credit the payout that went to the
deposit address, prints a report, and stops everything it started, on success,
failure or Ctrl-C.

The hot wallet is a key this job generates: the send runs get it only through their
environment (``AIRFLOW_CONN_TRON_SIGNER_DEFAULT``), never on a command line, in the
output or in a file under ``.main-job/``.

Airflow starting costs some 13 s of one core: the runs go to two runners
(``main_airflow.Runner``, one per metadata database), each started once, early, while the
sandbox and the batch are set up. The deposit DAGs run on a copy of the metadata database
(SQLite takes one writer at a time), so that registering overlaps the preparation and
crediting the second send run; each run's progress is shown in the report's order, not
as it interleaves.

The report is plain text: bold only on a terminal (never with ``NO_COLOR``), and
no log line of Airflow's (``[info] ... loc=...``) reaches it: the DAG runs' output
goes to their log files, the in-process watcher's logging to ``watcher.log``, and
only a log line's message is shown as progress.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncGenerator
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import requests
from main_airflow import AIRFLOW, DagRun, Runner, metadata_env, read_result, store_env
from main_report import report_lines, short
from main_ui import PAGE
from tronpy.keys import PrivateKey

from tronenergy_protocol.address import random_address
from tronenergy_sandbox.chain.blocks import GENESIS_BLOCK_ID as GENESIS
from tronenergy_sandbox.chain.multicall import MULTICALL
from tronenergy_sandbox.process import SandboxProcess, start_sandbox, stop_process

if TYPE_CHECKING:
    from airflow.triggers.base import TriggerEvent

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".main-job"
DAG_ID = "batch_payout_preparation"
USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
"""The sandbox's USDT contract (mainnet's address; the node connection names it)."""
TOKEN = "DEMO"
"""A second TRC-20 token, one of the sandbox's own (18 decimals), named in the node
connection's ``tokens`` extra: the batch pays one payout of it, and one of TRX."""


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

    def transactions(self, owner: str) -> list[dict[str, Any]]:
        """Every transaction from ``owner`` the chain accepted: executed, waiting or dropped."""
        return [tx for status in ("executed", "pending", "dropped")
                for tx in self.call("GET", f"/chain/transactions?owner={owner}&status={status}")]

    def wallet(self, *, activated: bool, holder: bool) -> str:
        address = random_address()
        if activated:
            self.call("POST", f"/addresses/{address}/activate")
        if holder:
            self.call("POST", f"/addresses/{address}/holder", {"token": "USDT"})
        return address


def airflow_env(home: Path, sandbox: SandboxProcess, token: str) -> dict[str, str]:
    """The DAG runs' environment: the connections to the sandbox (service and node); the
    node connection names ``token`` (a contract) as :data:`TOKEN`."""
    env = metadata_env(home)
    env.update({
        # The sandbox is also a TRON node: the payout DAGs read the chain through it.
        # ... and has a Multicall: the holders' balances read many per request. Its chain is
        # a custom one: its block 0 (checked before anything moves) and its USDT named.
        "AIRFLOW_CONN_TRON_NODE_DEFAULT": json.dumps({"conn_type": "tron_node",
                                                      "host": sandbox.root_url,
                                                      "extra": {"network": "custom",
                                                                "genesis_block_id": GENESIS,
                                                                "usdt_contract": USDT,
                                                                "multicall": MULTICALL,
                                                                "tokens": {TOKEN: token}}}),
        "AIRFLOW_CONN_TRONENERGY_DEFAULT": json.dumps({
            "conn_type": "tronenergy", "host": sandbox.url, "login": sandbox.api_key,
            "password": sandbox.api_secret,
            "extra": {"webhook_secret": sandbox.webhook_secret}}),
    })
    return env


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


class Watcher:
    """What the deposit DAG's AssetWatcher does in the triggerer: one event per transfer.

    It runs in a thread of this process, so its logging goes to ``watcher.log``, not into
    the report. ``first()`` returns the first event as soon as it fires; the watcher then
    polls on, as in the triggerer once Airflow holds the event, and commits its offset at
    a poll past the grace (so the Energy page shows no lag), while the credit runs go.
    """

    def __init__(self, store_url: str, address: str, consumer: str) -> None:
        self.store_url, self.address, self.consumer = store_url, address, consumer
        self.fired: dict[str, Any] = {}
        self.error: BaseException | None = None
        self.first_seen = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        import asyncio

        from airflow.sdk.log import configure_logging

        from airflow_provider_tronenergy.triggers.transfer import (
            RUN_COMMIT_GRACE,
            TronEnergyTransferWatchTrigger,
        )

        configure_logging(output=(WORK / "watcher.log").open("a", encoding="utf-8"),
                          colored_console_log=False)
        trigger = TronEnergyTransferWatchTrigger(proven=False, addresses=[self.address],
                                                 consumer=self.consumer,
                                                 store_url=self.store_url,
                                                 poll_interval_seconds=0.2)

        async def watch() -> None:
            events = cast("AsyncGenerator[TriggerEvent, None]", trigger.run())  # it is one
            try:
                event = await asyncio.wait_for(anext(events), timeout=60)
                self.fired = dict(event.payload)
                self.first_seen.set()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(anext(events), RUN_COMMIT_GRACE + 3)
            finally:
                await events.aclose()

        try:
            asyncio.run(watch())
        except BaseException as exc:
            self.error = exc
        finally:
            self.first_seen.set()

    def first(self) -> dict[str, Any]:
        self.first_seen.wait()
        if not self.fired:
            raise RuntimeError(f"the deposit watcher fired no event: {self.error!r}")
        return self.fired

    def join(self) -> None:
        self.thread.join()


def demo_token(world: Sandbox) -> tuple[str, int]:
    """:data:`TOKEN` deployed on the sandbox's chain (18 decimals, its own energy factor):
    its contract, and what a transfer of it to a new holder costs in energy."""
    token = world.call("POST", "/chain/tokens", {"symbol": TOKEN, "name": "Sandbox demo token",
                                                 "decimals": 18, "energy_factor": 10_000})
    return str(token["contract"]), int(token["transfer_energy"]["new_holder"])


def hot_wallet(world: Sandbox, token: str, token_energy: int) -> tuple[str, str]:
    """A key this job generates and holds, its address funded on chain (``token_energy``
    more staked energy: what the :data:`TOKEN` payout adds to the batch, on hand).

    Returns the address and the ``tron_signer`` connection (JSON) that carries the key:
    it goes into the send runs' environment only, never on a command line or into a file.
    """
    key = PrivateKey.random()
    sender = key.public_key.to_base58check_address()
    world.call("POST", f"/addresses/{sender}/activate")
    world.call("POST", f"/addresses/{sender}/holder", {"token": "USDT"})
    # On chain: the hot wallet holds USDT and TRX and has 200,000 staked energy.
    world.call("POST", f"/addresses/{sender}/balances", {"trx": "150", "usdt": "5000"})
    world.call("POST", f"/chain/tokens/{token}/holdings",
               {"address": sender, "units": str(1000 * 10**18)})
    world.call("POST", f"/addresses/{sender}/energy", {"staked": 200_000 + token_energy})
    return sender, json.dumps({"conn_type": "tron_signer", "password": key.hex()})


def send_runs(runner: Runner, signer: str, world: Sandbox, sender: str, deposits: Deposits,
              ) -> tuple[dict[str, Any], list[int], dict[str, int]]:
    """``batch_payout_send`` on the newest ready event, then again; the transactions
    counted on chain around each run. Returns the first run's
    ``payouts sent`` event, how many transactions each run added and the first run's by
    token (as the chain names it). While the second run goes, the deposit is credited."""
    home = Path(runner.home)
    counts = [len(world.transactions(sender))]
    sent: dict[str, Any] = {}
    by_token: dict[str, int] = {}
    for attempt in (1, 2):
        # The signing key: in this run's environment only, through the runner's stdin.
        run = runner.run("batch_payout_send", WORK / f"dag-send-{attempt}.log",
                         env={"AIRFLOW_CONN_TRON_SIGNER_DEFAULT": signer})
        if attempt == 2:
            deposits.start(sent)  # alongside: the payout's callback, the credits
        step("sending the batch (batch_payout_send DAG, on the newest payout batch ready event)"
             if attempt == 1 else
             "sending it again (a second batch_payout_send run): the journal sends nothing")
        run.show(detail)
        result = read_result(home, "batch_payout_send", "publish_payouts_sent")
        made = world.transactions(sender)
        counts.append(len(made))
        if attempt == 1:
            by_token = dict(Counter(str(tx["token"]) for tx in made))
        new = counts[-1] - counts[-2]
        detail(f"{'first' if attempt == 1 else 'second'} run of batch_payout_send: {new} new "
               f"transaction{'' if new == 1 else 's'} from the hot wallet on chain "
               f"({counts[-2]} before, {counts[-1]} after: GET /sandbox/chain/transactions)")
        if not isinstance(result, dict):
            raise RuntimeError("batch_payout_send published no payouts sent event")
        if attempt == 1:
            sent = result
        elif new:
            raise RuntimeError(f"the second run sent {new} transactions: a payout paid twice")
    return sent, [counts[1] - counts[0], counts[2] - counts[1]], by_token


class Deposits:
    """The deposit DAGs, on a metadata database (and a runner) of their own so that they run
    alongside the payout DAGs (SQLite takes one writer at a time; a deployment has one
    database)."""

    def __init__(self, runner: Runner, receiver: Receiver, address: str,
                 store_url: str) -> None:
        self.runner, self.receiver, self.address = runner, receiver, address
        self.store_url = store_url
        self.registered: DagRun | None = None
        self.credits: list[DagRun] = []
        self.watcher: Watcher | None = None
        self.payout_tx = ""

    def register(self) -> None:
        """Declare the deposit address to the service's monitoring before anything is paid."""
        from airflow_provider_tronenergy.callbacks.store import CallbackStore

        step("registering the deposit address (deposit_addresses_register DAG)")
        self.registered = self.runner.run("deposit_addresses_register",
                                          WORK / "dag-register.log")
        self.registered.show(detail)
        # The watcher starts now: transfers stored before never fire it.
        CallbackStore(self.store_url).start_offset("deposit_credit")

    def start(self, sent: dict[str, Any]) -> None:
        """The payout into the deposit address, called back by the chain, fires the watcher;
        the two credit runs are asked for at once (the runner runs them one after the
        other: the second re-reads the same store once the first has ended)."""
        self.payout_tx = next(p["txid"] for p in sent["payouts"]
                              if p["recipient"] == self.address)
        self.watcher = Watcher(self.store_url, self.address, "deposit_credit")
        self.watcher.first()
        self.credits = [self.runner.run("deposit_credit", WORK / f"dag-credit-{n}.log")
                        for n in (1, 2)]

    def credit(self) -> list[dict[str, Any]]:
        """The two credit runs' progress: the second credits nothing."""
        assert self.watcher is not None
        tx = self.watcher.first()["tx_hash"]
        step(f"the payout to deposit address {self.address} arrives as a deposit")
        detail(f"the chain executed tx {short(self.payout_tx)}; the service called back "
               f"{self.receiver.url}")
        detail(f"callback verified and stored; the watcher fired for tx {short(tx)} "
               f"({'the payout' if tx == self.payout_tx else 'NOT the payout'})")
        step("crediting it (deposit_credit DAG, from the store), twice: the second credits "
             "nothing")
        self.credits[0].show(detail)
        self.credits[1].show(detail)
        self.watcher.join()  # its offset committed: no lag left on the Energy page
        credited = read_result(Path(self.runner.home), "deposit_credit", "credit_deposits")
        with sqlite3.connect(WORK / "deposits.db") as db:
            rows = db.execute("SELECT tx_hash, amount, token, to_address, block_number, "
                              "log_index FROM credited_deposits").fetchall()
        detail(f"second run credited {len(credited or [])} (already credited)")
        for r in rows:  # how each was proven: the chain's record it was read from
            detail(f"credited {r[1]} {r[2]} to {r[3]}: proven on chain by tx {short(r[0])}'s "
                   f"log {r[5]} in solidified block {r[4]:,}")
        return [{"tx_hash": r[0], "amount": r[1], "token": r[2], "to": r[3]} for r in rows]


def where_to_look() -> list[str]:
    """The closing lines: where the same figures are in the Airflow UI."""
    return ["see it in the Airflow UI: `bash scripts/ui.sh` serves this job's data at "
            "http://127.0.0.1:8080;",
            f"  the Energy page is {PAGE} there (Energy in the navigation), a task's links to "
            "its transactions on TronScan are in its Details tab;",
            f"  in a deployment or under `airflow standalone`: <[api] base_url>{PAGE} "
            "(docs/energy-page.md: enabling it)"]


def main() -> int:
    started = time.monotonic()
    shutil.rmtree(WORK, ignore_errors=True)
    home, deposit_home = WORK / "airflow-home", WORK / "airflow-home-deposits"
    for path in (home, deposit_home):
        path.mkdir(parents=True)
    migrate = subprocess.Popen([*AIRFLOW, "db", "migrate"], env=metadata_env(home),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    running: list[SandboxProcess | Receiver | Runner] = []
    try:
        step("starting the sandbox (a local emulator of the energy service and the chain)")
        # Time scale 0.05: a block every 0.15 s; the 1 h rental lasts 180 s.
        sandbox = start_sandbox("--time-scale", "0.05", "--state", str(WORK / "sandbox.sqlite"),
                                log_level="info", log_file=str(WORK / "sandbox.log"))
        running.append(sandbox)
        detail(f"listening on {sandbox.url}")
        world = Sandbox(sandbox)
        token, token_energy = demo_token(world)
        env = airflow_env(home, sandbox, token)
        os.environ.update({k: v for k, v in env.items() if k.startswith("AIRFLOW")})

        step("starting the callback receiver (verifies and stores signed callbacks)")
        stores = store_env(WORK)
        receiver = Receiver(stores["TRONENERGY_CALLBACK_STORE"], sandbox.webhook_secret,
                            WORK / "receiver.log")
        running.append(receiver)
        detail(f"listening on {receiver.url}")
        deposit_address = world.wallet(activated=True, holder=False)
        env.update({
            **stores,
            "AIRFLOW_VAR_TRONENERGY_CALLBACK_URL": receiver.url,
            "AIRFLOW_VAR_TRONENERGY_DEPOSIT_ADDRESSES": json.dumps([deposit_address]),
        })
        # Airflow starts in the runners now, while the batch is set up and the metadata
        # migrated: they touch no database before a run is asked for.
        payout_runner = Runner(env, WORK / "runner-payouts.log")
        deposit_runner = Runner({**env, **metadata_env(deposit_home)},
                                WORK / "runner-deposits.log")
        running += [payout_runner, deposit_runner]

        step("setting up a payout batch: 3 USDT holders, 2 first-time (one of them the deposit "
             f"address), 2 inactive recipients; in the same sheet one {TOKEN} payout and one of "
             "TRX")
        sender, signer = hot_wallet(world, token, token_energy)
        recipients = ([world.wallet(activated=True, holder=True) for _ in range(3)]
                      + [deposit_address, world.wallet(activated=True, holder=False)]
                      + [world.wallet(activated=False, holder=False) for _ in range(2)])
        # In the same sheet: a DEMO payout (its contract's energy planned and rented with
        # the USDT rows') and a TRX one (no energy; it creates its recipient's account).
        more = [(world.wallet(activated=True, holder=False), "42.000000000000000001", TOKEN),
                (random_address(), "12.5", "TRX")]
        payouts = WORK / "payouts.csv"
        payouts.write_text("recipient,amount,token\n" + "".join(
            f"{address},{125 + 10 * i}.50,\n" for i, address in enumerate(recipients))
            + "".join(f"{address},{amount},{name}\n" for address, amount, name in more))
        detail(f"hot wallet {sender}: a key generated by this job (150 TRX, 5000 USDT, 1000 "
               f"{TOKEN}, {200_000 + token_energy:,} staked energy); the send runs get it "
               "through their environment only")
        detail(f"payouts in {payouts.relative_to(ROOT)}: 7 of USDT (no token named), "
               f"{more[0][1]} {TOKEN} (18 decimals, contract {token}: {token_energy:,} energy "
               f"to a new holder) to {more[0][0]}, {more[1][1]} TRX to {more[1][0]} (no "
               "account yet: the transfer creates it)")

        step("preparing fresh Airflow metadata databases (SQLite; the deposit DAGs get a copy "
             "of their own, to run alongside the payout DAGs)")
        if migrate.wait() != 0:
            raise RuntimeError("airflow db migrate failed")
        shutil.copyfile(home / "airflow.db", deposit_home / "airflow.db")
        deposits = Deposits(deposit_runner, receiver, deposit_address,
                            env["TRONENERGY_CALLBACK_STORE"])
        preparation = payout_runner.run(DAG_ID, WORK / "dag-test.log", {
            "payouts_file": str(payouts), "sender_address": sender, "rent_time": "1",
            "max_spend_trx": "100"})
        deposits.register()  # shown first: it ends first, and before anything is sent
        step(f"running the {DAG_ID} DAG (airflow dags test)")
        preparation.show(detail)
        ready = read_result(home, DAG_ID, "publish_batch_ready")
        if not isinstance(ready, dict):
            raise RuntimeError(f"{DAG_ID} published no payout batch ready event")
        sent, new, by_token = send_runs(payout_runner, signer, world, sender, deposits)
        credited = deposits.credit()
        step("report")
        names = {token: TOKEN}
        for line in report_lines(ready, sent, world.call("GET", "/orders"), new, credited,
                                 {names.get(t, t): n for t, n in by_token.items()}):
            detail(line)
        step(f"done in {time.monotonic() - started:.0f} s; logs in {WORK.relative_to(ROOT)}/")
        for line in where_to_look():
            detail(line)
        return 0
    except KeyboardInterrupt:
        step("interrupted")
        return 130
    except RuntimeError as exc:
        step(f"FAILED: {exc}")
        return 1
    finally:
        stop_process(migrate)
        for process in reversed(running):
            process.stop()


if __name__ == "__main__":
    sys.exit(main())
