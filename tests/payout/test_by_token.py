"""A batch's figures per token, from a real payout journal: amounts exact in each token's
own units (18 decimals, 40 digits), two tokens never added together, energy charged per
contract, TRX burned by kind (a TRX payout's account creation apart), explorer pages."""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.node.tokens import Token
from airflow_provider_tronenergy.payout.by_token import by_token, fee_split
from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.payout.receipts import batch_result
from airflow_provider_tronenergy.payout.sent import payouts_sent
from support.journaled import SENDER, journaled, receipt
from tronenergy_protocol.explorer import explorer_of

USDT_CONTRACT = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"  # Nile's
E18 = "TNpHhPpcp1Akxw1E1k57dBpqzr39676yfQ"  # fixed: a parametrize id (xdist workers collect alike)
UNREAD = "TDhRFx5zsT34SBvWhrXkQmNcs5df82bM2A"
NILE = "https://nile.tronscan.org"


@pytest.fixture
def journal(tmp_path):
    journal = PayoutJournal(f"sqlite:///{tmp_path / 'j.db'}")
    yield journal
    journal.close()



@pytest.mark.parametrize(("token", "signatures", "fee", "net_fee", "energy_fee", "expected"), [
    # a TRX payout creating its recipient: getCreateNewAccountFeeInSystemContract (ret.fee)
    # and getCreateAccountFee burned for bandwidth the sender had not staked
    ("TRX", 1, 1_100_000, 100_000, 0, {"bandwidth": 100_000, "account_creation": 1_000_000}),
    ("TRX", 2, 2_100_000, 100_000, 0, {"bandwidth": 100_000, "other": 2_000_000}),  # multi-sign
    ("USDT", 1, 13_345_000, 345_000, 13_000_000, {"energy": 13_000_000, "bandwidth": 345_000}),
    (E18, 2, 1_345_000, 345_000, 0, {"bandwidth": 345_000, "other": 1_000_000}),
    ("USDT", 1, 13_345_000, 345_000, None, {"bandwidth": 345_000, "unsplit": 13_000_000}),
])
def test_trx_burned_is_split_by_kind_and_the_kinds_add_up_to_the_fee(
        token, signatures, fee, net_fee, energy_fee, expected):
    split = fee_split(receipt(fee, net_fee, energy_fee), token, signatures)
    assert {kind: sun for kind, sun in split.items() if sun} == expected
    assert sum(split.values()) == fee


def test_a_mixed_batch_has_one_line_per_token_never_added_together(journal):
    rows = [("USDT", 1_500_000, receipt(13_345_000, 345_000, 13_000_000, 130_285, 130_285), 1),
            (E18, 10 ** 20 + 1, receipt(345_000, 345_000, 0, 29_650, 0), 1),
            ("USDT", 2_250_000, receipt(345_000, 345_000, 0, 64_285, 0), 1),
            ("TRX", 2_000_000, receipt(1_100_000, 100_000, 0), 1),
            (E18, 1, None, 1),  # sent, no receipt yet
            (UNREAD, 5, receipt(0, 0, 0, 31_000, 0), 1)]
    attempts = journaled(journal, rows)
    tokens = {"USDT": Token("USDT", USDT_CONTRACT, 6, "USDT"),
              E18: Token(E18, E18, 18, "<script>alert(1)</script>")}
    lines = {line["token"]: line for line in by_token(attempts, tokens, explorer_of(NILE))}
    assert list(lines) == ["USDT", E18, "TRX", UNREAD]  # first seen
    usdt, e18, trx, unread = (lines[name] for name in ("USDT", E18, "TRX", UNREAD))
    assert (usdt["amount"], usdt["payouts"], usdt["confirmed"]) == ("3.75", 2, 2)
    assert (e18["amount"], e18["amount_confirmed"]) == ("100.000000000000000002",
                                                        "100.000000000000000001")
    assert (e18["units"], e18["decimals"], e18["symbol"]) == (
        str(10 ** 20 + 2), 18, "<script>alert(1)</script>")
    assert (trx["amount"], trx["symbol"], trx["decimals"]) == ("2", "TRX", 6)
    assert (unread["amount"], unread["units"]) == (None, "5")  # its decimals were not read
    assert [line["energy_charged"] for line in (usdt, e18, trx, unread)] == [
        194_570, 29_650, 0, 31_000]
    assert usdt["trx_spent"] == {"energy": "13", "bandwidth": "0.69", "account_creation": "0",
                                 "other": "0", "unsplit": "0", "total": "13.69"}
    assert (trx["trx_spent"]["account_creation"], trx["trx_spent"]["bandwidth"],
            trx["trx_spent"]["total"]) == ("1", "0.1", "1.1")
    assert usdt["fee_limit"] == {"allowed": "80", "used_max": "0.3250"}
    assert trx["fee_limit"]["allowed"] == "0"  # a TRX transfer has no fee_limit
    assert (usdt["explorer"], e18["explorer"], trx["explorer"]) == (
        f"{NILE}/#/token20/{USDT_CONTRACT}", f"{NILE}/#/token20/{E18}", "")


def test_the_result_and_the_event_carry_each_payouts_token_and_amount(journal):
    rows = [("USDT", 1_500_000, receipt(345_000, 345_000, 0, 64_285), 1),
            (E18, 10 ** 18, receipt(345_000, 345_000, 0, 29_650), 1)]
    attempts = journaled(journal, rows)
    result = batch_result("b", attempts, {a.identity: a.row for a in attempts},
                          {E18: Token(E18, E18, 18, "E18")}, explorer_of(NILE))
    assert [(p["token"], p["amount"], p["units"]) for p in result["payouts"]] == [
        ("USDT", "1.5", "1500000"), (E18, "1", str(10 ** 18))]
    assert [t["amount"] for t in result["tokens"]] == ["1.5", "1"]
    ready = {"sender": SENDER, "recipients": [{"amount": "1.5"}, {"amount": "1"}],
             "energy_bought": 0, "energy_on_hand_used": 0, "energy_cost": "0"}
    event = payouts_sent(ready, result)
    assert event["tokens"] == result["tokens"]
    assert [p["amount"] for p in event["payouts"]] == ["1.5", "1"]
    assert "tokens[].amount" in event["figures"]
    bare = batch_result("b", attempts)  # no token read: a contract's amount is not guessed
    assert [p["amount"] for p in bare["payouts"]] == ["1.5", None]


def test_a_message_names_an_amount_in_its_token_never_guessing_decimals():
    from airflow_provider_tronenergy.payout.by_token import shown_amount

    read = {E18: Token(E18, E18, 18, "E18")}
    assert shown_amount("USDT", "1500000") == "1.5 USDT"
    assert shown_amount("TRX", 2_000_000) == "2 TRX"
    assert shown_amount(E18, 10 ** 18 + 1, read) == f"1.000000000000000001 E18 ({E18})"
    assert shown_amount(E18, 5) == f"5 units of token {E18}"
