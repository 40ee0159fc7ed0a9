"""TronPayoutOperator paying TRC-20 tokens other than USDT, in real Airflow against the
sandbox chain's own tokens: each token's decimals read from its contract, amounts exact at
its smallest unit, a contract without decimals() refused before signing, and a batch mixing
tokens (USDT, TRX and two of the sandbox's) where one token is short: only its rows refused,
the others paid, each once."""

from __future__ import annotations

from typing import Any

import pytest
from payouts import DAGS

from support.sandbox import create_token, set_token_units, token_units
from support.signers import signing_wallet
from tronenergy_protocol.address import random_address

pytestmark = pytest.mark.usefixtures("node_conn")


@pytest.fixture
def journal(payout_journal):
    """The payout journal (the purchase journal's database) the operators open."""
    return payout_journal


def sent_from(control, address: str) -> list[dict[str, Any]]:
    return list(control.call("GET", f"/chain/transactions?owner={address}"))


def test_an_eighteen_decimal_token_is_paid_exactly_once(run_dag, sandbox, control, monkeypatch,
                                                        journal):
    _, sender = signing_wallet(control, monkeypatch, "0")
    e18 = create_token(sandbox, symbol="E18", decimals=18)
    set_token_units(sandbox, e18, sender, 10 ** 21)
    holder, newcomer = random_address(), random_address()
    set_token_units(sandbox, e18, holder, 1)
    rows = [{"recipient": holder, "amount": "0.000000000000000001", "token": e18,
             "payout_id": "e18-a"},
            {"recipient": newcomer, "amount": "100", "token": e18, "payout_id": "e18-b"}]
    out = run_dag(DAGS["te_payouts"], payouts=rows, sender=sender, batch_id="e18-1")
    state, tries, result = out["send"]
    assert (state, tries) == ("success", 1), out
    assert result["states"] == {"confirmed": 2}
    assert (token_units(sandbox, e18, holder), token_units(sandbox, e18, newcomer)) == (
        2, 10 ** 20)
    assert [a.token for a in journal.batch("e18-1")] == [e18, e18]
    again = run_dag(DAGS["te_payouts"], payouts=rows, sender=sender, batch_id="e18-1")
    assert again["send"][0] == "success"
    assert len(sent_from(control, sender)) == 2
    assert token_units(sandbox, e18, newcomer) == 10 ** 20


@pytest.mark.parametrize("case", ["nineteenth decimal", "no decimals()"])
def test_a_token_amount_or_contract_it_cannot_pay_is_refused_before_signing(
        run_dag, sandbox, control, monkeypatch, journal, capfd, case):
    _, sender = signing_wallet(control, monkeypatch, "100")
    if case == "no decimals()":
        contract = create_token(sandbox, symbol="NODEC", decimals=None)
        amount, message = "1", f"token contract {contract} answers no decimals()"
    else:
        contract = create_token(sandbox, symbol="E18", decimals=18)
        amount, message = "0.0000000000000000001", "has more than 18 decimals"
    set_token_units(sandbox, contract, sender, 10 ** 30)
    rows = [{"recipient": random_address(), "amount": "1"},
            {"recipient": random_address(), "amount": amount, "token": contract}]
    out = run_dag(DAGS["te_payouts"], payouts=rows, sender=sender, batch_id="refused-1")
    assert out["send"][:2] == ("failed", 1), out
    assert message in capfd.readouterr().out
    assert sent_from(control, sender) == [] and journal.recent() == []


def test_a_mixed_batch_refuses_only_the_short_tokens_rows_and_a_rerun_pays_each_once(
        run_dag, sandbox, control, monkeypatch, journal, capfd):
    _, sender = signing_wallet(control, monkeypatch, "100")
    e18 = create_token(sandbox, symbol="E18", decimals=18)
    short = create_token(sandbox, symbol="SHORT", decimals=2)
    set_token_units(sandbox, e18, sender, 5 * 10 ** 18)
    set_token_units(sandbox, short, sender, 100)  # 1.00 SHORT; the batch sends 3.00
    usdt_to, e18_to = [random_address(), random_address()], random_address()
    short_to, trx_to = [random_address(), random_address()], random_address()
    rows = ([{"recipient": r, "amount": "1.5", "payout_id": f"mix-usdt-{i}"}
             for i, r in enumerate(usdt_to)]
            + [{"recipient": e18_to, "amount": "2.000000000000000001", "token": e18,
                "payout_id": "mix-e18"}]
            + [{"recipient": r, "amount": "1.5", "token": short, "payout_id": f"mix-short-{i}"}
               for i, r in enumerate(short_to)]
            + [{"recipient": trx_to, "amount": "1", "token": "TRX", "payout_id": "mix-trx"}])
    out = run_dag(DAGS["te_payouts"], payouts=rows, sender=sender, batch_id="mix-1")
    assert out["send"][:2] == ("failed", 1), out  # refused rows: a person tops up, no retry
    printed = capfd.readouterr().out
    assert "were not signed, their token's balance short" in printed and short in printed
    assert token_units(sandbox, e18, e18_to) == 2 * 10 ** 18 + 1
    assert [token_units(sandbox, short, r) for r in short_to] == [0, 0]
    assert {a.identity for a in journal.batch("mix-1")} == {
        "id:mix-usdt-0", "id:mix-usdt-1", "id:mix-e18", "id:mix-trx"}
    assert len(sent_from(control, sender)) == 4

    set_token_units(sandbox, short, sender, 300)
    again = run_dag(DAGS["te_payouts"], payouts=rows, sender=sender, batch_id="mix-1")
    state, _, result = again["send"]
    assert state == "success" and result["states"] == {"confirmed": 6}, again
    assert [token_units(sandbox, short, r) for r in short_to] == [150, 150]
    assert token_units(sandbox, e18, e18_to) == 2 * 10 ** 18 + 1
    assert len(sent_from(control, sender)) == 6
