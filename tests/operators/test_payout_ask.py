"""``on_ambiguous="ask"`` for payouts that failed on chain: what each answer records."""

from __future__ import annotations

import pytest
from airflow.providers.common.compat.sdk import AirflowFailException

from airflow_provider_tronenergy.operators.payout_ask import (
    ABORT,
    CANCEL,
    RESEND,
    PayoutAsker,
    failed_lines,
)
from airflow_provider_tronenergy.payout.journal import Claim, PayoutJournal, PayoutState, Signed

SENDER = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
TO = "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"


@pytest.fixture
def failed(tmp_path):
    journal = PayoutJournal(f"sqlite:///{tmp_path / 'j.db'}")
    [a], _ = journal.claim([Claim("id:p1", None, "b", 0, SENDER, TO, "USDT", 5)], "w1")
    journal.record_signed([Signed(a, "ab" * 32, 10, 1, 1000, {"txID": "ab" * 32})])
    journal.record_outcomes([(journal.batch("b")[0], False, 77, {
        "result": "REVERT", "energy_total": 30000, "trx_burned": "3"})])
    yield journal
    journal.close()


def asker(journal: PayoutJournal) -> PayoutAsker:
    import logging

    return PayoutAsker(journal=journal, log=logging.getLogger("test"), defer=None,
                       ask_timeout=None)


def answer(option: str) -> dict:
    return {"chosen_options": [option], "responded_by_user": {"id": "7", "name": "alice"}}


def test_the_question_shows_each_receipt(failed):
    [line] = failed_lines(failed.batch("b"))
    assert "id:p1" in line and "REVERT" in line and "block 77" in line and "TRX burned 3" in line


@pytest.mark.parametrize("option, state", [(RESEND, PayoutState.RESEND),
                                           (CANCEL, PayoutState.CANCELLED)])
def test_an_answer_is_recorded_in_the_journal(failed, option, state):
    asker(failed).record_answer(answer(option), ["id:p1"])
    [attempt] = failed.history("id:p1")
    assert attempt.state is state and attempt.resolved_by == "alice (Airflow)"


@pytest.mark.parametrize("event", [answer(ABORT), {"error": "timeout"}])
def test_abort_or_no_answer_records_nothing(failed, event):
    with pytest.raises(AirflowFailException):
        asker(failed).record_answer(event, ["id:p1"])
    assert failed.history("id:p1")[0].state is PayoutState.FAILED


def test_a_payout_resolved_meanwhile_is_left_as_it_is(failed):
    failed.resolve("id:p1", resend=False, by="cli")
    asker(failed).record_answer(answer(RESEND), ["id:p1"])
    assert failed.history("id:p1")[0].state is PayoutState.CANCELLED
