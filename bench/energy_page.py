"""The Energy page's data on a year of history: is it under 1 s, and which indexes make it so?

Seeds a year (the 365 days up to today, UTC) into fresh stores: 100,000 purchases in the
purchase journal (95% placed, the rest ended, refused, not placed, a few unknown), 100,000
payout attempts with receipts in the payout journal (a few failed on chain; a tenth TRX
payouts, a tenth of an 18-decimal token, the rest USDT), 1,000,000
callbacks in the callback store into 1,000 deposit addresses (plus 2,000 counted
redeliveries, 50 conflicts and three consumers, one far behind), and 8,760 ``payout batch
ready`` events (one an hour, handed in as the app hands them). Rows are shaped like the
real ones (a purchase's result, a payout's signed bytes and receipt, a callback's raw
body and signature), so the tables are the size a year makes them.

Then times :func:`airflow_provider_tronenergy.ui.data.page_data` for the last 7, 30 and 365
days (the first call opens the stores; the median of ``--repeat`` warm calls is
reported, with each section's time), and once more for 365 days after dropping the
period indexes the page added (the purchase journal's on ``sent_at_ms`` and the payout
journal's on ``created_at_ms``, each covering the figure columns it sums), to show what
they buy. Callbacks per hour are read from the store's hourly counts, which a trigger
keeps as the rows are inserted (also here, while seeding).

    .venv/bin/python bench/energy_page.py [--backend sqlite|postgresql] [--repeat 5]
        [--purchases 100000] [--payouts 100000] [--callbacks 1000000]

PostgreSQL: the suite's server (``tests/support/postgres.py``), in a fresh schema that is
dropped afterwards. Aim (issue 26): page data in under 1 s on a year.
"""

from __future__ import annotations

import argparse
import json
import random
import secrets
import sys
import tempfile
import time
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from airflow_provider_tronenergy import sqlstore  # noqa: E402
from airflow_provider_tronenergy.callbacks.store import CallbackStore  # noqa: E402
from airflow_provider_tronenergy.callbacks.store.schema import HOUR_MS  # noqa: E402
from airflow_provider_tronenergy.deposits import DepositLedger  # noqa: E402
from airflow_provider_tronenergy.node.models import trx_text  # noqa: E402
from airflow_provider_tronenergy.payout.journal import (  # noqa: E402
    PayoutJournal,
    receipt_figures,
)
from airflow_provider_tronenergy.purchase_journal.figures import figures  # noqa: E402
from airflow_provider_tronenergy.purchase_journal.store import PurchaseJournal  # noqa: E402
from airflow_provider_tronenergy.ui.batches import BatchEvent  # noqa: E402
from airflow_provider_tronenergy.ui.data import Stores, page_data  # noqa: E402
from airflow_provider_tronenergy.ui.period import Period  # noqa: E402
from support.postgres import reachable_postgres_url  # noqa: E402
from tronenergy_protocol.address import random_address  # noqa: E402
from tronenergy_protocol.explorer import explorer_of  # noqa: E402

CHUNK = 5_000
AIM_MS = 1_000
E18 = random_address()
"""A second token, 18 decimals: a tenth of the payouts (another tenth are TRX payouts)."""
SENT_TOKENS = [[{"token": E18, "symbol": "E18", "decimals": 18, "contract": E18}]]
"""What the newest ``payouts sent`` event says of it, as the app hands it over."""
rng = random.Random(26)


def year_ms(today: date) -> tuple[int, int]:
    """The year's bounds: 364 days before today's midnight to tomorrow's."""
    period = Period.ending(today, 365)
    return period.start_ms, period.end_ms


def when(start: int, end: int) -> int:
    return rng.randrange(start, end)


def insert(engine: sa.engine.Engine, table: sa.Table, rows: list[dict[str, Any]]) -> None:
    with engine.begin() as conn:
        for first in range(0, len(rows), CHUNK):
            conn.execute(table.insert(), rows[first:first + CHUNK])


