"""The payout journal on SQLite and PostgreSQL: claims, signed bytes first, races, judging."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from airflow_provider_tronenergy.payout.journal import (
    Attempt,
    Claim,
    PayoutJournal,
    PayoutJournalError,
    PayoutState,
    Signed,
)

SENDER = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
TO = "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"


def claim(identity: str, after: Attempt | None = None, units: int = 1_500_000,
          row: int = 0) -> Claim:
    return Claim(identity=identity, after=after, batch_id="b", row=row, sender=SENDER,
                 recipient=TO, token="USDT", units=units)


def signed(attempt: Attempt, txid: str) -> Signed:
    return Signed(attempt=attempt, txid=txid, expiration_ms=2_000_000, ref_block=7,
                  fee_limit_sun=15_000_000, signed_tx={"txID": txid, "raw_data_hex": "00",
                                                       "signature": ["11"]})


def test_an_attempt_goes_from_claim_to_confirmed_and_keeps_its_bytes(make):
    journal = make()
    [won], lost = journal.claim([claim("id:p1")], "w1")
    assert lost == [] and won.state is PayoutState.SIGNING and won.attempt == 1
    kept, refused = journal.record_signed([signed(won, "aa" * 32)])
    assert len(kept) == 1 and refused == []
    [now] = journal.batch("b")
    assert (now.state, now.txid, now.expiration_ms, now.signed_tx["txID"]) == (
        PayoutState.SIGNED, "aa" * 32, 2_000_000, "aa" * 32)
    assert journal.mark_sent([now]) == 1
    assert journal.record_outcomes([(now, True, 42, {"result": "SUCCESS"})]) == 1
    [done] = journal.batch("b")
    assert (done.state, done.block_number, done.receipt) == (
        PayoutState.CONFIRMED, 42, {"result": "SUCCESS"})
    assert done.units == 1_500_000 and "units" in done.to_dict()


def test_twenty_one_digit_amounts_stay_exact(make):
    journal = make()
    units = 999_999_999_999_999_999_999
    journal.claim([claim("id:big", units=units)], "w1")
    assert journal.latest(["id:big"])["id:big"].units == units


def test_an_eighteen_decimal_tokens_largest_units_stay_exact_with_its_contract(make):
    """10^20 units is 100 of an 18-decimal token, past 2^63; 40 digits is the most a row
    may carry (``rows.MAX_UNIT_DIGITS``)."""
    from dataclasses import replace

    from airflow_provider_tronenergy.payout.rows import MAX_UNIT_DIGITS

    journal, contract = make(), "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
    widest = 10 ** MAX_UNIT_DIGITS - 1
    journal.claim([replace(claim("id:e20", units=10 ** 20), token=contract),
                   replace(claim("id:e40", units=widest, row=1), token=contract)], "w1")
    latest = journal.latest(["id:e20", "id:e40"])
    assert (latest["id:e20"].units, latest["id:e40"].units) == (10 ** 20, widest)
    assert latest["id:e20"].same_payout(SENDER, TO, contract, 10 ** 20)
    assert not latest["id:e20"].same_payout(SENDER, TO, "USDT", 10 ** 20)


def test_of_two_workers_claiming_one_attempt_one_wins(make):
    first, second = make(), make()
    claims = [claim(f"id:p{n}", row=n) for n in range(50)]
    results: dict[str, Any] = {}
    barrier = threading.Barrier(2)

    def run(name: str, journal: PayoutJournal) -> None:
        barrier.wait()
        results[name] = journal.claim(claims, name)

    threads = [threading.Thread(target=run, args=(n, j))
               for n, j in (("w1", first), ("w2", second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    won = [a.identity for name in ("w1", "w2") for a in results[name][0]]
    assert sorted(won) == sorted(c.identity for c in claims)  # each once, by one worker
    assert all(len(first.history(c.identity)) == 1 for c in claims)


def test_a_claim_taken_over_cannot_journal_its_signature(make):
    journal = make()
    [slow], _ = journal.claim([claim("id:p1")], "slow-worker")
    assert journal.take_over([slow], "stale") == 1
    kept, refused = journal.record_signed([signed(slow, "bb" * 32)])
    assert kept == [] and len(refused) == 1  # it must not broadcast what it signed
    assert journal.latest(["id:p1"])["id:p1"].state is PayoutState.ABANDONED


def test_a_txid_another_payout_holds_is_not_journaled(make):
    journal = make()
    won, _ = journal.claim([claim("id:a"), claim("id:b", row=1)], "w1")
    kept, refused = journal.record_signed([signed(won[0], "cc" * 32),
                                           signed(won[1], "cc" * 32)])
    assert len(kept) == 1 and len(refused) == 1
    assert refused[0].attempt.id != kept[0].attempt.id


def test_only_a_failed_payout_can_be_resolved(make):
    journal = make()
    [a], _ = journal.claim([claim("id:p1")], "w1")
    journal.record_signed([signed(a, "dd" * 32)])
    with pytest.raises(PayoutJournalError, match="nothing to resolve"):
        journal.resolve("id:p1", resend=True, by="ops")
    journal.record_outcomes([(journal.batch("b")[0], False, 9, {"result": "REVERT"})])
    resolved = journal.resolve("id:p1", resend=True, by="ops", note="retry")
    assert resolved.state is PayoutState.RESEND and resolved.resolved_by == "ops"
    assert resolved.state.may_sign_next()
    [second], _ = journal.claim([claim("id:p1", after=resolved)], "w1")
    assert second.attempt == 2
    with pytest.raises(PayoutJournalError, match="no payout"):
        journal.resolve("id:nothing", resend=False, by="ops")


def test_judging_moves_only_attempts_still_in_flight(make):
    journal = make()
    [a], _ = journal.claim([claim("id:p1")], "w1")
    journal.record_signed([signed(a, "ee" * 32)])
    [live] = journal.batch("b")
    assert journal.record_outcomes([(live, True, 5, {})]) == 1
    assert journal.mark_expired([live], "late") == 0  # confirmed stays confirmed
    assert journal.batch("b")[0].state is PayoutState.CONFIRMED


def test_a_claim_following_an_attempt_that_can_still_execute_loses(make):
    journal = make()
    [first], _ = journal.claim([claim("id:p1")], "w1")
    # A second worker saw the claim stale, but its worker journaled before the takeover:
    journal.record_signed([signed(first, "ff" * 32)])
    assert journal.take_over([first], "stale") == 0
    won, lost = journal.claim([claim("id:p1", after=first)], "w2")
    assert won == [] and lost == ["id:p1"]  # no second signature while the first can execute
    assert [a.state for a in journal.history("id:p1")] == [PayoutState.SIGNED]


def test_a_claim_following_an_old_read_loses_to_a_newer_attempt(make):
    journal = make()
    [first], _ = journal.claim([claim("id:p1")], "w1")
    won, lost = journal.claim([claim("id:p1")], "w2")  # it read "no attempt yet"
    assert won == [] and lost == ["id:p1"]
    journal.record_signed([signed(first, "ee" * 32)])
    journal.mark_expired(journal.batch("b"), "judged")
    [expired] = journal.batch("b")
    [second], _ = journal.claim([claim("id:p1", after=expired)], "w2")
    assert second.attempt == 2
    won, lost = journal.claim([claim("id:p1", after=expired)], "w3")  # w3's read is old now
    assert won == [] and lost == ["id:p1"]


def test_a_new_journal_is_created_at_version_1_and_a_newer_one_is_refused(make):
    """The first release's payout journal: the receipt figures and the confirmation in
    columns, its indexes and the senders' leases, version 1 recorded; a journal a later
    release migrated is refused, not written to."""
    import sqlalchemy as sa

    from airflow_provider_tronenergy import sqlstore
    from airflow_provider_tronenergy.payout.journal import RECEIPT_COLUMNS
    from airflow_provider_tronenergy.payout.receipts import CONFIRMED_ON

    first = make()
    [judged], _ = first.claim([claim("v1")], "w")
    first.record_signed([signed(judged, "aa" * 32)])
    receipt = {"energy_total": 130_285, "energy_from_stake": 100_285, "energy_burned": 30_000,
               "trx_burned_sun": 3_345_000, "result": "SUCCESS", CONFIRMED_ON: "solidified"}
    first.record_outcomes([(judged, True, 9, receipt)])
    table, versions = first.attempts, first.db.versions
    a = table.c
    with first.db.engine.connect() as conn:
        inspector = sa.inspect(conn)
        assert {f"{table.name}_created", f"{table.name}_sender_block"} <= {
            i["name"] for i in inspector.get_indexes(table.name, schema=table.schema)}
        assert inspector.has_table(first.lease_table.name, schema=first.lease_table.schema)
        assert conn.execute(sa.select(versions.c.version).where(
            versions.c.store == "payout_journal")).scalar() == 1
        assert conn.execute(sa.select(*(a[name] for name in (*RECEIPT_COLUMNS, CONFIRMED_ON)))
                            ).one() == (130_285, 100_285, 30_000, 3_345_000, "solidified")
    with first.db.engine.begin() as conn:  # a later release migrated it
        conn.execute(versions.update().where(versions.c.store == "payout_journal")
                     .values(version=2))
    with pytest.raises(sqlstore.StoreError, match=r"payout_journal schema is version 2, "
                                                  r"newer than this code \(1\)"):
        make().latest(["v1"])


def test_in_flight_is_every_batchs_signed_attempt_of_one_sender(make):
    journal = make()
    done, flying, other = (journal.claim([claim(i)], "w")[0][0] for i in ("p1", "p2", "p3"))
    journal.record_signed([signed(done, "aa" * 32), signed(flying, "bb" * 32)])
    journal.record_outcomes([(done, True, 9, {"result": "SUCCESS"})])
    assert [(a.identity, a.state) for a in journal.in_flight(SENDER)] == [
        ("p2", PayoutState.SIGNED)]  # p1 is judged, p3 never signed
    journal.mark_sent(journal.in_flight(SENDER))
    assert [a.state for a in journal.in_flight(SENDER)] == [PayoutState.SENT]
    assert journal.in_flight(TO) == [] and other.state is PayoutState.SIGNING



def test_in_flight_after_a_block_adds_what_was_judged_in_later_blocks(make):
    """A pre-flight's head was block 8: transfers judged in block 9 or later are counted
    (a lagging node's balance may not show them), those judged up to 8 are not."""
    journal = make()
    early, late, failed, flying = (journal.claim([claim(i)], "w")[0][0]
                                   for i in ("p1", "p2", "p3", "p4"))
    journal.record_signed([signed(a, f"{n:02x}" * 32)
                           for n, a in enumerate((early, late, failed, flying))])
    journal.record_outcomes([(early, True, 8, {}), (late, True, 9, {}),
                             (failed, False, 12, {"result": "REVERT"})])
    assert [a.identity for a in journal.in_flight(SENDER)] == ["p4"]
    assert [(a.identity, a.state) for a in journal.in_flight(SENDER, after_block=8)] == [
        ("p2", PayoutState.CONFIRMED), ("p3", PayoutState.FAILED), ("p4", PayoutState.SIGNED)]
    assert journal.in_flight(TO, after_block=0) == []


def test_a_receipts_fee_is_kept_by_kind_as_the_reports_split_it(make):
    """The kind columns hold :func:`by_token.fee_split` of the attempt as journaled: a TRX
    payout creating its recipient (account creation), the same signed by two keys (the
    multi-sign fee: other, read from its journaled signatures although the caller's copy,
    claimed before signing, has none), a USDT transfer burning energy."""
    import sqlalchemy as sa

    from airflow_provider_tronenergy.payout.by_token import fee_split
    from airflow_provider_tronenergy.payout.receipts import KIND_COLUMNS

    journal = make()
    rows = [("TRX", 1, {"trx_burned_sun": 1_100_000, "bandwidth_burned_sun": 100_000,
                        "energy_burned_sun": 0}),
            ("TRX", 2, {"trx_burned_sun": 2_100_000, "bandwidth_burned_sun": 100_000,
                        "energy_burned_sun": 0}),
            ("USDT", 1, {"trx_burned_sun": 13_345_000, "bandwidth_burned_sun": 345_000,
                         "energy_burned_sun": 13_000_000})]
    won, _ = journal.claim([Claim(f"k{i}", None, "b", i, SENDER, TO, token, 1)
                            for i, (token, _, _) in enumerate(rows)], "w1")
    won.sort(key=lambda a: a.row)
    journal.record_signed([Signed(a, f"{a.row + 1:064x}", 2_000_000, 7, 0, {
        "txID": "x", "signature": ["11"] * rows[a.row][1]}) for a in won])
    assert journal.record_outcomes([(a, True, 9, rows[a.row][2]) for a in won]) == 3
    c = journal.attempts.c
    with journal.db.engine.connect() as conn:
        stored = {r.identity: dict(zip(KIND_COLUMNS, r[1:], strict=True)) for r in conn.execute(
            sa.select(c.identity, *(c[name] for name in KIND_COLUMNS.values())))}
    assert stored == {
        "k0": {"energy": 0, "bandwidth": 100_000, "account_creation": 1_000_000, "other": 0},
        "k1": {"energy": 0, "bandwidth": 100_000, "account_creation": 0, "other": 2_000_000},
        "k2": {"energy": 13_000_000, "bandwidth": 345_000, "account_creation": 0, "other": 0}}
    for a in journal.batch("b"):  # the reports' split of the same attempt, to the sun
        split = fee_split(a.receipt, a.token, a.signatures)
        assert split.pop("unsplit") == 0 and split == stored[a.identity]
