"""The Energy page's HTML from a known history: the figures are there, every value is
escaped, nothing is fetched from anywhere, links into the UI open in its top window."""

from __future__ import annotations

import re
from datetime import date
from html.parser import HTMLParser

import pytest

from airflow_provider_tronenergy.ui.data import page_data
from airflow_provider_tronenergy.ui.page import render
from airflow_provider_tronenergy.ui.period import Period
from airflow_provider_tronenergy.ui.svg import amount
from support.energy_history import PERIOD, PREPARATION, at, seed

NOW = at(3, 10, 1)


class Elements(HTMLParser):
    """Every start tag with its attributes; the text outside tags."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(html: str) -> Elements:
    elements = Elements()
    elements.feed(html)
    return elements


@pytest.fixture
def page(stores) -> str:
    data = page_data(stores, PERIOD, seed(stores), now_ms=NOW)
    return render(data, base="/airflow", today=date(2026, 3, 3), user="lead <b>")


def test_the_figures_of_the_history_are_on_the_page(page):
    text = " ".join(parsed(page).text)
    for expected in ("17.97 TRX", "35.9 TRX", "17.93 TRX", "326,000", "244,570",
                     "TRX burned anyway 9.035", "1 purchase, 1 payout",
                     "tronenergy-payouts resolve b1:2 --resend", "OUT_OF_ENERGY",
                     "4 callbacks stored, 1 redelivery", "1 conflict kept",
                     "deposit_watch.watcher", "lead", "manual__2026-03-01",
                     "confirmed on solidified blocks"):
        assert expected in text, expected
    assert "11.745" in text and "14.355" in text and "29.4" in text  # the per-day table


def test_nothing_is_fetched_and_links_into_the_ui_open_on_top(page):
    elements = parsed(page)
    assert not [t for t, a in elements.tags if t in ("script", "link", "img", "iframe")]
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    ui_links = [a for t, a in elements.tags if t == "a" and a.get("target") == "_top"]
    hrefs = {a["href"] for a in ui_links}
    assert f"/airflow/dags/{PREPARATION}/runs/manual__2026-03-01" in hrefs
    assert any(h.endswith("/tasks/send_payouts/required_actions?map_index=-1") for h in hrefs)
    assert all(h.startswith("/airflow/dags/") for h in hrefs)
    assert [t for t, _ in elements.tags].count("svg") == 3  # spend, energy, deposits


def test_every_value_is_escaped(page):
    assert "lead <b>" not in page and "lead &lt;b&gt;" in page
    assert "p7 &#x27;unknown&#x27;" in page  # a purchase key with quotes, as text


def test_a_year_is_drawn_a_bar_per_day_and_an_empty_period_says_so(stores):
    year = Period.ending(date(2026, 12, 31), 365)
    html = render(page_data(stores, year, [], now_ms=NOW), base="", today=date(2026, 12, 31),
                  user="u")
    assert "Callbacks stored per day" in html and "Nothing bought." in html
    assert "No payout batch ready event in this period." in html


@pytest.mark.parametrize(("value", "text"), [
    ("1234567.5", "1,234,567.5"), ("0.000001", "0.000001"), ("10", "10"), ("0", "0")])
def test_amounts_read_as_people_write_them(value, text):
    from decimal import Decimal

    assert amount(Decimal(value)) == text


def test_a_batch_confirmed_on_the_head_is_marked_not_final(stores):
    events = seed(stores)
    table = stores.payouts.attempts
    with stores.payouts.db.engine.begin() as conn:
        conn.execute(table.update().values(confirmed_on="head"))
    html = render(page_data(stores, PERIOD, events, now_ms=NOW), base="",
                  today=date(2026, 3, 3), user="u")
    text = " ".join(parsed(html).text)
    assert "confirmed on head blocks (a fork may still leave the head)" in text
    assert "confirmed on solidified blocks" not in text