def seed_purchases(journal: PurchaseJournal, count: int, start: int, end: int,
                   targets: list[str]) -> None:
    journal.ensure_schema()
    rows = []
    for i in range(count):
        sent = when(start, end)
        roll = rng.random()
        state = ("placed" if roll < 0.95 else "ended" if roll < 0.97 else "refused"
                 if roll < 0.99 else "not_placed" if roll < 0.9995 else "sending")
        energy = 65_000 * rng.randint(1, 8)
        cost = energy * 45 // 1_000  # sun at 0.45 TRX per 10,000
        burn = energy * 100
        result, priced = None, None
        if state in ("placed", "ended"):
            priced = {
                "mode": "buy_count", "order_id": secrets.token_hex(16), "status": "pending",
                "tx_hash": "", "target_address": targets[i % len(targets)],
                "energy_amount": energy, "rent_time": "1", "cost": f"{cost / 1e6:.6f}",
                "burn_cost": f"{burn / 1e6:.6f}", "saving": f"{(burn - cost) / 1e6:.6f}",
                "burn_price": {"energy_sun": 100, "source": "chain"},
                "quote": {"energy": energy, "rent_time": "1", "price_per_10k": "0.45",
                          "energy_cost": f"{cost / 1e6:.6f}", "activation_cost": "0",
                          "total": f"{cost / 1e6:.6f}", "burn_cost": f"{burn / 1e6:.6f}"},
                "reused": False, "dry_run": False,
                "purchase_key": f"batch:{i // 10}:{i % 10}"}
            result = json.dumps(priced, sort_keys=True)
        rows.append({
            "identity": f"batch:{i // 10}:{i % 10}", "attempt": 1, "state": state,
            "explicit_key": True, "mode": "buy_count", "target_address": targets[i % len(targets)],
            "description": f"buy_count {energy:,} energy for {targets[i % len(targets)]} (1 h)",
            "request": json.dumps({"target_address": targets[i % len(targets)],
                                   "count": energy // 65_000, "rent_time": "1"}),
            "scope": f"batch_payout_preparation/scheduled__{sent}/buy_energy__order_{i % 10}/-1",
            "claimed_by": "x", "sent_at_ms": sent, "rent_hours": "1",
            "valid_until_ms": sent + 3_600_000 if state == "placed" else None,
            "order_id": None if state == "sending" else secrets.token_hex(16),
            "result": result, "updated_at_ms": sent + 1_000, "resolved_by": None,
            "note": None, **figures(priced)})
    insert(journal.engine, journal.entries, rows)


def seed_payouts(payouts: PayoutJournal, count: int, start: int, end: int,
                 targets: list[str], sender: str) -> None:
    payouts.ensure_schema()
    rows = []
    for i in range(count):
        created = when(start, end)
        failed = rng.random() < 0.0005
        energy = 64_285 if rng.random() < 0.7 else 130_285
        kind = rng.random()
        token, units, fee = "USDT", "12500000", 345_000
        if kind < 0.1:  # a TRX payout, creating its recipient now and then
            token, units, energy = "TRX", "2500000", 0
            fee += 1_000_000 if rng.random() < 0.3 else 0
        elif kind < 0.2:  # an 18-decimal token
            token, units, energy = E18, str(10 ** 20 + i), 29_650
        txid = f"{i:064x}"
        receipt = {"txid": txid, "block": 70_000_000 + i, "result":
                   "OUT_OF_ENERGY" if failed else "SUCCESS", "succeeded": not failed,
                   "energy_total": energy, "energy_from_stake": energy, "energy_burned": 0,
                   "trx_burned": trx_text(fee), "trx_burned_sun": fee, "bandwidth": 345,
                   "bandwidth_burned_sun": 345_000, "energy_burned_sun": 0}
        rows.append({
            "identity": f"row:{i}", "attempt": 1, "state": "failed" if failed else "confirmed",
            "batch_id": f"scheduled__{created // HOUR_MS}", "row": i % 10, "sender": sender,
            "recipient": targets[i % len(targets)], "token": token, "units": units,
            "claimed_by": f"batch_payout_send/run_{created // HOUR_MS}/send_payouts/-1/try1"
                          "@host:1",
            "created_at_ms": created, "updated_at_ms": created + 9_000, "txid": txid,
            "expiration_ms": created + 60_000, "ref_block": 1, "fee_limit_sun": 50_000_000,
            "signed_tx": json.dumps({"txID": txid, "raw_data_hex": "0a" * 120,
                                     "signature": ["ab" * 65]}),
            "block_number": 70_000_000 + i, "receipt": json.dumps(receipt),
            "last_answer": "accepted", "resolved_by": None, "note": None,
            **receipt_figures(receipt)})
    insert(payouts.db.engine, payouts.attempts, rows)


def seed_callbacks(store: CallbackStore, count: int, start: int, end: int,
                   deposits: list[str], senders: list[str]) -> None:
    store.ensure_schema()
    times = sorted(when(start, end) for _ in range(count))  # ids follow arrival
    t = store.tables.transfers
    with store.engine.begin() as conn:
        for first in range(0, count, CHUNK):
            rows = []
            for i in range(first, min(count, first + CHUNK)):
                to, sender = deposits[i % len(deposits)], senders[i % len(senders)]
                amount = f"{rng.randint(1, 5_000)}.{rng.randint(0, 999_999):06d}"
                body = (f'{{"event":"tron.transfer","timestamp":{times[i] // 1000},"data":'
                        f'{{"tx_hash":"{i:064x}","from":"{sender}","to":"{to}","amount":'
                        f'"{amount}","token":"USDT","block_number":{70_000_000 + i},'
                        f'"block_timestamp":{times[i] - 3_000}}}}}').encode()
                rows.append({"tx_hash": f"{i:064x}", "token": "USDT", "from_address": sender,
                             "to_address": to, "amount": amount,
                             "amount_micro": int(amount.replace(".", "")),
                             "block_number": 70_000_000 + i,
                             "block_timestamp_ms": times[i] - 3_000,
                             "sent_at": times[i] // 1000, "received_at_ms": times[i],
                             "verified_by": "key", "signature": "cd" * 32, "raw_body": body,
                             "receipt": f"r{first}"})
            conn.execute(t.insert(), rows)
        c = store.tables.conflicts
        conn.execute(c.insert(), [{
            "tx_hash": f"{i * 997:064x}", "fields": "amount", "stored_id": i * 997 + 1,
            "from_address": senders[0], "to_address": deposits[0], "amount": "999",
            "token": "USDT", "received_at_ms": when(start, end), "verified_by": "key",
            "signature": "ef" * 32, "raw_body": b"{}", "body_sha256": f"{i:064x}"}
            for i in range(50)])
    store.hourly.add_duplicates(when(start, end) for _ in range(2_000))
    store.commit_offset("deposit_watch.watcher", count)
    store.commit_offset("reconcile", count - 20)
    store.commit_offset("an old watcher", count // 3)


def batch_events(start: int, end: int, sender: str, targets: list[str]) -> list[BatchEvent]:
    events = []
    for at in range(start, end, HOUR_MS):
        recipients = [{"recipient": targets[(at // HOUR_MS + n) % len(targets)],
                       "amount": "12.5", "energy": 64_285, "activated": n == 0}
                      for n in range(10)]
        events.append(BatchEvent.of({
            "batch_id": f"scheduled__{at // HOUR_MS}", "sender": sender,
            "recipients": recipients, "activations": 1, "activation_cost": "1.1",
            "energy_bought": 642_850, "energy_cost": "28.928250", "total_cost": "30.02825",
            "burn_cost_bought": "64.285", "saving": "35.35675",
            "approval": {"required": True, "approved": True, "by": "lead",
                         "at": datetime.fromtimestamp(at / 1000, timezone.utc).isoformat(),
                         "timed_out": False},
            "prices": None}, at + 60_000, "batch_payout_preparation", f"scheduled__{at}"))
    return events


def timed(stores: Stores, period: Period, events: list[BatchEvent], repeat: int
          ) -> tuple[float, float, dict[str, float]]:
    """(first call ms, median warm ms, the median call's sections)."""
    first = _once(stores, period, events)
    runs = sorted((_once(stores, period, events) for _ in range(repeat)), key=lambda r: r[0])
    median = runs[len(runs) // 2]
    return first[0], median[0], median[1]


def _once(stores: Stores, period: Period, events: list[BatchEvent]
          ) -> tuple[float, dict[str, float]]:
    in_period = [e for e in events if period.start_ms <= e.at_ms < period.end_ms]
    started = time.perf_counter()
    data = page_data(stores, period, in_period, sent_tokens=SENT_TOKENS,
                     explorer=explorer_of(None))
    return (time.perf_counter() - started) * 1000, data["timings_ms"]


def drop_page_indexes(stores: Stores) -> None:
    """The tables without the indexes the page reads through (for comparison)."""
    for engine, table, name in (
            (stores.journal.engine, stores.journal.entries, "purchase_journal_sent"),
            (stores.payouts.db.engine, stores.payouts.attempts, "payout_journal_created")):
        schema = f"{table.schema}." if table.schema else ""
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP INDEX {schema}tronenergy_{name}"))
            if engine.dialect.name == "postgresql":
                conn.execute(sa.text(f"ANALYZE {schema}{table.name}"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--purchases", type=int, default=100_000)
    parser.add_argument("--payouts", type=int, default=100_000)
    parser.add_argument("--callbacks", type=int, default=1_000_000)
    args = parser.parse_args()

    today = datetime.now(timezone.utc).date()
    start, end = year_ms(today)
    workdir = Path(tempfile.mkdtemp(prefix="energy-page-bench-"))
    schema = None
    if args.backend == "sqlite":
        urls = {name: f"sqlite:///{workdir / (name + '.db')}"
                for name in ("journal", "callbacks")}
    else:
        url = reachable_postgres_url()
        if url is None:
            print("PostgreSQL is unreachable at 127.0.0.1:5432", file=sys.stderr)
            return 2
        schema = f"energy_page_bench_{secrets.token_hex(4)}"
        admin = sqlstore.create_engine(sqlstore.parse_url(url))
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        urls = {"journal": url, "callbacks": url}
    kwargs: dict[str, Any] = {"schema": schema} if schema else {}
    stores = Stores(PurchaseJournal(urls["journal"], **kwargs),
                    PayoutJournal(urls["journal"], **kwargs),
                    CallbackStore(urls["callbacks"], pool_size=2, **kwargs),
                    DepositLedger(f"sqlite:///{workdir / 'ledger.db'}"))
    try:
        targets = [random_address() for _ in range(1_000)]
        senders = [random_address() for _ in range(200)]
        began = time.perf_counter()
        seed_purchases(stores.journal, args.purchases, start, end, targets)
        seed_payouts(stores.payouts, args.payouts, start, end, targets, senders[0])
        seed_callbacks(stores.callbacks, args.callbacks, start, end, targets, senders)
        events = batch_events(start, end, senders[0], targets)
        if args.backend == "postgresql":
            with stores.journal.engine.begin() as conn:
                for table in ("purchase_journal", "payout_journal", "transfers"):
                    conn.execute(sa.text(f'ANALYZE "{schema}".tronenergy_{table}'))
        print(f"seeded {args.purchases:,} purchases, {args.payouts:,} payouts, "
              f"{args.callbacks:,} callbacks, {len(events):,} batch events "
              f"({args.backend}) in {time.perf_counter() - began:.0f} s")
        stores.close()  # a fresh process's first call: the stores are opened anew
        stores = Stores(PurchaseJournal(urls["journal"], **kwargs),
                        PayoutJournal(urls["journal"], **kwargs),
                        CallbackStore(urls["callbacks"], pool_size=2, **kwargs),
                        DepositLedger(f"sqlite:///{workdir / 'ledger.db'}"))
        results = []
        for days in (7, 30, 365):
            period = Period.ending(today, days)
            first, warm, sections = timed(stores, period, events, args.repeat)
            results.append((f"{days} days", first, warm, sections))
        drop_page_indexes(stores)
        first, warm, sections = timed(stores, Period.ending(today, 365), events, args.repeat)
        results.append(("365 days, no page indexes", first, warm, sections))
        print(f"\n{'period':<28}{'first call':>12}{'warm (median)':>15}  sections (ms)")
        for name, first, warm, sections in results:
            parts = ", ".join(f"{k} {v:.0f}" for k, v in sections.items() if k != "total")
            print(f"{name:<28}{first:>9.0f} ms{warm:>12.0f} ms  {parts}")
        year = results[2][2]
        print(f"\naim: a year's page data in under {AIM_MS} ms: "
              f"{'met' if year < AIM_MS else 'NOT met'} ({year:.0f} ms warm)")
    finally:
        stores.close()
        if schema is not None:
            with admin.begin() as conn:
                conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
            admin.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
