"""Issue 13: the money guarantees on Airflow's distributed deployment, under failures.

One deployment (tests/e2e/distributed.py: CeleryExecutor on Redis, two Celery workers,
the scheduler, the dag-processor, two triggerers, two API servers with the receiver
plugin, one PostgreSQL callback store, one PostgreSQL purchase journal) is shared by
the drills of this module; each drill leaves it whole again (what it killed is started
anew) and counts only what it made itself: its own sender wallets, its own deposits.

1. a Celery worker SIGKILLed mid-purchase: exactly one order, and the retry on the
   other worker stops with the unknown-outcome message; resolved, the run completes
   with that same order;
2. a triggerer SIGKILLed while 200 deposits stream in through both API servers;
3. an API server SIGKILLed (and restarted) while deposits stream in: the service's
   retries deliver them;
4. the callback store's PostgreSQL server restarted while deposits stream in: the
   receivers answer 5xx meanwhile, then recover without a restart;
5. two payout batches at once across both workers.

After 2-4, every deposit is stored once and has exactly one ledger row, credited by one
successful ``deposit_credit`` run: asserted, a failure fails the drill. Then Airflow's
part, every deposit with exactly one Asset event consumed by one run, is checked after
the drill's own assertions; on Airflow 3.3.2 it does not always hold, for two reasons
outside the provider (docs/deployment.md, "What the drills found": a triggerer SIGKILL
re-fires Asset events Airflow had already persisted, and the scheduler can leave the last
events of a burst in no run until a later event), and the drill then ends as an expected
failure naming each deposit concerned, never as a pass. ``pytest -s`` prints what each
drill measured (docs/deployment.md keeps the figures).
"""

from __future__ import annotations

import contextlib
import json
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from distributed import TRIGGERERS, WORKERS, Deployment, distributed_deployment
from test_real_deployment import PAYOUT_DAG

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(600)]

BUY_TASK = "buy_energy"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory) -> Iterator[Deployment]:
    with distributed_deployment(tmp_path_factory.mktemp("distributed")) as running:
        yield running


@contextlib.contextmanager
def explained(deployment: Deployment, drill: str) -> Iterator[dict[str, Any]]:
    """Time the drill; on failure print the deployment's logs and metadata."""
    figures: dict[str, Any] = {}
    started = time.monotonic()
    try:
        yield figures
    except BaseException:
        deployment.dump()
        raise
    finally:
        figures["drill seconds"] = round(time.monotonic() - started, 1)
        print(f"\n{drill}: {json.dumps(figures)}")


def restart(deployment: Deployment, name: str) -> None:
    component = deployment.components[name]
    if component.process is None:
        component.start()


# -- deposits -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Deposit:
    tx_hash: str
    address: str
    amount: str
    sent_at: float  # time.time() when the sandbox made the transfer


def stream(deployment: Deployment, count: int, seconds: float,
           midway: Callable[[], None] | None = None) -> list[Deposit]:
    """``count`` deposits spread evenly over ``seconds``, alternating the deposit addresses
    (so alternating the two API servers); ``midway`` runs at the halfway point, in a thread
    of its own so the stream goes on while it works."""
    addresses = deployment.deposit_addresses
    made: list[Deposit] = []
    helper: threading.Thread | None = None
    failure: list[BaseException] = []

    def run_midway() -> None:
        assert midway is not None
        try:
            midway()
        except BaseException as exc:
            failure.append(exc)

    start = time.monotonic()
    for i in range(count):
        if midway is not None and helper is None and i >= count // 2:
            helper = threading.Thread(target=run_midway, daemon=True)
            helper.start()
        delay = start + i * seconds / count - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        address = addresses[i % len(addresses)]
        amount = f"{1 + i % 97}.{(i * 7919) % 1_000_000:06d}"
        sent_at = time.time()
        made.append(Deposit(deployment.api.deposit(address, amount), address, amount, sent_at))
    if helper is not None:
        helper.join(120)
        assert not helper.is_alive(), "the midway action did not finish"
    if failure:
        raise failure[0]
    return made


