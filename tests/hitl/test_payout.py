"""``on_ambiguous="ask"`` for payouts that failed on chain: what each answer records."""

from __future__ import annotations

import pytest
from airflow.providers.common.compat.sdk import AirflowFailException

from airflow_provider_tronenergy.hitl.payout import (
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


def test_a_payout_failed_on_chain_is_put_to_a_person_and_resent_once_on_their_word(
        control, node_conn, monkeypatch, tmp_path):
    """The operator itself (no scheduler): the request written, the answer resumed."""
    import json
    import threading
    import uuid
    from types import SimpleNamespace

    import airflow.sdk.execution_time.hitl as hitl
    from airflow.providers.common.compat.sdk import TaskDeferred
    from tronpy.keys import PrivateKey

    from airflow_provider_tronenergy.hitl.purchase import parks_tasks
    from airflow_provider_tronenergy.node.client import TronNodeClient
    from airflow_provider_tronenergy.operators.payout import TronPayoutOperator
    from support.chain import USDT
    from support.waiting import wait_until

    if parks_tasks():
        from airflow.sdk.exceptions import TaskAwaitingInput as Waiting
    else:
        Waiting = TaskDeferred  # type: ignore[misc,assignment]
    written: list[dict] = []
    monkeypatch.setattr(hitl, "upsert_hitl_detail", lambda **kw: written.append(kw))
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", f"sqlite:///{tmp_path / 'j.db'}")
    key = PrivateKey.random()
    sender = key.public_key.to_base58check_address()
    control.wallet(sender, trx="100", usdt="100")
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    recipient = control.wallet(trx="1")
    op = TronPayoutOperator(task_id="send", payouts=[{"recipient": recipient, "amount": "4",
                                                      "payout_id": "ask-1"}],
                            sender_address=sender, batch_id="ask-1", max_burn_trx="50",
                            on_ambiguous="ask", deferrable=False,
                            tuning={"poll_interval_seconds": "0.5",
                                    "confirm_timeout_seconds": 60})
    ti = SimpleNamespace(dag_id="d", run_id="r", task_id="send", map_index=-1,
                         try_number=1, id=uuid.uuid4())
    context = {"ti": ti, "task_instance": ti}

    def factor_in_force(factor: int) -> None:
        control.post("/chain/contract", {"energy_factor": factor})
        with TronNodeClient(control.sandbox.root_url, usdt_contract=USDT) as node:
            wait_until(lambda: (info := node.get_contract_info()) is not None
                       and info.energy_factor == factor, timeout=15)

    def out_of_energy() -> None:
        # signed at the factor in force; USDT's energy factor rises before the block takes
        # it, so it ends OUT_OF_ENERGY (a fee_limit cap below the need is refused unsigned)
        wait_until(lambda: control.call(
            "GET", f"/chain/transactions?owner={sender}&status=pending"), timeout=30)
        control.post("/chain/contract", {"energy_factor": 100_000})
        control.post("/chain/resume")

    control.post("/chain/pause")
    director = threading.Thread(target=out_of_energy, daemon=True)
    director.start()
    try:
        with pytest.raises(Waiting):
            op.execute(context)
    finally:
        director.join(30)
        control.post("/chain/resume")
        factor_in_force(34_000)
    [request] = written
    assert request["options"] == [RESEND, CANCEL, ABORT]
    assert "id:ask-1" in request["body"] and "OUT_OF_ENERGY" in request["body"]
    result = op.execute_answer(context, answer(RESEND), identities=["id:ask-1"])
    assert result["states"] == {"confirmed": 1}
    on_chain = control.call("GET", f"/chain/transactions?owner={sender}")
    assert [t["receipt"]["receipt"]["result"] for t in on_chain] == ["OUT_OF_ENERGY",
                                                                     "SUCCESS"]
