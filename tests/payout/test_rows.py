"""Payout rows are checked all together before anything is signed."""

from __future__ import annotations

from decimal import Decimal

import pytest

from airflow_provider_tronenergy.node.tokens import Token
from airflow_provider_tronenergy.payout.rows import (
    PayoutInputError,
    amount_problem,
    payouts,
    token_decimals,
    units_of,
)
from tronenergy_protocol.address import random_address

TO = "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"


def test_rows_become_exact_units_with_identities():
    rows = payouts([{"recipient": TO, "amount": "12.5"},
                    {"recipient": TO, "amount": 3, "payout_id": "inv-7", "energy": "64285"}],
                   batch_id="2026-11")
    assert [(p.identity, p.units, p.amount, p.energy) for p in rows] == [
        ("row:2026-11:0", 12_500_000, Decimal("12.5"), None),
        ("id:inv-7", 3_000_000, Decimal(3), 64_285)]


@pytest.mark.parametrize("row, message", [
    ({"recipient": "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU8", "amount": "1"}, "recipient"),
    ({"recipient": TO, "amount": "0"}, "must be positive"),
    ({"recipient": TO, "amount": "-1"}, "must be positive"),
    ({"recipient": TO, "amount": "1.0000001"}, "more than 6 decimals"),
    ({"recipient": TO, "amount": 1.5}, "not a float"),
    ({"recipient": TO, "amount": "1e3"}, "no exponent"),
    ({"recipient": TO, "amount": "١"}, "not ASCII"),
    ({"recipient": TO, "amount": "1000000000000000"}, "too large"),
    ({"recipient": TO, "amount": "1", "payout_id": "has space"}, "payout_id"),
    ({"recipient": TO, "amount": "1", "energy": 0}, "energy must be"),
    ({"recipient": TO, "amount": "1", "energy": 5_000_000}, "energy must be"),
    ("not a row", "must be an object"),
])
def test_a_bad_row_is_named(row, message):
    with pytest.raises(PayoutInputError, match=message):
        payouts([{"recipient": TO, "amount": "1"}, row], batch_id="b")


def test_every_bad_row_is_named_at_once_and_duplicate_ids_refused():
    with pytest.raises(PayoutInputError) as info:
        payouts([{"recipient": TO, "amount": "1", "payout_id": "x"},
                 {"recipient": TO, "amount": "2", "payout_id": "x"},
                 {"recipient": "nope", "amount": "1"}], batch_id="b")
    text = str(info.value)
    assert "2 of 3 payouts" in text and "row 1: payout_id 'x' is also row 0's" in text
    assert "row 2: recipient" in text and "nothing was signed" in text


@pytest.mark.parametrize("batch_id", ["", "has space", "x" * 65, None])
def test_a_bad_batch_id_is_refused(batch_id):
    with pytest.raises(PayoutInputError, match="batch_id"):
        payouts([{"recipient": TO, "amount": "1"}], batch_id=batch_id)


def test_only_known_tokens():
    assert token_decimals("USDT") == 6
    with pytest.raises(PayoutInputError, match="unknown token 'USDC'"):
        payouts([{"recipient": TO, "amount": "1"}], batch_id="b", token="USDC")


@pytest.mark.parametrize("amount", ["1.0000000000000000000000000001",
                                    "12345678901234.000000000000000000001"])
def test_a_fraction_below_the_tokens_unit_is_refused_whatever_its_digits(amount):
    """One amount rule for preparation and sender (``rows.amount_problem``): an amount of
    more than 28 digits is judged on its digits, not normalized through the Decimal
    context (which rounded the fraction away: 1 USDT sent for a row asking more)."""
    from airflow_provider_tronenergy.payout import sheet

    with pytest.raises(PayoutInputError, match="more than 6 decimals"):
        payouts([{"recipient": random_address(), "amount": amount}], batch_id="b")
    with pytest.raises(PayoutInputError, match="more than 6 decimals"):
        sheet.parse_payouts([[random_address(), amount]])
    assert sheet.amount_problem is amount_problem


def _eighteen(text: object) -> Token:
    """A token of 18 decimals (the rule is the rows'; tests/node/test_tokens.py reads one
    from the chain)."""
    return Token(CONTRACT, CONTRACT, 18, "E18")


CONTRACT = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"


def test_an_eighteen_decimal_amount_is_exact_to_its_smallest_unit():
    rows = payouts([{"recipient": TO, "amount": "0.000000000000000001", "token": CONTRACT},
                    {"recipient": TO, "amount": "100", "token": CONTRACT},
                    {"recipient": TO, "amount": "123456789012345.123456789012345678",
                     "token": CONTRACT}], batch_id="b", tokens=_eighteen)
    assert [p.units for p in rows] == [1, 10 ** 20, 123456789012345123456789012345678]
    assert {p.token for p in rows} == {CONTRACT}


def test_a_nineteenth_decimal_is_refused_never_rounded():
    with pytest.raises(PayoutInputError, match="row 0: has more than 18 decimals"):
        payouts([{"recipient": TO, "amount": "1.0000000000000000001", "token": CONTRACT}],
                batch_id="b", tokens=_eighteen)


def test_units_beyond_the_journals_forty_digits_are_refused():
    wide = Token(CONTRACT, CONTRACT, 36, None)
    assert units_of(Decimal("9999"), 36) == 9999 * 10 ** 36
    with pytest.raises(PayoutInputError, match="more than 40 digits"):
        payouts([{"recipient": TO, "amount": "99999", "token": CONTRACT}], batch_id="b",
                tokens=lambda _: wide)