def credited_once(deployment: Deployment, deposits: list[Deposit], timeout: float,
                  figures: dict[str, Any]) -> str | None:
    """The provider's guarantees, asserted: every deposit stored once, credited in one ledger
    row by one successful ``deposit_credit`` run, none lost; every run that consumed one of
    their Asset events succeeded.

    Then Airflow's part: one Asset event per deposit, consumed by one run. On Airflow 3.3.2
    that can fail for two reasons outside the provider (docs/deployment.md, "What the drills
    found"); what failed, deposit by deposit, is returned for :func:`airflow_part`, which the
    drill calls after its own assertions.
    """
    hashes = {d.tx_hash for d in deposits}
    db = deployment.db

    def credited() -> int:
        rows = db.rows("SELECT count(*) FROM credited_deposits WHERE tx_hash = ANY(%s)",
                       list(hashes))
        return int(rows[0][0])

    try:
        deployment.wait(f"{len(hashes)} deposits credited", lambda: credited() >= len(hashes),
                        timeout, interval=1)
    except AssertionError as exc:
        measure(deployment, deposits, figures)  # what was credited, for the record
        raise AssertionError(f"{exc}: {uncredited(deployment, hashes)}") from None
    deployment.wait("the deposit_credit runs to finish",
                    lambda: not db.rows("SELECT 1 FROM dag_run WHERE dag_id = 'deposit_credit' "
                                        "AND state NOT IN ('success', 'failed')"), 90)
    time.sleep(8)  # give a (wrong) redelivery every chance to show up

    ledger = db.rows("SELECT tx_hash, to_address, amount, token, credited_by "
                     "FROM credited_deposits WHERE tx_hash = ANY(%s)", list(hashes))
    # Amounts compared as decimals: the service writes 1.500000 as 1.5.
    assert sorted((h, a, Decimal(m), t) for h, a, m, t, _ in ledger) == sorted(
        (d.tx_hash, d.address, Decimal(d.amount), "USDT") for d in deposits)
    runs = db.credit_runs()
    succeeded = {run["run_id"] for run in runs if run["state"] == "success"}
    by_run = {h: run for h, _, _, _, run in ledger}
    assert all(run in succeeded for run in by_run.values()), {
        h: run for h, run in by_run.items() if run not in succeeded}
    stored = Counter(t.tx_hash for t in _stored(deployment, deposits))
    assert stored == Counter(hashes)
    consumed: Counter[str] = Counter()
    for run in runs:
        mine = [h for h in run["tx_hashes"] if h in hashes]
        if mine:
            assert run["state"] == "success", run
            consumed.update(mine)
    figures["credited by a run its event did not reach"] = sum(
        1 for h, run in by_run.items()
        if h not in {x for r in runs if r["run_id"] == run for x in r["tx_hashes"]})
    measure(deployment, deposits, figures)

    events = Counter(e.get("tx_hash") for e in db.deposit_events()
                     if e.get("tx_hash") in hashes)
    twice = {h[:12]: n for h, n in events.items() if n > 1}
    unconsumed = sorted(h[:12] for h in hashes if consumed[h] == 0)
    assert set(events) == hashes, "a deposit has no Asset event at all"
    assert all(consumed[h] <= events[h] for h in hashes), "an Asset event consumed twice"
    parts = ([f"{len(twice)} deposits have more than one Asset event {twice} (the shared "
              "stream's at-least-once delivery across a triggerer crash)"] if twice else []) + (
        [f"{len(unconsumed)} Asset events are consumed by no run yet {unconsumed} (the "
         "scheduler's queue race, apache/airflow#70972, in no release yet)"]
        if unconsumed else [])
    if not parts:
        return None
    return (f"Airflow's part does not hold here: {'; '.join(parts)}; their deposits are "
            "credited once all the same")


def airflow_part(shortfall: str | None) -> None:
    """An expected failure (xfail), never a pass, when Airflow's part did not hold."""
    if shortfall is not None:
        pytest.xfail(shortfall)


def measure(deployment: Deployment, deposits: list[Deposit], figures: dict[str, Any]) -> None:
    """Deposits/s end to end (first transfer made to last credit) and transfer-to-credit."""
    sent = {d.tx_hash: d.sent_at for d in deposits}
    credited = deployment.db.rows(
        "SELECT tx_hash, extract(epoch FROM credited_at::timestamptz) FROM credited_deposits "
        "WHERE tx_hash = ANY(%s)", list(sent))
    if not credited:
        return
    lags = sorted(float(at) - sent[h] for h, at in credited)
    span = max(float(at) for _, at in credited) - min(sent.values())
    figures.update({
        "deposits": len(deposits), "credited": len(credited),
        "end-to-end deposits/s": round(len(credited) / span, 2),
        "transfer to credit median s": round(statistics.median(lags), 2),
        "transfer to credit max s": round(lags[-1], 2),
    })


