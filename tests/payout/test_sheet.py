"""A payout batch as a run hands it over (airflow_provider_tronenergy.payout.sheet): the CSV
or the rows, every bad row named by line, a run without a batch skipped."""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.errors import NothingToDo
from airflow_provider_tronenergy.payout import sheet
from airflow_provider_tronenergy.payout.rows import MAX_DIGITS, PayoutInputError
from tronenergy_protocol.address import random_address


def test_parse_payouts_reports_every_bad_row_by_line():
    good = random_address()
    rows = [[good, "10.5"], ["T" + "1" * 33, "1"], [good, "-1"], [good], [good, "1.0000001"],
            [], [good, "abc"]]
    with pytest.raises(PayoutInputError) as info:
        sheet.parse_payouts(rows, first_line=2)
    message = str(info.value)
    for line in (3, 4, 5, 6, 8):
        assert f"line {line}:" in message
    assert "line 2:" not in message and "line 7:" not in message


def test_amounts_in_other_digits_are_bad_rows():
    good = random_address()
    with pytest.raises(PayoutInputError) as info:
        sheet.parse_payouts([[good, "١٠.٥"], [good, "1e3"], [good, "10.5"]])
    assert "line 1:" in str(info.value) and "line 2:" in str(info.value)
    assert "line 3:" not in str(info.value)


@pytest.mark.parametrize("amount", ["1" * 28, "1" * 27, "1" * 16, "9" * 60 + ".5",
                                    "0." + "0" * 30 + "1", "1" * 22 + ".1234567"])
def test_an_amount_of_too_many_digits_is_a_bad_row_named_by_line(amount):
    """Issue 22: 28 digits and more raised a bare decimal.InvalidOperation (retried, no line)."""
    good = random_address()
    with pytest.raises(PayoutInputError) as info:
        sheet.parse_payouts([[good, "10"], [good, amount]])
    assert "line 2: amount" in str(info.value) and "line 1:" not in str(info.value)


def test_the_largest_amounts_with_six_decimals_are_exact():
    good = random_address()
    big = "9" * MAX_DIGITS + ".000001"
    assert sheet.parse_payouts([[good, big], [good, "10.5000000"]]) == [
        {"recipient": good, "amount": big}, {"recipient": good, "amount": "10.5"}]


def test_a_recipient_on_several_rows_is_logged_once_with_its_lines(tmp_path, caplog):
    twice, once = random_address(), random_address()
    path = tmp_path / "payouts.csv"
    path.write_text(f"recipient,amount\n{twice},1\n{once},2\n{twice},3\n{twice},4\n")
    with caplog.at_level("WARNING", logger=sheet.__name__):
        assert len(sheet.load_payouts(str(path))) == 4
    [record] = [r for r in caplog.records if r.name == sheet.__name__]
    assert f"recipient {twice} appears 3 times (lines 2, 4, 5)" in record.getMessage()
    assert once not in record.getMessage()


def test_load_payouts_reads_a_csv_with_or_without_header(tmp_path):
    a = random_address()
    with_header = tmp_path / "a.csv"
    with_header.write_text(f"recipient,amount\n{a},1.5\n")
    bare = tmp_path / "b.csv"
    bare.write_text(f"{a},1.5\n{a},x\n")
    expected = [{"recipient": a, "amount": "1.5"}]
    assert sheet.load_payouts(str(with_header)) == expected
    with pytest.raises(PayoutInputError, match="line 2:"):
        sheet.load_payouts(str(bare))
    assert sheet.load_payouts(payouts=[{"recipient": a, "amount": "1.5"}]) \
        == expected
    with pytest.raises(NothingToDo):
        sheet.load_payouts("", [])


def test_a_token_column_is_kept_and_checked_as_far_as_no_node_is_needed(tmp_path):
    a, b, c = random_address(), random_address(), random_address()
    path = tmp_path / "payouts.csv"
    path.write_text(f"recipient,amount,token\n{a},1.5,\n{b},0.000000000000000001,demo\n"
                    f"{c},2,trx\n{a},3,{c}\n")
    assert sheet.load_payouts(str(path)) == [
        {"recipient": a, "amount": "1.5"},
        {"recipient": b, "amount": "0.000000000000000001", "token": "DEMO"},
        {"recipient": c, "amount": "2", "token": "TRX"},
        {"recipient": a, "amount": "3", "token": c}]
    # TRX needs no energy and creates its recipient's account: not checked or activated.
    assert sheet.recipients(sheet.load_payouts(str(path))) == [a, b]
    with pytest.raises(PayoutInputError) as info:
        sheet.parse_payouts([[a, "1.0000001", "TRX"], [a, "1.0000001", "USDT"],
                             [a, "1." + "0" * 36 + "1", "DEMO"], [a, "1", "no such!"],
                             [a, "1", "DEMO", "x"], [a, "1." + "0" * 35 + "1", "DEMO"]])
    message = str(info.value)
    assert all(f"line {n}:" in message for n in (1, 2, 3, 4, 5))
    assert "line 6:" not in message  # 36 decimals: the contract's decimals() decides


def test_rows_with_a_token_key_are_read_like_the_csv():
    a = random_address()
    assert sheet.load_payouts(payouts=[{"recipient": a, "amount": "1", "token": "TRX"},
                                       {"recipient": a, "amount": "2", "token": None}]) == [
        {"recipient": a, "amount": "1", "token": "TRX"}, {"recipient": a, "amount": "2"}]
