"""TronPayoutOperator in real Airflow (dag.test()) against the sandbox chain.

The sandbox is the service and the TRON node; a funded key signs through a
``tron_signer`` connection. Everything is counted on the chain: one successful
transfer per payout, and nothing at all when the input is bad.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from payouts import DAGS
from tronpy.keys import PrivateKey

from support.sandbox import SANDBOX_USDT, node_connection_json
from support.signers import signing_wallet

pytestmark = pytest.mark.usefixtures("node_conn")


@pytest.fixture
def journal(payout_journal):
    """The payout journal (the purchase journal's database) the operators open."""
    return payout_journal


@pytest.fixture
def wallet(control, monkeypatch):
    """A hot wallet with 10,000 USDT, TRX and staked energy, and its key as the signer."""
    return signing_wallet(control, monkeypatch, "10000")


def sent_from(control, address: str) -> list[dict[str, Any]]:
    return list(control.call("GET", f"/chain/transactions?owner={address}"))


def successes(control, address: str) -> Counter[str]:
    return Counter(t["to"] for t in sent_from(control, address)
                   if t["receipt"]["receipt"].get("result") == "SUCCESS")


@pytest.mark.parametrize("dag_id", ["te_payouts", "te_payouts_deferrable"])
def test_a_batch_is_sent_once_and_a_rerun_sends_nothing(run_dag, control, wallet, journal,
                                                        dag_id):
    _, sender = wallet
    recipients = [control.wallet(trx="1", usdt="1") for _ in range(4)]
    rows = [{"recipient": r, "amount": "12.5", "payout_id": f"{dag_id}-{i}"}
            for i, r in enumerate(recipients)]
    out = run_dag(DAGS[dag_id], payouts=rows, sender=sender, batch_id=f"{dag_id}-1")
    state, tries, result = out["send"]
    assert (out["__run__"], state, tries) == ("success", "success", 1), out
    assert result["states"] == {"confirmed": 4}
    assert [p["recipient"] for p in result["payouts"]] == recipients
    assert all(p["energy_from_stake"] == p["energy_total"] > 0 for p in result["payouts"])
    assert result["totals"]["energy_burned"] == 0 and result["totals"]["transactions"] == 4
    again = run_dag(DAGS[dag_id], payouts=rows, sender=sender, batch_id=f"{dag_id}-1")
    assert again["send"][0] == "success" and again["send"][2]["states"] == {"confirmed": 4}
    assert successes(control, sender) == Counter(recipients)
    assert len(sent_from(control, sender)) == 4


BAD = [
    ("invalid address", lambda r: [{"recipient": "TXYZnotanaddress", "amount": "1"}], {},
     "recipient"),
    ("duplicate ids", lambda r: [{"recipient": r, "amount": "1", "payout_id": "p"},
                                 {"recipient": r, "amount": "2", "payout_id": "p"}], {},
     "also row 0"),
    ("seven decimals", lambda r: [{"recipient": r, "amount": "1.0000001"}], {},
     "more than 6 decimals"),
    ("over the balance", lambda r: [{"recipient": r, "amount": "10000.01"}], {},
     "tokens: "),
]


@pytest.mark.parametrize("case, rows, extra, message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_fails_before_anything_is_signed_and_is_not_retried(
        run_dag, control, wallet, journal, capfd, case, rows, extra, message):
    _, sender = wallet
    recipient = control.wallet(trx="1", usdt="1")
    out = run_dag(DAGS["te_payouts"], payouts=rows(recipient), sender=sender,
                  batch_id="bad-1", **extra)
    assert out["send"][:2] == ("failed", 1), out  # the DAG retries once: it did not
    assert message in capfd.readouterr().out
    assert sent_from(control, sender) == [] and journal.recent() == []


def test_a_signer_for_another_address_is_refused_before_signing(run_dag, control, wallet,
                                                                journal, capfd, monkeypatch):
    _, sender = wallet
    other = PrivateKey.random()
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": other.hex()}))
    recipient = control.wallet(trx="1", usdt="1")
    out = run_dag(DAGS["te_payouts"], payouts=[{"recipient": recipient, "amount": "1"}],
                  sender=sender, batch_id="signer-1")
    assert out["send"][:2] == ("failed", 1)
    assert f"signs for {other.public_key.to_base58check_address()}, not the sender" \
        in capfd.readouterr().out
    assert sent_from(control, sender) == [] and journal.recent() == []


def test_energy_short_and_no_burn_allowed_names_every_shortfall(run_dag, control, journal,
                                                                capfd, monkeypatch):
    key = PrivateKey.random()
    sender = key.public_key.to_base58check_address()
    control.wallet(sender, trx="0.5", usdt="5")
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    recipient = control.wallet(trx="1", usdt="1")
    out = run_dag(DAGS["te_payouts"], payouts=[{"recipient": recipient, "amount": "6"}],
                  sender=sender, batch_id="short-1")
    assert out["send"][:2] == ("failed", 1)
    log = capfd.readouterr().out
    for what in ("tokens: ", "energy: the batch needs", "over max_burn_trx"):
        assert what in log
    assert sent_from(control, sender) == []


def test_the_key_never_reaches_logs_xcom_or_trigger_kwargs(run_dag, control, wallet, journal,
                                                           capfd, caplog):
    key, sender = wallet
    recipient = control.wallet(trx="1", usdt="1")
    out = run_dag(DAGS["te_payouts_deferrable"], payouts=[{"recipient": recipient,
                                                           "amount": "3"}],
                  sender=sender, batch_id="secret-1")
    assert out["send"][0] == "success"
    from airflow.models.trigger import Trigger
    from airflow.utils.session import create_session

    with create_session() as session:
        kwargs = [json.dumps(t.kwargs, default=str) for t in session.query(Trigger).all()]
    captured = capfd.readouterr()
    for text in [captured.out, captured.err, caplog.text, json.dumps(out, default=str),
                 *kwargs, *(json.dumps(a.to_dict()) for a in journal.recent())]:
        assert key.hex() not in text and key.hex().upper() not in text


def out_of_energy_on_chain(run_dag, control, sandbox, conf: dict[str, Any]) -> dict[str, Any]:
    """Run ``conf``'s batch (one first transfer) so that it ends ``OUT_OF_ENERGY`` on chain:
    signed while no block comes, then USDT's energy factor rises before the block takes it,
    so the chain charges more than the fee_limit sized when signing lets it use. (A
    fee_limit cap below what a transfer needs now is refused before signing.)"""
    from airflow_provider_tronenergy.node.client import TronNodeClient
    from support.chain import USDT
    from support.waiting import wait_until

    def factor(value: int) -> None:
        control.post("/chain/contract", {"energy_factor": value})
        with TronNodeClient(sandbox.root_url, usdt_contract=USDT) as node:
            wait_until(lambda: (info := node.get_contract_info()) is not None
                       and info.energy_factor == value, timeout=15)

    control.post("/chain/pause")
    try:
        signed = run_dag(DAGS["te_payouts"], **conf, confirm_timeout_seconds=1)
        control.post("/chain/contract", {"energy_factor": 100_000})
    finally:
        control.post("/chain/resume")
    try:
        wait_until(lambda: len(sent_from(control, conf["sender"])) == 1, timeout=30)
    finally:
        factor(34_000)
    [sent] = sent_from(control, conf["sender"])
    assert sent["receipt"]["receipt"]["result"] == "OUT_OF_ENERGY"
    return signed


def test_a_payout_failed_on_chain_waits_for_a_person_then_is_paid_once(
        run_dag, sandbox, control, journal, capfd, monkeypatch):
    from airflow_provider_tronenergy.payout.cli import main as payouts_cli

    key = PrivateKey.random()
    sender = key.public_key.to_base58check_address()
    control.wallet(sender, trx="100", usdt="100")
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    recipient = control.wallet(trx="1")  # a first USDT transfer: about 130,000 energy
    conf = {"payouts": [{"recipient": recipient, "amount": "5", "payout_id": "fail-1"}],
            "sender": sender, "batch_id": "fail-1", "max_burn_trx": "50"}
    out_of_energy_on_chain(run_dag, control, sandbox, conf)
    out = run_dag(DAGS["te_payouts"], **conf)
    assert out["send"][:2] == ("failed", 1)  # not retried: a person decides
    log = capfd.readouterr().out
    assert "FAILED on chain" in log and "OUT_OF_ENERGY" in log
    assert "tronenergy-payouts resolve IDENTITY --resend" in log
    again = run_dag(DAGS["te_payouts"], **conf)  # a new run signs nothing by itself
    assert again["send"][:2] == ("failed", 1)
    assert len(sent_from(control, sender)) == 1
    assert payouts_cli(["resolve", "id:fail-1", "--resend", "--reason", "fee limit raised",
                        "--by", "ops"]) == 0
    conf["max_fee_limit_trx"] = "100"
    paid = run_dag(DAGS["te_payouts"], **conf)
    assert paid["send"][0] == "success" and paid["send"][2]["states"] == {"confirmed": 1}
    assert successes(control, sender) == Counter([recipient])
    results = [t["receipt"]["receipt"]["result"] for t in sent_from(control, sender)]
    assert results == ["OUT_OF_ENERGY", "SUCCESS"]


def test_a_row_without_an_estimate_is_sized_by_the_node_when_the_chain_charges_more(
        run_dag, sandbox, control, wallet, journal, capfd):
    """Rows given without the preparation's ``energy`` had their fee_limit sized at a constant
    131,000: after USDT's energy factor rose, a first transfer ended OUT_OF_ENERGY."""
    from airflow_provider_tronenergy.node.client import TronNodeClient
    from support.chain import USDT
    from support.waiting import wait_until

    _, sender = wallet
    recipient = control.wallet(trx="1")  # a first USDT transfer
    control.post("/chain/contract", {"energy_factor": 50_000})
    try:
        with TronNodeClient(sandbox.root_url, usdt_contract=USDT) as node:
            wait_until(lambda: (node.estimate_transfer_energy(sender, recipient, 1) or 0)
                       > 131_000 * 1.2, timeout=10)
            estimate = node.estimate_transfer_energy(sender, recipient, 1)
        out = run_dag(DAGS["te_payouts"], payouts=[{"recipient": recipient, "amount": "2"}],
                      sender=sender, batch_id="factor-1")
    finally:  # back in force before the next test reads an estimate
        control.post("/chain/contract", {"energy_factor": 34_000})
        with TronNodeClient(sandbox.root_url, usdt_contract=USDT) as node:
            wait_until(lambda: (node.estimate_transfer_energy(sender, recipient, 1) or 0)
                       <= 131_000, timeout=10)
    state, _, result = out["send"]
    assert state == "success" and result["states"] == {"confirmed": 1}, out
    assert result["payouts"][0]["energy_total"] == estimate
    assert successes(control, sender) == Counter([recipient])


def test_a_holder_emptied_since_its_estimate_is_paid_not_out_of_energy(
        run_dag, sandbox, control, wallet, journal):
    """A row carries its preparation's estimate for a holder (64,285); the recipient then
    sends all its USDT away (an exchange sweeping its deposit address), so the transfer
    writes a new slot (130,285). Before, the fee_limit covered 64,285 x 1.2 and the transfer
    ended OUT_OF_ENERGY on chain; every fee_limit now covers a transfer to an emptied
    address, read from the node when signing."""
    from airflow_provider_tronenergy.node.client import TronNodeClient
    from support.chain import USDT

    _, sender = wallet
    recipient = control.wallet(trx="1", usdt="5")
    with TronNodeClient(sandbox.root_url, usdt_contract=USDT) as node:
        prepared = node.estimate_transfer_energy(sender, recipient, 1)
        control.post(f"/addresses/{recipient}/balances", {"usdt": "0"})  # swept
        now = node.estimate_transfer_energy(sender, recipient, 1)
    assert prepared is not None and now is not None and now > prepared * 1.2
    out = run_dag(DAGS["te_payouts"], sender=sender, batch_id="swept-1", payouts=[
        {"recipient": recipient, "amount": "2", "energy": prepared}])
    state, _, result = out["send"]
    assert state == "success" and result["states"] == {"confirmed": 1}, out
    assert result["payouts"][0]["energy_total"] == now
    [attempt] = journal.recent()
    assert attempt.fee_limit_sun is not None and attempt.fee_limit_sun >= now * 100
    assert successes(control, sender) == Counter([recipient])


def test_a_node_that_never_answers_fails_the_try_retryably_and_names_its_answer(
        run_dag, control, wallet, journal, capfd):
    _, sender = wallet
    recipient = control.wallet(trx="1", usdt="1")
    control.fault(kind="error", path="/wallet/broadcasthex", status=503)
    try:
        out = run_dag(DAGS["te_payouts"], payouts=[{"recipient": recipient, "amount": "2"}],
                      sender=sender, batch_id="silent-1", confirm_timeout_seconds=2)
    finally:
        control.clear_faults()
    assert out["send"][:2] == ("failed", 2)  # retried: a retry follows the same transaction
    log = capfd.readouterr().out
    assert "still in flight after the wait" in log and "the node said no answer" in log
    [attempt] = journal.recent()
    assert attempt.state.value == "signed" and attempt.attempt == 1  # one signature only
    assert sent_from(control, sender) == []


def test_a_node_whose_head_is_ahead_of_the_worker_fails_the_try_retryably_signing_nothing(
        run_dag, control, wallet, journal, capfd):
    """Issue 33: a head an hour ahead of the worker's clock (beyond the templated tolerance)
    is not believed: nothing is signed on it, and the try fails retryably."""
    import time

    _, sender = wallet
    recipient = control.wallet(trx="1", usdt="1")
    control.fault(kind="tamper", path="/wallet/getnowblock", patch={
        "block_header.raw_data.timestamp": str(int(time.time() * 1000) + 3600 * 1000)})
    try:
        out = run_dag(DAGS["te_payouts"], payouts=[{"recipient": recipient, "amount": "2"}],
                      sender=sender, batch_id="ahead-1", clock_tolerance_seconds="30")
    finally:
        control.clear_faults()
    assert out["send"][:2] == ("failed", 2)  # retried
    log = capfd.readouterr().out
    assert "not believed" in log and "tolerance 30 s" in log
    assert journal.recent() == [] and sent_from(control, sender) == []


@pytest.mark.parametrize("dag_id", ["te_payouts", "te_payouts_deferrable"])
def test_a_payout_in_flight_under_another_batch_is_followed_and_paid_once(
        run_dag, control, wallet, journal, capfd, dag_id):
    """The same payout_id in a second batch while the first batch's transaction is in flight
    (a batch re-run under a new batch id): the second signs nothing and follows the first's
    transaction to its receipt. Before, its watch followed only its own batch and the task
    failed until the first batch's run settled it."""
    _, sender = wallet
    row = {"recipient": control.wallet(trx="1", usdt="1"), "amount": "2",
           "payout_id": f"{dag_id}-x"}
    control.fault(kind="error", path="/wallet/broadcasthex", status=503)
    try:
        first = run_dag(DAGS["te_payouts"], payouts=[row], sender=sender,
                        batch_id=f"{dag_id}-first", confirm_timeout_seconds=1)
    finally:
        control.clear_faults()
    assert first["send"][0] == "failed"  # signed and journaled, never acknowledged
    extra = {"recipient": control.wallet(trx="1", usdt="1"), "amount": "3"}
    second = run_dag(DAGS[dag_id], payouts=[extra, row], sender=sender,
                     batch_id=f"{dag_id}-second")
    state, tries, result = second["send"]
    assert (state, tries, result["states"]) == ("success", 1, {"confirmed": 2}), second
    assert [(p["row"], p["recipient"]) for p in result["payouts"]] == [
        (0, extra["recipient"]), (1, row["recipient"])]  # its row here, not the first's
    assert f"in flight under batch(es) {dag_id}-first: following those too" \
        in capfd.readouterr().out
    signed = {a.identity: a for a in journal.recent()}
    attempt = signed[f"id:{dag_id}-x"]  # one signature, the first batch's
    assert (len(signed), attempt.batch_id, attempt.attempt, attempt.state.value) == (
        2, f"{dag_id}-first", 1, "confirmed")
    again = run_dag(DAGS["te_payouts"], payouts=[row], sender=sender,
                    batch_id=f"{dag_id}-first")
    assert again["send"][0] == "success" and again["send"][2]["states"] == {"confirmed": 1}
    assert successes(control, sender) == Counter([row["recipient"], extra["recipient"]])
    assert len(sent_from(control, sender)) == 2


@pytest.fixture
def ten_usdt(control, monkeypatch):
    """A hot wallet holding 10 USDT (and plenty of TRX and staked energy) as the signer."""
    return signing_wallet(control, monkeypatch, "10")[1]


def pay(run_dag, sender: str, batch_id: str, recipient: str, amount: str,
        **conf: Any) -> dict[str, Any]:
    return run_dag(DAGS["te_payouts"], sender=sender, batch_id=batch_id, payouts=[
        {"recipient": recipient, "amount": amount, "payout_id": f"{batch_id}-0"}], **conf)


def test_a_batch_payable_only_if_transfers_in_flight_fail_signs_nothing_and_waits(
        run_dag, control, journal, ten_usdt, capfd):
    """The sender's transfer accepted and in no block yet still holds its tokens. Before,
    a second batch counted on them: it signed, and once the first executed, its transfer
    REVERTed on chain (burning the energy it used). Now it signs nothing and fails the try
    retryably; the first is paid once and nothing of the second reaches the chain."""
    sender, first_to, second_to = ten_usdt, control.wallet(usdt="1"), control.wallet(usdt="1")
    control.post("/chain/pause")
    try:
        first = pay(run_dag, sender, "inflight-1", first_to, "6", confirm_timeout_seconds=1)
        assert first["send"][0] == "failed"  # accepted; no block comes while paused
        second = pay(run_dag, sender, "inflight-2", second_to, "5", confirm_timeout_seconds=1)
    finally:
        control.post("/chain/resume")
    assert second["send"][:2] == ("failed", 2), second  # a wait: retried, not refused
    log = capfd.readouterr().out
    for what in ("payable only if payouts in flight fail (nothing was signed): 1 transfer(s)",
                 "(batch(es) inflight-1), sending 6 USDT", "tokens: "):
        assert what in log
    assert [a.batch_id for a in journal.recent()] == ["inflight-1"]
    again = pay(run_dag, sender, "inflight-1", first_to, "6")
    assert again["send"][0] == "success" and again["send"][2]["states"] == {"confirmed": 1}
    assert successes(control, sender) == Counter([first_to])
    assert len(sent_from(control, sender)) == 1


def test_a_transfer_a_block_already_holds_is_not_counted_against_the_balance_twice(
        run_dag, control, journal, ten_usdt):
    """In a block (the balance shows it) though no watch recorded it yet: the pre-flight
    steps its batch's watch first, so 10 - 3 leaves 7 for a batch of 5, not 4."""
    from support.waiting import wait_until

    sender, first_to, second_to = ten_usdt, control.wallet(usdt="1"), control.wallet(usdt="1")
    control.post("/chain/pause")
    try:
        first = pay(run_dag, sender, "landed-1", first_to, "3", confirm_timeout_seconds=1)
    finally:
        control.post("/chain/resume")
    assert first["send"][0] == "failed"
    wait_until(lambda: successes(control, sender) == Counter([first_to]), timeout=30)
    assert [a.state.value for a in journal.recent()] == ["sent"]
    second = pay(run_dag, sender, "landed-2", second_to, "5")
    assert second["send"][0] == "success", second
    states = {a.batch_id: a.state.value for a in journal.recent()}
    # landed-1's receipt is recorded once its block is solidified, by whichever watch
    # steps it next (payouts confirm on solidified blocks): sent or confirmed, never twice
    assert states["landed-2"] == "confirmed" and states["landed-1"] in {"sent", "confirmed"}
    assert successes(control, sender) == Counter([first_to, second_to])


def test_a_batch_links_its_senders_page_even_through_a_deferred_wait(run_dag, control, wallet,
                                                                     journal, sandbox,
                                                                     monkeypatch):
    """The sandbox is a custom chain: its explorer is the one its connection names."""
    from support.links import ui_extra_links

    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", node_connection_json(
        sandbox, explorer_url="https://scan.example"))
    _, sender = wallet
    rows = [{"recipient": control.wallet(trx="1", usdt="1"), "amount": "1"} for _ in range(2)]
    out = run_dag(DAGS["te_payouts_deferrable"], payouts=rows, sender=sender,
                  batch_id="links-1")
    assert out["send"][0] == "success" and out["send"][2]["states"] == {"confirmed": 2}
    assert ui_extra_links("te_payouts_deferrable", out["__run_id__"], "send") == {
        "TronScan: payouts": f"https://scan.example/#/address/{sender}",
        "TronScan: token": f"https://scan.example/#/token20/{SANDBOX_USDT}"}


