"""Operator parameter readers and the ASCII-number rule they share (protocol.numbers)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from airflow_provider_tronenergy.client import ValidationError
from airflow_provider_tronenergy.templated import as_decimal, as_flag, as_int
from tronenergy_protocol.numbers import NumberError, parse_decimal, parse_int

NOT_ASCII = [
    "\u0666\u0665\u0660\u0660\u0660",  # Arabic-Indic 65000
    "\u06f6\u06f5\u06f0\u06f0\u06f0",  # Extended Arabic-Indic (Persian) 65000
    "\uff16\uff15\uff10\uff10\uff10",  # full-width 65000
    "\u096c\u096b\u0966\u0966\u0966",  # Devanagari 65000
    "6\u0665000",  # one foreign digit among ASCII ones
    "\u00b2",  # superscript two: isdigit() is True, int() raises
]


@pytest.mark.parametrize("text", NOT_ASCII)
def test_counts_and_amounts_in_other_digits_are_refused(text: str) -> None:
    with pytest.raises(ValidationError, match="ASCII digits") as info:
        as_int(text, "energy_amount")
    assert info.value.field == "energy_amount"
    assert "is not ASCII" in str(info.value)  # says which character is wrong
    with pytest.raises(ValidationError, match="ASCII digits"):
        as_decimal(text, "max_order_trx")
    with pytest.raises(NumberError):
        parse_int(text, "count")
    with pytest.raises(NumberError):
        parse_decimal(text, "amount")


@pytest.mark.parametrize("text", ["1e3", "1E3", "NaN", "nan", "Infinity", "-Infinity", "inf",
                                  "sNaN", "1_000", "+5", "0x10", "1,5", "", " ", ".", "-",
                                  "1.2.3", "1" * 101])
def test_amount_text_must_be_plain_decimal(text: str) -> None:
    with pytest.raises(ValidationError) as info:
        as_decimal(text, "max_order_trx")
    assert info.value.field == "max_order_trx"


@pytest.mark.parametrize(("value", "expected"), [
    ("2.925", Decimal("2.925")), (" 10 \n", Decimal("10")), (".5", Decimal("0.5")),
    ("7.", Decimal("7")), ("0", Decimal("0")), (3, Decimal("3")),
    (Decimal("1.10"), Decimal("1.10")), (Decimal("1E+2"), Decimal("100")),
    # Floats as today: through their repr, so 0.1 is exactly 0.1, and 1e-05 is allowed.
    (0.1, Decimal("0.1")), (2.925, Decimal("2.925")), (1e-05, Decimal("0.00001")),
    (10.0, Decimal("10")),
])
def test_as_decimal_accepts(value: Any, expected: Decimal) -> None:
    assert as_decimal(value, "max_order_trx") == expected


@pytest.mark.parametrize("value", [float("nan"), float("inf"), Decimal("NaN"),
                                   Decimal("-Infinity"), True, None, [1], "-1", -0.5])
def test_as_decimal_refuses(value: Any) -> None:
    with pytest.raises(ValidationError):
        as_decimal(value, "max_order_trx")


@pytest.mark.parametrize(("value", "expected"), [
    ("65000", 65000), (" 131000\n", 131000), (65000, 65000), ("-3", -3), ("007", 7)])
def test_as_int_accepts(value: Any, expected: int) -> None:
    assert as_int(value, "count") == expected


@pytest.mark.parametrize("value", ["65000.0", "6.5e4", "65_000", "+3", "", True, 3.0, None])
def test_as_int_refuses(value: Any) -> None:
    with pytest.raises(ValidationError):
        as_int(value, "count")


@pytest.mark.parametrize(("value", "expected"), [
    (True, True), (False, False), (None, False), (1, True), (0, False), ("True", True),
    (" yes ", True), ("ON", True), ("1", True), ("false", False), ("No", False),
    ("off", False), ("0", False), ("", False), ("None", False)])
def test_as_flag_accepts(value: Any, expected: bool) -> None:
    assert as_flag(value, "dry_run") is expected


@pytest.mark.parametrize("value", ["maybe", "Ture", "2", 2, "y", 1.0, [True]])
def test_as_flag_refuses_anything_else(value: Any) -> None:
    """A typo must not silently mean "not a dry run": that would spend for real."""
    with pytest.raises(ValidationError) as info:
        as_flag(value, "dry_run")
    assert info.value.field == "dry_run"


def test_chosen_none_reads_a_written_none_and_keeps_an_empty_value():
    """Where None is a choice (``tron_node_conn_id=None``: no node), only None and the
    ``"None"`` a template renders for it are that choice; an empty value is kept, for the
    caller to refuse."""
    from airflow_provider_tronenergy.templated import chosen_none

    assert [chosen_none(v) for v in (None, "None", " None ", "", "  ", " node ")] == [
        None, None, None, "", "", "node"]
