"""The client reads a rent_time given as text in ASCII digits only, before anything is sent.

``Decimal("\\u0661")`` is 1: without the rule, an Arabic-Indic "1" bought a one-hour rental.
"""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import pytest

from airflow_provider_tronenergy.client import ValidationError
from support.control import Control

OTHER_DIGITS = [
    pytest.param("\u0661", id="arabic-indic-1"),
    pytest.param("\uff11", id="fullwidth-1"),
    pytest.param("\u0967", id="devanagari-1"),
    pytest.param("1e0", id="exponent"),
    pytest.param("+1", id="plus-sign"),
]


@pytest.mark.parametrize("rent_time", OTHER_DIGITS)
def test_purchase_with_rent_time_in_other_digits_sends_nothing(
        api: Any, control: Control, rent_time: str) -> None:
    target = control.activated()
    with pytest.raises(ValidationError) as info:
        api.buy_energy(target, 65000, rent_time)
    assert info.value.field == "rent_time"
    assert "ASCII digits" in str(info.value)
    assert [o for o in control.orders() if o["target_address"] == target] == []


@pytest.mark.parametrize("rent_time", OTHER_DIGITS)
def test_price_with_rent_time_in_other_digits_is_refused(api: Any, rent_time: str) -> None:
    with pytest.raises(ValidationError) as info:
        api.get_price(rent_time)
    assert info.value.field == "rent_time"


@pytest.mark.parametrize(("spelling", "hours"), [
    (" 1 ", Decimal("1")), ("1.0", Decimal("1")), ("0.25", Decimal("0.25")),
    (0.25, Decimal("0.25")), (1, Decimal("1")), (Decimal("24.00"), Decimal("24")),
])
def test_ascii_and_numeric_rent_times_still_buy(client: Any, control: Control, spelling: Any,
                                                hours: Decimal) -> None:
    target = control.activated()
    purchase = client.buy_energy(target, 32000, spelling)
    recorded = next(o for o in control.orders() if o["order_id"] == purchase.order_id)
    assert Decimal(str(recorded["rent_time"])) == hours
    # Leave no pending order behind: its charge would land in a later test's balance.
    deadline = time.monotonic() + 10
    while not client.get_order(purchase.order_id).status.is_terminal():
        assert time.monotonic() < deadline
        time.sleep(0.01)