def uncredited(deployment: Deployment, hashes: set[str]) -> str:
    """Where each uncredited deposit stopped: stored? its Asset events? a run consuming them?"""
    db = deployment.db
    ledger = {r[0] for r in db.rows("SELECT tx_hash FROM credited_deposits")}
    missing = sorted(hashes - ledger)
    lines = [f"{len(missing)} of {len(hashes)} not credited"]
    store = deployment.store()
    try:
        unstored = [h[:12] for h in missing if store.get_transfer(h) is None]
    finally:
        store.close()
    lines.append(f"not in the callback store: {unstored}")
    for tx_hash in missing:
        events = db.rows(
            "SELECT e.id, e.timestamp, (SELECT array_agg(d.dag_run_id) FROM dagrun_asset_event d "
            "WHERE d.event_id = e.id) FROM asset_event e JOIN asset a ON a.id = e.asset_id "
            "WHERE a.name = 'tronenergy://deposits' AND e.extra -> 'payload' ->> 'tx_hash' = %s",
            tx_hash)
        lines.append(f"{tx_hash[:12]}: events (id, time, consuming runs) {events}")
    queued = db.rows("SELECT target_dag_id, created_at FROM asset_dag_run_queue")
    lines.append(f"asset_dag_run_queue: {queued}")
    return "\n".join(lines)


def _stored(deployment: Deployment, deposits: list[Deposit]) -> list[Any]:
    store = deployment.store()
    try:
        hashes = {d.tx_hash for d in deposits}
        return [t for t in store.list_transfers(address=sorted({d.address for d in deposits}),
                                                limit=10_000) if t.tx_hash in hashes]
    finally:
        store.close()


def deliveries(deployment: Deployment, deposits: list[Deposit]) -> list[dict[str, Any]]:
    hashes = {d.tx_hash for d in deposits}
    return [d for d in deployment.api.control("GET", "/deliveries") if d["tx_hash"] in hashes]


# -- payouts --------------------------------------------------------------------------------


def payout_batch(deployment: Deployment, root: Path, holders: int, newcomers: int,
                 inactive: int) -> tuple[str, list[str], dict[str, Any]]:
    """A sender and a CSV of recipients: the conf of one payout run."""
    api = deployment.api
    sender = api.wallet(activated=True, holder=True)
    recipients = ([api.wallet(activated=True, holder=True) for _ in range(holders)]
                  + [api.wallet(activated=True, holder=False) for _ in range(newcomers)]
                  + [api.wallet(activated=False, holder=False) for _ in range(inactive)])
    csv = root / f"payouts-{sender}.csv"
    csv.write_text("recipient,amount\n" + "".join(
        f"{address},{100 + i}.25\n" for i, address in enumerate(recipients)))
    # Prepared without the node, as the other deployments' batches: the deployment's
    # tron_node connection is for the deposit proofs, and this sender holds no funds.
    return sender, recipients, {"payouts_file": str(csv), "sender_address": sender,
                                "rent_time": "1", "max_spend_trx": "100",
                                "tron_node_conn_id": None}


def orders_for(deployment: Deployment, sender: str) -> list[dict[str, Any]]:
    return [o for o in deployment.api.control("GET", "/orders")
            if o.get("target_address") == sender and o["kind"] != "activate"]


def activations_of(deployment: Deployment, addresses: list[str]) -> list[str]:
    wanted = set(addresses)
    return [o["target_address"] for o in deployment.api.control("GET", "/orders")
            if o["kind"] == "activate" and o["target_address"] in wanted]


def task_hosts(deployment: Deployment, run_ids: list[str]) -> set[str]:
    rows = deployment.db.rows(
        "SELECT DISTINCT hostname FROM task_instance WHERE dag_id = %s AND run_id = ANY(%s) "
        "AND hostname IS NOT NULL AND hostname <> ''", PAYOUT_DAG, run_ids)
    return {r[0] for r in rows}


# -- drills ---------------------------------------------------------------------------------


