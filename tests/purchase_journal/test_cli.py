"""Resolving an unknown outcome with an order id: the order is read from the service first.

A real sandbox over HTTP (it places orders for any address), a real journal on SQLite,
and ``tronenergy-purchases`` itself: in this process through ``main`` (its output
captured), and once as the installed command in a child process.
"""

from __future__ import annotations

import getpass
import json
import subprocess
import sys
import uuid
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from airflow_provider_tronenergy.money.quote import Quote
from airflow_provider_tronenergy.operators.energy import (
    TronEnergyAutoBuyOperator,
    TronEnergyBuyByCountOperator,
)
from airflow_provider_tronenergy.purchase.run import describe
from airflow_provider_tronenergy.purchase_journal import Entry, EntryState, PurchaseJournal
from airflow_provider_tronenergy.purchase_journal.cli import main
from airflow_provider_tronenergy.purchase_journal.verify import journaled_energies
from support.control import Control
from support.sandbox import connection_json


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'journal.db'}"


@pytest.fixture
def journal(url: str):
    journal = PurchaseJournal(url)
    yield journal
    journal.close()


def unknown(journal: PurchaseJournal, control: Control, *, energy: int = 65_000,
            rent: str = "1", target: str | None = None) -> Entry:
    """A buy of ``energy`` for ``rent`` hours whose outcome is unknown, as the operator
    journals it."""
    target = target or control.activated()
    return journal.claim(
        f"test:{uuid.uuid4().hex}", None, scope="d/r/buy/-1", explicit_key=True, mode="buy",
        target_address=target, description=f"buy {energy:,} energy for {target} ({rent} h) "
        "at 2.925 TRX", request={"target_address": target, "energy_amount": energy,
                                 "rent_time": rent}, rent_hours=Decimal(rent))