def test_a_payout_failed_on_chain_keeps_its_link_on_the_nodes_explorer(
        run_dag, control, journal, sandbox, monkeypatch):
    """The node connection's explorer_url (Nile here); the task failed, the link stays."""
    from support.links import ui_extra_links

    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", node_connection_json(
        sandbox, explorer_url="https://nile.tronscan.org"))
    key = PrivateKey.random()
    sender = key.public_key.to_base58check_address()
    control.wallet(sender, trx="100", usdt="100")
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": key.hex()}))
    conf = {"payouts": [{"recipient": control.wallet(trx="1"), "amount": "5"}],
            "sender": sender, "batch_id": "links-fail-1", "max_burn_trx": "50"}
    out_of_energy_on_chain(run_dag, control, sandbox, conf)
    out = run_dag(DAGS["te_payouts"], **conf)
    assert out["send"][:2] == ("failed", 1)
    [sent] = sent_from(control, sender)
    assert sent["receipt"]["receipt"]["result"] == "OUT_OF_ENERGY"
    assert ui_extra_links("te_payouts", out["__run_id__"], "send") == {
        "TronScan: payouts": f"https://nile.tronscan.org/#/transaction/{sent['txid']}",
        "TronScan: token": f"https://nile.tronscan.org/#/token20/{SANDBOX_USDT}"}


def test_a_bad_explorer_url_on_the_node_connection_signs_nothing(run_dag, control, wallet,
                                                                 journal, sandbox, monkeypatch,
                                                                 capfd):
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", node_connection_json(
        sandbox, explorer_url="https://nile.tronscan.org/#/transaction/"))
    _, sender = wallet
    out = run_dag(DAGS["te_payouts"], payouts=[{"recipient": control.wallet(trx="1", usdt="1"),
                                                "amount": "1"}],
                  sender=sender, batch_id="links-bad-1")
    assert out["send"][0] == "failed"
    assert "extra explorer_url must not name a page after '#'" in capfd.readouterr().out
    assert sent_from(control, sender) == [] and journal.recent() == []