def test_drill_5_two_payout_batches_at_once_on_both_workers(deployment, tmp_path):
    with explained(deployment, "drill 5: two batches at once") as figures:
        batches = [payout_batch(deployment, tmp_path, holders=2, newcomers=1, inactive=1)
                   for _ in range(2)]
        runs = [deployment.api.trigger(PAYOUT_DAG, conf) for _, _, conf in batches]
        for run_id in runs:
            assert deployment.wait(f"payout run {run_id}",
                                   lambda r=run_id: deployment.finished(PAYOUT_DAG, r),
                                   240) == "success"
        for (sender, recipients, _), run_id in zip(batches, runs, strict=True):
            ready = deployment.api.xcom(PAYOUT_DAG, run_id, "publish_batch_ready")
            energy = orders_for(deployment, sender)
            assert sorted(o["order_id"] for o in energy) == sorted(
                o["order_id"] for o in ready["orders"])
            assert all(o["status"] == "success" for o in energy), energy
            assert sum(int(o["energy_amount"]) for o in energy) == ready["total_energy"] \
                == 2 * 65_000 + 2 * 131_000
            assert activations_of(deployment, recipients) == [recipients[3]]
            assert ready["transfers"] == 4 and ready["activations"] == 1
        # The two runs overlapped, and their tasks ran on both workers.
        spans = deployment.db.rows(
            "SELECT extract(epoch FROM start_date), extract(epoch FROM end_date) FROM dag_run "
            "WHERE dag_id = %s AND run_id = ANY(%s)", PAYOUT_DAG, runs)
        assert max(s for s, _ in spans) < min(e for _, e in spans), spans
        assert task_hosts(deployment, runs) == set(WORKERS)
        figures["overlap s"] = round(float(min(e for _, e in spans) - max(s for s, _ in spans)),
                                     1)


def test_drill_1_worker_killed_mid_purchase(deployment, tmp_path):
    api, db = deployment.api, deployment.db
    with explained(deployment, "drill 1: worker killed mid-purchase") as figures:
        sender, _, conf = payout_batch(deployment, tmp_path, holders=2, newcomers=0, inactive=0)
        # The sandbox processes the purchase, then holds its answer for two minutes.
        fault = api.control("POST", "/faults", {"kind": "latency", "path": "/energy/buy*",
                                                "method": "POST", "latency_ms": 120_000,
                                                "count": 1})
        try:
            run_id = api.trigger(PAYOUT_DAG, conf)
            deployment.wait("the purchase to reach the sandbox",
                            lambda: orders_for(deployment, sender), 180)

            def buying_worker() -> str | None:
                rows = db.rows("SELECT hostname FROM task_instance WHERE dag_id = %s AND "
                               "run_id = %s AND task_id = %s AND state = 'running'",
                               PAYOUT_DAG, run_id, BUY_TASK)
                return rows[0][0] if rows and rows[0][0] in WORKERS else None

            victim = deployment.wait("the worker running the purchase", buying_worker, 30)
            deployment.kill(victim)
            killed_at = time.monotonic()
            survivor = next(w for w in WORKERS if w != victim)
            state = deployment.wait("the payout run to stop",
                                    lambda: deployment.finished(PAYOUT_DAG, run_id), 240)
            figures["kill to run stopped s"] = round(time.monotonic() - killed_at, 1)
        finally:
            if _armed(api, fault):
                api.control("DELETE", f"/faults/{fault['id']}")
        # Airflow retried the purchase on the other worker; the journal stopped it there.
        assert state == "failed"
        ti = db.rows("SELECT state, try_number, hostname FROM task_instance WHERE dag_id = %s "
                     "AND run_id = %s AND task_id = %s", PAYOUT_DAG, run_id, BUY_TASK)
        assert [(r[0], r[2]) for r in ti] == [("failed", survivor)], ti
        assert ti[0][1] >= 2, ti
        orders = orders_for(deployment, sender)
        assert len(orders) == 1, orders
        log = _try_log(deployment, run_id, ti[0][1])
        assert "its outcome is unknown" in log and "tronenergy-purchases resolve" in log, log

        # The documented resolve path: a person finds the order, records it, clears the task.
        listed = _purchases(deployment, "list", "--unknown", "--json")
        identities = [e["identity"] for e in json.loads(listed)
                      if e["target_address"] == sender]
        assert len(identities) == 1, listed
        _purchases(deployment, "resolve", identities[0], "--order-id", orders[0]["order_id"])
        restart(deployment, victim)
        cleared = api.http.post(
            f"{api.base}/api/v2/dags/{PAYOUT_DAG}/clearTaskInstances", timeout=10,
            json={"dag_run_id": run_id, "only_failed": True, "reset_dag_runs": True,
                  "dry_run": False})
        assert cleared.status_code == 200, cleared.text
        assert deployment.wait("the resolved run", lambda: deployment.finished(
            PAYOUT_DAG, run_id), 240) == "success"
        assert [o["order_id"] for o in orders_for(deployment, sender)] == \
            [orders[0]["order_id"]]
        ready = api.xcom(PAYOUT_DAG, run_id, "publish_batch_ready")
        assert [o["order_id"] for o in ready["orders"]] == [orders[0]["order_id"]]


