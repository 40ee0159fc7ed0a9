"""Batch operators: repeated addresses, input checked before the first request, ASCII numbers.

Each test runs the operators in real Airflow (``dag.test()``) against the sandbox
over HTTP, and counts what the service received in the sandbox's access log and
its order list.
"""

from __future__ import annotations

import json
import time
import uuid
from decimal import Decimal
from typing import Any

import operators_batch as dags
import pytest

from tronenergy_protocol.address import random_address

ACCESS = "tronenergy.sandbox.access"
ARABIC_65000 = "\u0666\u0665\u0660\u0660\u0660"  # "65000" in Arabic-Indic digits
FULLWIDTH_65000 = "\uff16\uff15\uff10\uff10\uff10"  # "65000" in full-width digits


@pytest.fixture
def served(caplog: pytest.LogCaptureFixture, control: Any) -> Any:
    """``served()``: the /v1 requests the sandbox answered during this test, as log lines.

    The server logs a request after answering it, on its own thread; a last marker
    request, logged after every earlier one, makes the count complete.
    """
    caplog.set_level("INFO")

    def lines() -> list[str]:
        marker = f"/sandbox/count-{uuid.uuid4().hex}"
        control.session.get(control.root.removesuffix("/sandbox") + marker, timeout=10)
        deadline = time.monotonic() + 10
        while not any(marker in r.getMessage() for r in caplog.records if r.name == ACCESS):
            assert time.monotonic() < deadline, "the sandbox did not log the marker request"
            time.sleep(0.01)
        return [r.getMessage() for r in caplog.records
                if r.name == ACCESS and " /v1/" in r.getMessage()]

    return lines


def activations(control: Any, addresses: list[str]) -> list[dict[str, Any]]:
    return [o for o in control.orders()
            if o["kind"] == "activate" and o["target_address"] in addresses]


def bad_checksum() -> str:
    address = random_address()
    return address[:-1] + ("1" if address[-1] != "1" else "2")


# -- duplicates ------------------------------------------------------------------------


def test_activate_repeated_address_pays_once_and_reports_the_orders(run_dag, control, served):
    a, b = random_address(), random_address()
    out = run_dag(dags.te_activate, addresses=[a, b, a])
    state, tries, results = out["activate"]
    assert (state, tries) == ("success", 1)
    assert [r["address"] for r in results] == [a, b]  # each address once, first order kept
    assert [r["activated"] for r in results] == [True, True]
    orders = activations(control, [a, b])
    assert sorted(o["target_address"] for o in orders) == sorted([a, b])
    # The reported spend is exactly what the service charged.
    assert sum(Decimal(r["cost"]) for r in results) == sum(Decimal(o["cost"]) for o in orders)
    assert {r["order_id"] for r in results} == {o["order_id"] for o in orders}
    sent = served()
    assert sum("/v1/energy/check-address " in line for line in sent) == 2
    assert sum("/v1/energy/activate " in line for line in sent) == 2


def test_check_repeated_address_is_checked_once(run_dag, control, served):
    holder, fresh = control.activated(holder=True), random_address()
    out = run_dag(dags.te_check, addresses=[holder, fresh, holder, fresh, holder])
    state, _, results = out["check"]
    assert state == "success"
    assert [r["address"] for r in results] == [holder, fresh]
    assert [r["transfer_energy"] for r in results] == [65000, 131000]
    assert sum("/v1/energy/check-address " in line for line in served()) == 2


def test_monitor_repeated_address_is_registered_and_removed_once(run_dag, control, served):
    a, b = random_address(), random_address()
    out = run_dag(dags.te_monitor, addresses=[a, b, a])
    assert [(r["address"], r["added"]) for r in out["add"][2]] == [(a, True), (b, True)]
    assert [(r["address"], r["removed"]) for r in out["remove"][2]] == [(a, True), (b, True)]
    assert [r["removed"] for r in out["remove_again"][2]] == [False, False]
    sent = served()
    # add, add_again, add_strict; remove, remove_again: two addresses each.
    assert sum(line.startswith("POST /v1/tron-monitor/addresses ") for line in sent) == 6
    assert sum(line.startswith("DELETE /v1/tron-monitor/addresses/") for line in sent) == 4


# -- invalid input: nothing sent, no retry ---------------------------------------------


def test_invalid_addresses_fail_every_batch_operator_before_any_request(
        run_dag, control, served, capfd):
    good = [random_address(), random_address()]
    broken = bad_checksum()
    batch = [good[0], broken, good[1], "not-an-address", 42]
    out = run_dag(dags.te_batch_strict, addresses=batch)
    for task in ("check", "activate", "add", "remove"):
        assert out[task][:2] == ("failed", 1), task  # AirflowFailException: not retried
    assert served() == []  # not one request reached the service
    assert activations(control, good) == []  # the good addresses were not paid for
    log = capfd.readouterr().out
    for task in ("check", "activate", "add", "remove"):
        report = log[log.index(f"{task}: 3 invalid input(s); nothing was sent"):]
        assert f"addresses[1] '{broken}': not a valid TRON address" in report
        assert "addresses[3] 'not-an-address': not a valid TRON address" in report
        assert "addresses[4] 42: must be a TRON address string, not int" in report