def resolve(capsys, url: str, identity: str, *args: str) -> tuple[int, str, str]:
    """``tronenergy-purchases --journal URL resolve IDENTITY ARGS``: (exit code, out, err)."""
    capsys.readouterr()
    try:
        code = main(["--journal", url, "resolve", identity, *args])
    except SystemExit as exited:  # argparse refuses the command line
        code = int(exited.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def still_unknown(journal: PurchaseJournal, entry: Entry) -> bool:
    latest = journal.latest(entry.identity)
    return latest is not None and latest.state is EntryState.SENDING and latest.order_id is None


@pytest.mark.parametrize(("what", "order"), [
    ("target address", {"target": "other"}),
    ("energy", {"energy": 131_000}),
    ("rent time", {"rent_time": "24"}),
])
def test_an_order_of_another_purchase_is_refused_with_both_sides_shown(
        journal, url, control, conn, capsys, what, order):
    entry = unknown(journal, control)
    target = control.activated() if order.pop("target", None) else entry.target_address
    order_id = control.buy(target, **order)
    code, _, err = resolve(capsys, url, entry.identity, "--order-id", order_id)
    assert code == 1 and "refused" in err and "Nothing was recorded" in err
    line = next(line for line in err.splitlines() if line.strip().startswith(what + ":"))
    journaled, shown = {
        "target address": (entry.target_address, target),
        "energy": ("65,000", "131,000"),
        "rent time": ("1 h", "24 h"),
    }[what]
    assert f"journaled {journaled}; order {shown}" in line, err
    assert "--force" in err
    assert still_unknown(journal, entry)


def test_an_order_another_attempt_holds_is_refused(journal, url, control, conn, capsys):
    first = unknown(journal, control)
    second = unknown(journal, control, target=first.target_address)
    order_id = control.buy(first.target_address)
    assert resolve(capsys, url, first.identity, "--order-id", order_id)[0] == 0
    code, _, err = resolve(capsys, url, second.identity, "--order-id", order_id)
    assert code == 1
    assert f"order {order_id} is already held by purchase {first.identity!r}" in err
    assert still_unknown(journal, second)


def test_the_matching_order_is_recorded_after_reading_it_with_the_named_connection(
        journal, url, control, sandbox, monkeypatch, capsys):
    monkeypatch.delenv("AIRFLOW_CONN_TRONENERGY_DEFAULT", raising=False)
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_OPS", connection_json(sandbox))
    entry = unknown(journal, control, energy=131_000, rent="24")
    order_id = control.buy(entry.target_address, 131_000, "24")
    code, out, err = resolve(capsys, url, entry.identity, "--order-id", f" {order_id} ",
                             "--conn-id", "tronenergy_ops", "--by", "bob")
    assert code == 0, err
    assert (f"checked with the service: order {order_id} is for {entry.target_address}, "
            "131,000 energy, 24 h") in out
    latest = journal.latest(entry.identity)
    assert (latest.state, latest.order_id, latest.resolved_by) == (
        EntryState.PLACED, order_id, "bob")


def test_forcing_needs_a_reason_and_the_journal_keeps_who_and_why(
        journal, url, control, conn, capsys):
    entry = unknown(journal, control)
    order_id = control.buy(entry.target_address, 131_000)
    for args in (["--force"], ["--reason", "x"], ["--force", "--reason", "  "]):
        code, _, err = resolve(capsys, url, entry.identity, "--order-id", order_id, *args)
        assert code == 2 and "--reason" in err
    assert still_unknown(journal, entry)

    code, out, err = resolve(capsys, url, entry.identity, "--order-id", order_id, "--force",
                             "--reason", "support merged two orders, ticket 4411")
    assert code == 0, err
    assert "FORCED" in out and "journaled 65,000; order 131,000" in out
    shown = subprocess.run([sys.executable, "-m",
                            "airflow_provider_tronenergy.purchase_journal.cli",
                            "--journal", url, "show", entry.identity, "--json"],
                           capture_output=True, text=True, timeout=60, check=True)
    [recorded] = json.loads(shown.stdout)
    login = getpass.getuser()
    assert recorded["state"] == "placed" and recorded["order_id"] == order_id
    assert recorded["resolved_by"] == login
    assert recorded["note"].startswith(
        f"FORCED by {login}: support merged two orders, ticket 4411 (energy: journaled "
        "65,000; order 131,000)")


def test_an_order_that_cannot_be_read_is_refused_unless_forced(
        journal, url, control, conn, capsys):
    entry = unknown(journal, control)
    code, _, err = resolve(capsys, url, entry.identity, "--order-id", "no-such-order")
    assert code == 1 and "the service does not know order no-such-order" in err
    order_id = control.buy(entry.target_address)
    code, _, err = resolve(capsys, url, entry.identity, "--order-id", order_id,
                           "--conn-id", "nowhere")
    assert code == 1 and "connection 'nowhere' cannot be used" in err
    assert still_unknown(journal, entry)
    code, _, err = resolve(capsys, url, entry.identity, "--order-id", "no-such-order",
                           "--force", "--reason", "the service lost it; paid, see invoice 12")
    assert code == 0, err
    assert "does not know order no-such-order" in journal.latest(entry.identity).note


def test_an_order_created_before_the_purchase_was_sent_is_refused(
        journal, url, control, conn, capsys):
    """The console lists yesterday's identical top-up too: it is not this purchase's."""
    target = control.activated()
    order_id = control.buy(target)
    entry = unknown(journal, control, target=target)
    with journal.engine.begin() as db:  # sent an hour after that order was placed
        db.execute(journal.entries.update().where(journal.entries.c.id == entry.id)
                   .values(sent_at_ms=int((entry.sent_at + 3600) * 1000)))
    code, _, err = resolve(capsys, url, entry.identity, "--order-id", order_id)
    assert code == 1 and "time:" in err and "before" in err
    assert still_unknown(journal, entry)


def test_the_installed_command_checks_the_order(journal, url, control, conn):
    entry = unknown(journal, control)
    other = control.buy()
    command = str(Path(sys.executable).with_name("tronenergy-purchases"))
    done = subprocess.run([command, "--journal", url, "resolve", entry.identity, "--order-id",
                           other], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and "target address: journaled" in done.stderr, done.stderr
    assert still_unknown(journal, entry)


def test_the_energy_of_a_quoted_purchase_is_the_quote_the_journal_kept():
    """Modes whose request states no energy are checked against the energy the price
    endpoint quoted before sending, kept in its own column; the description is for people
    and is never read back (it was, and a reworded description would have broken it)."""
    target, to = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
    quote = Quote(energy=131_000, rent_time=Decimal(1), price_per_10k=Decimal("0.45"),
                  energy_cost=Decimal("5.895"))
    for op, request in [
        (TronEnergyBuyByCountOperator(task_id="t", target_address=target, count=2),
         {"target_address": target, "count": 2, "rent_time": "1"}),
        (TronEnergyAutoBuyOperator(task_id="t", from_address=target, to_address=to),
         {"from_address": target, "to_address": to, "rent_time": "1"}),
    ]:
        entry = Entry(id=1, identity="k", attempt=1, state=EntryState.SENDING,
                      explicit_key=True, mode=op.mode, target_address=target,
                      description=describe(op.order(), quote), request=request, scope="s",
                      claimed_by="s", sent_at=0.0, rent_hours=Decimal(1), valid_until=None,
                      order_id=None, result=None, updated_at=0.0, resolved_by=None, note=None,
                      quoted_energy=quote.energy)
        assert journaled_energies(entry) == {131_000}
        reworded = replace(entry, description=f"buy 999,000 energy for {target} (1 h)")
        assert journaled_energies(reworded) == {131_000}
        unquoted = replace(entry, description=describe(op.order(), None), quoted_energy=None)
        assert journaled_energies(unquoted) == (
            {130_000} if "count" in request else {65_000, 131_000})
