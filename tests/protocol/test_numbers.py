"""Numbers in text: the one rule a token's units are shown by."""

from __future__ import annotations

import pytest

from tronenergy_protocol.numbers import units_text


def test_units_are_shown_exactly_in_its_own_decimals():
    assert units_text(1, 18) == "0.000000000000000001"
    assert units_text(10 ** 40 - 1, 18) == "9999999999999999999999.999999999999999999"
    assert units_text(10 ** 20 + 1, 18) == "100.000000000000000001"
    assert units_text(1_500_000, 6) == "1.5"
    assert (units_text(7, 0), units_text(0, 6), units_text(300, 2)) == ("7", "0", "3")
    with pytest.raises(ValueError, match="negative"):
        units_text(1, -1)
    assert units_text(-1_500_000, 6) == "-1.5"
    assert units_text(2 ** 256 - 1, 18).replace(".", "") == str(2 ** 256 - 1)