def test_invalid_activation_parameters_fail_before_any_request(run_dag, control, served,
                                                               capfd):
    fresh = [random_address(), random_address()]
    # max_order_trx "3" in Arabic-Indic digits; "maybe" is not a dry run, nor a real one.
    out = run_dag(dags.te_activate, addresses=fresh, max_order="\u0663", dry_run="maybe")
    assert out["activate"][:2] == ("failed", 1)
    assert served() == []
    assert activations(control, fresh) == []
    log = capfd.readouterr().out
    report = log[log.index("activate: 2 invalid input(s); nothing was sent"):]
    assert "max_order_trx: must be a plain decimal number in ASCII digits" in report
    assert "dry_run: must be true or false, got 'maybe'" in report


def test_invalid_monitor_and_batch_parameters_fail_before_any_request(run_dag, served, capfd):
    addresses = [random_address()]
    # tokens as text would be split into characters; the webhook URL is not http(s).
    out = run_dag(dags.te_batch_params, addresses=addresses, webhook_url="ftp://example.com/x",
                  tokens="USDT")
    assert out["add"][:2] == ("failed", 1)
    assert out["check"][:2] == ("failed", 1)  # max_concurrency=0
    assert served() == []
    log = capfd.readouterr().out
    report = log[log.index("add: 2 invalid input(s); nothing was sent"):]
    assert "webhook_url: must be an http(s) URL" in report
    assert "tokens: must be a non-empty list of token symbols" in report
    assert "max_concurrency: must be at least 1" in log[log.index("check: 1 invalid input"):]


def test_failed_check_activates_nothing(run_dag, control, monkeypatch, sandbox):
    """One address that cannot be checked stops the batch: the balance guard sees every
    address."""
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_DEFAULT", json.dumps({
        "conn_type": "tronenergy", "host": sandbox.url, "login": sandbox.api_key,
        "password": sandbox.api_secret,
        "extra": {"webhook_secret": sandbox.webhook_secret, "max_retries": "0"}}))
    fresh = [random_address() for _ in range(4)]
    control.fault(kind="error", status=503, path="/energy/check-address", count=1)
    # 4 x 1.1 = 4.4 TRX is over the balance; the three addresses the first try could
    # check (3.3 TRX) are within it, and are not activated either.
    control.balance("4")
    out = run_dag(dags.te_activate, addresses=fresh)
    assert out["activate"][:2] == ("failed", 2)
    assert activations(control, fresh) == []


# -- numbers in ASCII digits only ------------------------------------------------------


@pytest.mark.parametrize(("conf", "field"), [
    ({"energy": ARABIC_65000, "rent_time": "1"}, "energy_amount"),
    ({"energy": FULLWIDTH_65000, "rent_time": "1"}, "energy_amount"),
    ({"energy": "65000", "rent_time": "\u0661"}, "rent_time"),  # Arabic-Indic 1
    ({"energy": "65000", "rent_time": "1", "max_order": "\u0661\u0660"}, "max_order_trx"),
])
def test_non_ascii_digits_buy_nothing(run_dag, control, served, capfd, conf, field):
    target = control.activated()
    out = run_dag(dags.te_buy_numbers, target=target, **conf)
    assert out["buy"][:2] == ("failed", 1)
    assert control.orders(target) == []
    assert served() == []
    assert f"buy: {field}: " in capfd.readouterr().out


def test_ascii_numbers_still_buy(run_dag, control):
    target = control.activated()
    out = run_dag(dags.te_buy_numbers, target=target, energy=" 65000 ", rent_time="1.0",
                  max_order="10")
    state, _, result = out["buy"]
    assert state == "success"
    assert result["energy_amount"] == 65000
    assert [o["order_id"] for o in control.orders(target)] == [result["order_id"]]


def test_connection_max_retries_in_other_digits_is_refused(run_dag, control, monkeypatch,
                                                           sandbox, served):
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_DEFAULT", json.dumps({
        "conn_type": "tronenergy", "host": sandbox.url, "login": sandbox.api_key,
        "password": sandbox.api_secret,
        "extra": {"webhook_secret": sandbox.webhook_secret, "max_retries": "\u0663"}}))
    out = run_dag(dags.te_check, addresses=[control.activated()])
    assert out["check"][0] == "failed"
    assert served() == []
