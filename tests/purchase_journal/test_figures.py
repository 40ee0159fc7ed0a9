"""A placed purchase's figures as the journal's integer columns: exact sun, never a float."""

from __future__ import annotations

from decimal import Decimal

import pytest

from airflow_provider_tronenergy.purchase_journal.figures import COLUMNS, figures, sun


@pytest.mark.parametrize(("value", "expected"), [
    ("5.85", 5_850_000), ("0.000001", 1), (Decimal("13.1"), 13_100_000), (2, 2_000_000),
    ("100000000000", 100_000_000_000_000_000), (None, None), ("", None),
    ("not a number", None), ("NaN", None), (1.5, None), (True, None),
])
def test_trx_in_sun_exactly_or_none(value, expected):
    assert sun(value) == expected


def test_a_smart_buy_that_activated_splits_out_the_activation():
    assert figures({"cost": "6.995", "energy_amount": 131_000, "burn_cost": "13.1",
                    "activated": True, "quote": {"activation_cost": "1.1"}}) == {
        "energy": 131_000, "cost_sun": 6_995_000, "burn_sun": 13_100_000,
        "activation_sun": 1_100_000}
    # No quote: the service's activation price (the documented one).
    assert figures({"cost": "6.995", "activated": True})["activation_sun"] == 1_100_000
    assert figures({"cost": "2.925", "energy_amount": 65_000, "burn_cost": None,
                    "activated": False}) == {"energy": 65_000, "cost_sun": 2_925_000,
                                             "burn_sun": None, "activation_sun": None}


def test_no_result_no_figures():
    assert figures(None) == dict.fromkeys(COLUMNS) == figures({})
