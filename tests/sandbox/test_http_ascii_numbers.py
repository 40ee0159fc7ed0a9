"""The sandbox, like the service, reads numbers in text as ASCII digits only: else 40010.

``Decimal()`` accepts any Unicode digit and exponents; the sandbox must refuse what the
service would, or the provider's tests would pass against an emulator more lenient than
the real thing.
"""

from __future__ import annotations

from decimal import Decimal
from urllib.parse import quote

import pytest

from tronenergy_protocol.address import random_address

NOT_ASCII_ONE = [
    pytest.param("\u0661", id="arabic-indic"),
    pytest.param("\uff11", id="fullwidth"),
    pytest.param("\u0967", id="devanagari"),
]


@pytest.mark.parametrize("one", NOT_ASCII_ONE)
def test_price_refuses_rent_time_in_other_digits(signed, one):
    message = signed.get(f"/v1/energy/price?rent_time={quote(one)}").error(40010, 400)
    assert "rent_time" in message


@pytest.mark.parametrize("one", NOT_ASCII_ONE)
def test_monitor_list_refuses_page_in_other_digits(signed, one):
    message = signed.get(f"/v1/tron-monitor/addresses?page={quote(one)}").error(40010, 400)
    assert "page" in message


@pytest.mark.parametrize("text", ["\u0661\u0660\u0660\u0660", "\uff11\uff10\uff10\uff10",
                                  "1e3", "1_000", "Infinity"])
def test_balance_refuses_amount_text_that_is_not_plain_ascii(signed, text):
    before = signed.account()["balance"]
    signed.control("POST", "/balance", {"balance": text}, status=400)
    assert signed.account()["balance"] == before


def test_balance_and_transfer_accept_plain_ascii_text(signed):
    before = signed.account()["balance"]
    signed.control("POST", "/balance", {"balance": "1234.5"})
    assert signed.account()["balance"] == Decimal("1234.5")
    signed.control("POST", "/balance", {"balance": format(before, "f")})
    signed.control("POST", "/transfers", {"from": random_address(), "to": random_address(),
                                          "amount": "12.5", "token": "TRX"})


@pytest.mark.parametrize("text", ["\u0665", "5e0"])
def test_transfer_refuses_amount_text_that_is_not_plain_ascii(signed, text):
    signed.control("POST", "/transfers", {"from": random_address(), "to": random_address(),
                                          "amount": text, "token": "TRX"}, status=400)
