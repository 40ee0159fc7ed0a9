"""The Energy page per token, from a real payout journal (SQLite and PostgreSQL): amounts
summed exactly in each token's own units (beyond 2^63 and 28 digits), never two tokens
together, energy charged per contract, TRX burned per token, a contract's untrusted symbol
escaped, its explorer page linked; a contract no event described shown in its units."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from airflow_provider_tronenergy.ui.data import page_data
from airflow_provider_tronenergy.ui.page import exact, render
from airflow_provider_tronenergy.ui.period import Period
from airflow_provider_tronenergy.ui.tokens import page_explorer, token_facts, token_use
from support.journaled import journaled, receipt
from tronenergy_protocol.address import random_address
from tronenergy_protocol.explorer import ExplorerError, explorer_of

E18, BARE = random_address(), random_address()
USDT_CONTRACT = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
HOSTILE = '<script>alert("x")</script>'
NILE = "https://nile.tronscan.org"
TODAY = datetime.now(timezone.utc).date()
PERIOD = Period.parse(None, None, today=TODAY)
SENT_TOKENS = [  # newest payouts sent event first
    [{"token": E18, "symbol": HOSTILE, "decimals": 18, "contract": E18},
     {"token": "USDT", "symbol": "FAKE", "decimals": 2, "contract": USDT_CONTRACT}],
    [{"token": E18, "symbol": "OLD", "decimals": 6, "contract": E18}],
]


@pytest.fixture
def seeded(stores):
    journaled(stores.payouts, [
        ("USDT", 1_500_000, receipt(13_345_000, 345_000, 13_000_000, 130_285, 130_285), 1),
        ("USDT", 2_250_000, receipt(345_000, 345_000, 0, 64_285), 1),
        *[(E18, 10 ** 39 + 7, receipt(345_000, 345_000, 0, 29_650), 1) for _ in range(3)],
        ("TRX", 2_000_000, receipt(1_100_000, 100_000, 0), 1),
        (BARE, 10 ** 30, receipt(445_000, 345_000, None, 31_000), 1),
        (E18, 5, None, 1)])  # sent: not paid yet
    return stores


def test_each_token_is_summed_exactly_in_its_own_units(seeded):
    lines = {t["token"]: t for t in token_use(seeded.payouts, PERIOD, token_facts(SENT_TOKENS),
                                             explorer_of(NILE))}
    assert set(lines) == {"USDT", E18, "TRX", BARE}
    usdt, e18, trx, bare = (lines[name] for name in ("USDT", E18, "TRX", BARE))
    assert (e18["confirmed"], e18["units_paid"]) == (3, str(3 * 10 ** 39 + 21))
    assert e18["amount_paid"] == "3000000000000000000000.000000000000000021"
    assert (e18["symbol"], e18["decimals"]) == (HOSTILE, 18)  # the newest event's
    assert (usdt["amount_paid"], usdt["symbol"], usdt["decimals"]) == ("3.75", "USDT", 6)
    assert (trx["amount_paid"], trx["symbol"]) == ("2", "TRX")
    assert (bare["amount_paid"], bare["units_paid"], bare["symbol"]) == (
        None, str(10 ** 30), None)
    assert [lines[n]["energy_charged"] for n in ("USDT", E18, "TRX", BARE)] == [
        194_570, 88_950, 0, 31_000]
    assert [lines[n]["trx_burned"] for n in ("USDT", E18, "TRX", BARE)] == [
        "13.69", "1.035", "1.1", "0.445"]  # each token's own transactions
    assert (usdt["explorer"], e18["explorer"], trx["explorer"]) == (
        f"{NILE}/#/token20/{USDT_CONTRACT}", f"{NILE}/#/token20/{E18}", "")


def test_the_page_escapes_a_contracts_symbol_and_keeps_every_decimal(seeded):
    data = page_data(seeded, PERIOD, [], sent_tokens=SENT_TOKENS, explorer=explorer_of(NILE))
    html = render(data, base="/airflow", today=TODAY, user="lead")
    section = html[html.index("<h2>Payouts by token</h2>"):html.index("<h2>Waiting")]
    assert "<script" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in section
    assert "3,000,000,000,000,000,000,000.000000000000000021 &lt;script&gt;" in section
    assert f'href="{NILE}/#/token20/{E18}"' in section
    assert "1,000,000,000,000,000,000,000,000,000,000 smallest units" in section
    assert "3.75 USDT" in section and "2 TRX" in section


def test_an_exact_amount_keeps_its_decimals_when_grouped():
    assert exact("1234567.000000000000000001") == "1,234,567.000000000000000001"
    assert exact("0.5") == "0.5" and exact("1000") == "1,000" and exact("-1000.1") == "-1,000.1"


def test_malformed_token_facts_are_skipped_never_half_read():
    facts = token_facts([
        "not a list", None,
        [{"token": "TRX", "symbol": "X", "decimals": 3},  # TRX's are the chain's own
         {"token": "no address", "symbol": "X", "decimals": 3},
         {"token": E18, "symbol": "X", "decimals": 37},
         {"token": E18, "symbol": "X", "decimals": True},
         {"token": E18, "symbol": "X", "decimals": "18"},
         {"token": BARE, "symbol": "\x1b[31m" + "X" * 40, "decimals": 0, "contract": "nope"},
         "junk"],
        [{"token": E18, "symbol": "LATER", "decimals": 9}]])
    assert set(facts) == {BARE, E18}
    assert (facts[BARE].symbol, facts[BARE].decimals, facts[BARE].contract) == (None, 0, None)
    assert (facts[E18].symbol, facts[E18].decimals) == ("LATER", 9)


def test_a_bad_explorer_setting_is_an_error_naming_it(monkeypatch):
    monkeypatch.setenv("AIRFLOW__TRONENERGY__EXPLORER_URL", "javascript:alert(1)")
    with pytest.raises(ExplorerError, match=r"\[tronenergy\] explorer_url .*https://"):
        page_explorer()
    monkeypatch.setenv("AIRFLOW__TRONENERGY__EXPLORER_URL", NILE)
    assert page_explorer().root == NILE
    monkeypatch.delenv("AIRFLOW__TRONENERGY__EXPLORER_URL")
    assert page_explorer().root == "https://tronscan.org"


def test_a_period_without_payouts_says_so(stores):
    period = Period.parse("2020-01-01", "2020-01-07", today=date(2020, 1, 7))
    assert token_use(stores.payouts, period) == []
    data = page_data(stores, period, [])
    html = render(data, base="", today=date(2020, 1, 7), user="lead")
    assert "No payout in this period." in html
