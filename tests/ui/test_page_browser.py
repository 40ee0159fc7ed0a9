"""The Energy page in a real browser, inside the Airflow UI: Debian's chromium driven by
playwright (the system browser, never a downloaded one), against a real API server whose
stores hold a known history (``support.energy_history``).

A person signs in with the UI's own form, opens **Energy** in the navigation, picks the
period in the page's form, and reads the figures the journals and the callback store
hold; a user without the permission sees the refusal inside the UI; without signing in,
the page answers 401 and the UI sends the browser to its sign-in page.
``TRONENERGY_UPDATE_SCREENSHOTS=1`` refreshes the screenshot the docs show
(``docs/energy-page.png``). Skipped, saying why, when no browser can be driven.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.deposits import DepositLedger
from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.purchase_journal.store import PurchaseJournal
from airflow_provider_tronenergy.ui.data import Stores, page_data
from airflow_provider_tronenergy.ui.svg import amount
from support.browser import browser_missing, browser_page
from support.energy_history import EXPECTED, PERIOD, at, seed
from support.page_server import PASSWORDS, ROOT, PageServer, running_page_server

pytestmark = pytest.mark.timeout(300)

SCREENSHOT = ROOT / "docs" / "energy-page.png"
EXTRA_OF = {  # the batch event as payout.ready.batch_ready writes it (support.energy_history)
    "batch_id": "b1", "activations": 2, "activation_cost": "2.2", "energy_bought": 261_000,
    "energy_cost": "11.745", "total_cost": "13.945", "burn_cost_bought": "26.1",
    "saving": "14.355", "approval": {"required": True, "approved": True, "by": "lead",
                                     "at": "2026-03-01T12:10:00+00:00", "timed_out": False}}


def _stores(home: Path) -> tuple[Stores, dict[str, str]]:
    urls = {"TRONENERGY_PURCHASE_JOURNAL": f"sqlite:///{home / 'journal.db'}",
            "TRONENERGY_CALLBACK_STORE": f"sqlite:///{home / 'callbacks.db'}",
            "TRONENERGY_DEPOSITS_DB": f"sqlite:///{home / 'ledger.db'}"}
    journal = urls["TRONENERGY_PURCHASE_JOURNAL"]
    return Stores(PurchaseJournal(journal), PayoutJournal(journal),
                  CallbackStore(urls["TRONENERGY_CALLBACK_STORE"]),
                  DepositLedger(urls["TRONENERGY_DEPOSITS_DB"])), urls


def _publish(metadata_db: Path, extra: dict[str, Any], ms: int) -> None:
    """The batch's ``payout batch ready`` event, in the API server's metadata database."""
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.sdk import Asset
    from sqlalchemy.orm import Session

    from airflow_provider_tronenergy.ui.events import BATCH_READY_ASSET

    engine = sa.create_engine(f"sqlite:///{metadata_db}")
    try:
        with Session(engine) as session:
            declared = Asset(BATCH_READY_ASSET, group="tronenergy")  # as the DAGs declare it
            asset = AssetModel(name=declared.name, uri=declared.uri, group=declared.group)
            session.add(asset)
            session.flush()
            session.add(AssetEvent(asset_id=asset.id, extra=extra,
                                   source_dag_id="batch_payout_preparation",
                                   source_run_id="manual__2026-03-01",
                                   source_task_id="publish_batch_ready",
                                   timestamp=datetime.fromtimestamp(ms / 1000, timezone.utc)))
            session.commit()
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[PageServer, dict]]:
    reason = browser_missing()
    if reason:
        pytest.skip(reason)
    home = tmp_path_factory.mktemp("energy-page-browser")
    stores, urls = _stores(home)
    try:
        events = seed(stores)
        expected = page_data(stores, PERIOD, events, now_ms=at(3, 10, 1))
    finally:
        stores.close()
    with running_page_server(home, urls) as running:
        _publish(home / "airflow.db", {**EXTRA_OF, "sender": "T", "recipients": [{}] * 3},
                 at(1, 12, 20))
        yield running, expected


def _sign_in(page: Any, server: PageServer, user: str) -> None:
    """As a person does: the UI's own sign-in form."""
    page.goto(f"{server.root_url}/auth/login", wait_until="networkidle")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", PASSWORDS[user])
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/auth/" not in url, timeout=30_000)


def test_the_page_inside_the_ui_shows_what_the_stores_hold(server, tmp_path):
    running, expected = server
    with browser_page(1400, 1100) as page:
        _sign_in(page, running, "lead")
        page.get_by_role("link", name="Energy").click()  # the UI's navigation
        frame = page.frame_locator("iframe[title='Energy']")
        frame.locator("input[name=from]").fill("2026-03-01")
        frame.locator("input[name=to]").fill("2026-03-03")
        frame.get_by_role("button", name="Show").click()
        frame.get_by_text("Energy, 2026-03-01 to 2026-03-03").wait_for(timeout=30_000)
        text = frame.locator("body").inner_text()
        page.screenshot(path=str(tmp_path / "energy-page.png"))
    totals = expected["spend"]["totals"]
    assert (totals["spent_trx"], totals["saving_trx"]) == ("17.97", "17.93")
    for figure in (f"{amount_text(totals['spent_trx'])} TRX",
                   f"{amount_text(totals['burn_trx'])} TRX",
                   f"{amount_text(totals['saving_trx'])} TRX",
                   f"{EXPECTED.energy_rented:,}", f"{EXPECTED.chain['energy_charged']:,}",
                   f"TRX burned anyway {EXPECTED.chain['trx_burned']}",
                   "1 purchase, 1 payout", "4 callbacks stored, 1 redelivery",
                   "1 conflict kept", "tronenergy-purchases resolve", "OUT_OF_ENERGY",
                   "lead", "manual__2026-03-01", "13.945", "deposit_watch.watcher"):
        assert figure in text, f"{figure!r} not on the page:\n{text[:3000]}"
    if os.environ.get("TRONENERGY_UPDATE_SCREENSHOTS") == "1":  # the one in the docs
        shutil.copyfile(tmp_path / "energy-page.png", SCREENSHOT)


def amount_text(value: str) -> str:
    from decimal import Decimal

    return amount(Decimal(value))


def test_a_user_without_the_permission_sees_the_refusal_not_the_figures(server):
    running, _ = server
    with browser_page() as page:
        _sign_in(page, running, "viewer")
        page.goto(f"{running.root_url}/plugin/tronenergy-energy",
                  wait_until="networkidle")
        frame = page.frame_locator("iframe[title='Energy']")
        frame.get_by_text("may not see the Energy page").wait_for(timeout=30_000)
        text = frame.locator("body").inner_text()
    assert "403" in text and "TRX" not in text


def test_without_signing_in_the_page_is_refused_and_the_ui_asks_to_sign_in(server):
    running, _ = server
    with browser_page() as page:
        answer = page.goto(f"{running.root_url}/tronenergy-ui/energy")
        assert answer is not None and answer.status == 401
        text = page.locator("body").inner_text()
        assert "Sign in to Airflow" in text and "TRX" not in text
        page.goto(f"{running.root_url}/plugin/tronenergy-energy")
        page.wait_for_url(lambda url: "/auth/login" in url, timeout=30_000)
