"""The Energy page's figures against a known history in real stores (SQLite, PostgreSQL):
each section says what the journals and the callback store hold, nothing else."""

from __future__ import annotations

import json
from datetime import date

from airflow_provider_tronenergy.ui.data import page_data
from airflow_provider_tronenergy.ui.period import Period
from support.energy_history import EXPECTED, PERIOD, PREPARATION, SEND_SCOPE, at, seed

NOW = at(3, 10, 1)  # a minute after the unknown purchase was sent


def test_money_per_day_is_what_the_journal_and_the_batch_event_hold(stores):
    data = page_data(stores, PERIOD, seed(stores), now_ms=NOW)
    assert data["spend"]["days"] == EXPECTED.days
    assert data["spend"]["totals"] == {
        "energy_trx": "14.67", "activation_trx": "3.3", "spent_trx": "17.97",
        "burn_trx": "35.9", "saving_trx": "17.93", "orders": 4, "energy": 326_000,
        "activations": 3, "without_figures": 1}
    assert data["orders_by_state"] == EXPECTED.orders_by_state
    json.dumps(data)  # JSON-safe throughout


def test_energy_rented_against_what_the_chain_charged(stores):
    chain = page_data(stores, PERIOD, seed(stores), now_ms=NOW)["chain"]
    assert chain["energy_rented"] == EXPECTED.energy_rented
    assert {k: chain[k] for k in EXPECTED.chain} == EXPECTED.chain
    assert chain["charged_per_rented"] == "0.7502"
    assert chain["attempts_by_state"] == {"confirmed": 2, "failed": 1}
    # A period without the batch's day charged nothing.
    later = page_data(stores, Period(date(2026, 3, 2), date(2026, 3, 3)), [], now_ms=NOW)
    assert later["chain"]["energy_charged"] == 0 and later["chain"]["transactions"] == 0


def test_what_waits_for_a_person_comes_with_what_to_do(stores):
    waiting = page_data(stores, PERIOD, seed(stores), now_ms=NOW)["waiting"]
    [purchase] = waiting["purchases"]["listed"]
    assert waiting["purchases"]["count"] == 1
    assert purchase["identity"] == EXPECTED.waiting_purchase and purchase["in_flight"] is True
    assert purchase["commands"] == [
        "tronenergy-purchases resolve 'p7 '\"'\"'unknown'\"'\"'' --order-id <ORDER_ID>",
        "tronenergy-purchases resolve 'p7 '\"'\"'unknown'\"'\"'' --not-placed"]
    assert purchase["task"] == {"dag_id": PREPARATION, "run_id": "manual__2026-03-01",
                                "task_id": "buy_energy", "map_index": -1}
    [payout] = waiting["payouts"]["listed"]
    assert (payout["identity"], payout["result"], payout["batch_id"]) == \
        (EXPECTED.waiting_payout, "OUT_OF_ENERGY", "b1")
    assert payout["commands"][0] == "tronenergy-payouts resolve b1:2 --resend --reason \"...\""
    assert payout["task"]["task_id"] == "send_payouts"
    # Waiting is whatever the period: a period long after still lists both.
    later = page_data(stores, Period(date(2026, 6, 1), date(2026, 6, 1)), [], now_ms=NOW)
    assert later["waiting"]["purchases"]["count"] == later["waiting"]["payouts"]["count"] == 1


def test_deposits_per_hour_redeliveries_conflicts_and_each_consumers_lag(stores):
    deposits = page_data(stores, PERIOD, seed(stores), now_ms=at(3))["deposits"]
    stored, duplicates = deposits["stored_per_hour"], deposits["duplicates_per_hour"]
    assert len(stored) == len(duplicates) == 72
    assert deposits["first_hour"] == "2026-03-01T00:00:00+00:00"
    assert [sum(stored[d * 24:(d + 1) * 24]) for d in range(3)] == EXPECTED.stored_per_day
    assert (stored[10], duplicates[10]) == (3, 1)  # 10:00 to 11:00 on March 1
    assert deposits["stored"] == 4 and deposits["duplicates"] == EXPECTED.duplicates
    assert deposits["conflicts"]["count"] == EXPECTED.conflicts
    assert deposits["conflicts"]["recent"][0]["fields"] == ["amount"]
    lag = {c["consumer"]: c for c in deposits["lag"]["consumers"]}
    assert {name: c["behind"] for name, c in lag.items()} == EXPECTED.consumers
    watcher = lag["deposit_watch.watcher"]
    assert watcher["oldest_waiting_since"] == "2026-03-01T10:03:00+00:00"
    assert watcher["lag_seconds"] == (at(3) - at(1, 10, 3)) // 1000