def _armed(api: Any, fault: dict[str, Any]) -> bool:
    return any(f["id"] == fault["id"] for f in api.control("GET", "/faults"))


def _purchases(deployment: Deployment, *args: str) -> str:
    command = str(Path(sys.executable).with_name("tronenergy-purchases"))
    done = subprocess.run([command, *args], env=deployment.journal_env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _try_log(deployment: Deployment, run_id: str, try_number: int) -> str:
    found = [p for p in (deployment.home / "logs").rglob(f"attempt={try_number}.log")
             if f"run_id={run_id}" in str(p) and f"task_id={BUY_TASK}" in str(p)]
    assert found, f"no log of try {try_number} of {BUY_TASK}"
    return found[0].read_text(errors="replace")


def test_drill_2_triggerer_killed_mid_stream(deployment):
    with explained(deployment, "drill 2: triggerer killed mid-stream") as figures:
        holder = deployment.wait_watching()
        killed: list[float] = []

        def kill_holder() -> None:
            deployment.kill(holder)
            killed.append(time.monotonic())

        deposits = stream(deployment, 200, 30, midway=kill_holder)
        taken_over = deployment.wait_watching(timeout=120)
        figures["watcher taken over after s"] = round(time.monotonic() - killed[0], 1)
        assert taken_over != holder and taken_over in TRIGGERERS
        restart(deployment, holder)
        shortfall = credited_once(deployment, deposits, 150, figures)
        # Both API servers received their half.
        urls = Counter(d["url"] for d in deliveries(deployment, deposits))
        assert urls == {deployment.callback_url(0): 100, deployment.callback_url(1): 100}
    airflow_part(shortfall)


def test_drill_3_api_server_killed_mid_stream(deployment):
    with explained(deployment, "drill 3: API server killed mid-stream") as figures:
        deployment.wait_watching()
        victim = "api-server-2"  # API server 1 also serves the workers' execution API
        down: list[float] = []

        def kill_and_restart() -> None:
            down.append(time.monotonic())
            deployment.kill(victim)
            time.sleep(5)
            restart(deployment, victim)
            deployment.apis[1].wait_up(deployment.components[victim],
                                       deployment.alive_expected(), 120)
            deployment.wait("API server 2 back", lambda: deployment.apis[1].status(
                "/tronenergy/health") == 200, 120)
            down.append(time.monotonic())

        deposits = stream(deployment, 60, 20, midway=kill_and_restart)
        figures["API server 2 down s"] = round(down[1] - down[0], 1)
        shortfall = credited_once(deployment, deposits, 150, figures)
        sent = deliveries(deployment, deposits)
        assert all(d["status"] == "delivered" for d in sent), sent
        retried = [d for d in sent if len(d["history"]) > 1]
        assert retried, "no delivery needed a retry: the kill missed the stream"
        # Those to the killed server were retried (others may be, under load: not required).
        assert deployment.callback_url(1) in {d["url"] for d in retried}
        assert all(d["history"][-1]["status_code"] == 200 for d in sent)
        figures["deliveries retried"] = len(retried)
    airflow_part(shortfall)


def test_drill_4_store_database_restarted_mid_stream(deployment):
    server = deployment.store_server
    if server is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl) to give the store a "
                    "server of its own; restarting the shared one would break other runs")
    with explained(deployment, "drill 4: store database restarted mid-stream") as figures:
        deployment.wait_watching()

        def restart_store() -> None:
            server.stop("immediate")
            time.sleep(8)
            server.start()

        deposits = stream(deployment, 60, 20, midway=restart_store)
        shortfall = credited_once(deployment, deposits, 150, figures)
        sent = deliveries(deployment, deposits)
        assert all(d["status"] == "delivered" for d in sent), sent
        refused = [d for d in sent if any((a["status_code"] or 0) >= 500
                                          for a in d["history"])]
        assert refused, "no callback met the store down: the restart missed the stream"
        # Both receivers answered 5xx while it was down, and recovered without a restart.
        assert {d["url"] for d in refused} == {deployment.callback_url(0),
                                               deployment.callback_url(1)}
        figures["callbacks answered 5xx first"] = len(refused)
    airflow_part(shortfall)