def test_per_batch_figures_approver_and_runs(stores):
    batches = page_data(stores, PERIOD, seed(stores), now_ms=NOW)["batches"]
    [row] = batches["batches"]
    assert (row["batch_id"], row["recipients"], row["energy"], row["total_trx"],
            row["saving_trx"]) == ("b1", 3, 261_000, "13.945", "14.355")
    assert row["approval"]["by"] == "lead" and row["approval"]["approved"] is True
    assert (row["dag_id"], row["run_id"]) == (PREPARATION, "manual__2026-03-01")
    sent = row["sent"]
    assert sent["payouts"] == 3 and sent["states"] == {"confirmed": 2, "failed": 1}
    assert sent["chain"]["energy_total"] == EXPECTED.chain["energy_charged"]
    assert sent["chain"]["trx_burned"] == EXPECTED.chain["trx_burned"]
    assert (sent["chain"]["transactions"], sent["chain"]["failed_on_chain"]) == (3, 1)
    assert sent["sent_by"]["dag_id"] == SEND_SCOPE.split("/")[0]
    assert sent["confirmation"] == "solidified"


def test_a_batch_confirmed_partly_on_the_head_says_so(stores):
    """One receipt confirmed on the head makes the batch's confirmation name the head too;
    a receipt journaled before confirmations were kept makes it unknown."""
    events = seed(stores)
    table = stores.payouts.attempts
    with stores.payouts.db.engine.begin() as conn:
        conn.execute(table.update().where(table.c.identity == "b1:0").values(
            confirmed_on="head"))
    [row] = page_data(stores, PERIOD, events, now_ms=NOW)["batches"]["batches"]
    assert row["sent"]["confirmation"] == "head and solidified"
    with stores.payouts.db.engine.begin() as conn:
        conn.execute(table.update().where(table.c.identity == "b1:1").values(
            confirmed_on=None))
    [row] = page_data(stores, PERIOD, events, now_ms=NOW)["batches"]["batches"]
    assert row["sent"]["confirmation"] == "unknown"


def test_no_secret_and_no_password_in_what_the_page_reads(stores):
    data = page_data(stores, PERIOD, seed(stores), now_ms=NOW)
    assert set(data["sources"]) == {"purchase_journal", "payout_journal", "callback_store",
                                    "deposit_ledger"}
    text = json.dumps(data)
    assert "whsec_" not in text and "signature" not in text and "raw_body" not in text
    assert set(data["timings_ms"]) >= {"spend", "chain", "stored_per_hour", "total"}


def test_empty_stores_give_an_empty_page(stores):
    data = page_data(stores, PERIOD, [], now_ms=NOW)
    assert data["spend"]["totals"]["spent_trx"] == "0" and data["batches"]["batches"] == []
    assert data["waiting"]["purchases"]["count"] == 0 and data["deposits"]["stored"] == 0
    assert data["chain"]["charged_per_rented"] is None


def test_callbacks_not_proven_on_chain_are_counted_and_listed(stores):
    """The deposit ledger's claims: how many wait for the chain and how many it contradicts,
    each with the command that shows both views."""
    from airflow_provider_tronenergy.deposits import Said, Verdict
    from airflow_provider_tronenergy.deposits.claims import record
    from airflow_provider_tronenergy.ui.page import render

    ledger = stores.ledger
    forged = Said(tx_hash="ab" * 32, to_address="TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
                  amount="5000", token="USDT", received_at_ms=at(1), store_id=1)
    early = Said(tx_hash="cd" * 32, to_address=forged.to_address, amount="1",
                 token="USDT", received_at_ms=at(2), store_id=2)
    with ledger.db.write() as conn:
        record(conn, ledger.db.insert, forged, Verdict("disputed", "not_found", "USDT"), "x")
        record(conn, ledger.db.insert, early, Verdict("waiting", "not_solid", "USDT"), "y")
    data = page_data(stores, PERIOD, seed(stores), now_ms=at(3))
    claims = data["deposits"]["claims"]
    assert (claims["counts"]["waiting"], claims["counts"]["disputed"]) == (1, 1)
    assert [(c["tx_hash"], c["state"], c["reason"]) for c in claims["open"]] == [
        (forged.tx_hash, "disputed", "not_found"), (early.tx_hash, "waiting", "not_solid")]
    assert claims["open"][0]["command"] == f"tronenergy-deposits show {forged.tx_hash}"
    html = render(data, base="/tronenergy-ui", today=date(2026, 3, 3), user="ana")
    assert "Not proven on chain: 1 waiting, 1 disputed" in html
    assert f"tronenergy-deposits show {forged.tx_hash}" in html
