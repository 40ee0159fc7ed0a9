"""``tronenergy-deposits``: list and show the claims the chain has not proven, recheck one
against the chain (the only way a claim is ever credited), dismiss one with a note; prove
the rows a ledger of version 2 credited on a callback's word (``prove-legacy``: before it,
such rows could not be re-proven at all)."""

from __future__ import annotations

import json
import secrets

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy.deposits import cli
from airflow_provider_tronenergy.protocol.address import random_address
from support.chain import USDT
from support.deposits import DepositWorld


def run(world: DepositWorld, capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["--ledger", world.ledger_url, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_show_recheck_and_dismiss(world, capsys):
    inflated = world.transfer("1", callback=False)
    world.forge("1000", tx_hash=inflated)
    early = world.transfer("4.5")
    world.stored(inflated, early)
    world.chain.blocks(5)
    assert world.sweep() == []  # early: not solid yet; inflated: not solid yet either
    world.chain.blocks(20)
    world.sweep(addresses=[world.address])  # inflated disputed; early credited
    code, out, _ = run(world, capsys, "list")
    assert code == 0
    assert out.splitlines()[0] == "0 waiting, 1 disputed, 1 proven, 0 dismissed"
    assert f"DISPUTED   {inflated}  1000 USDT to {world.address}" in out
    assert "other_amount: the chain moved another amount to this address" in out

    code, out, _ = run(world, capsys, "show", inflated, "--json")
    shown = json.loads(out)
    assert (shown["callback"]["amount"], shown["chain"]["transfers"][0]["units"]) == (
        "1000", "1000000")

    # The chain decides, not the person: a recheck finds the same contradiction.
    code, out, _ = run(world, capsys, "recheck", inflated, "--node-url",
                       world.chain.sandbox.root_url, "--usdt-contract", USDT)
    assert (code, out.splitlines()[0]) == (
        0, "disputed: the chain moved another amount to this address (the callback says 1000)")
    assert world.rows("SELECT count(*) FROM credited_deposits") == [(1,)]

    code, _, err = run(world, capsys, "dismiss", inflated, "--note", "", "--by", "ana")
    assert code == 1 and "needs a note" in err
    code, out, _ = run(world, capsys, "dismiss", inflated, "--note", "forged", "--by", "ana")
    assert (code, out) == (0, f"dismissed {inflated}: not credited\n")
    code, _, err = run(world, capsys, "dismiss", inflated, "--note", "again")
    assert code == 1 and "is dismissed, not open" in err
    code, out, _ = run(world, capsys, "list", "--state", "dismissed")
    assert "ana: forged" in out

    code, out, _ = run(world, capsys, "credits", "--address", world.address)
    assert f"4.5 USDT to {world.address}  tx {early}  block " in out
    assert "log 0  via callback" in out


def test_recheck_credits_what_the_chain_now_proves(world, capsys):
    tx = world.transfer("2")
    world.stored(tx)
    world.sweep()
    code, out, _ = run(world, capsys, "recheck", tx, "--node-url",
                       world.chain.sandbox.root_url, "--usdt-contract", USDT)
    assert out.startswith("waiting: in a block that is not solidified yet")
    world.solidify()
    code, out, _ = run(world, capsys, "recheck", tx, "--node-url",
                       world.chain.sandbox.root_url, "--usdt-contract", USDT, "--by", "ana")
    assert code == 0
    assert out.splitlines()[0] == "proven: proven"
    assert "credited 2000000 units to" in out
    assert world.rows("SELECT tx_hash, credited_by FROM credited_deposits") == [
        (tx, "recheck by ana")]
    code, _, err = run(world, capsys, "recheck", tx, "--node-url", "http://127.0.0.1:9")
    assert code == 1 and "no waiting or disputed claim" in err


def test_a_conn_id_that_names_no_connection_is_a_setup_error(world, capsys, monkeypatch):
    """``--conn-id`` with a typo: exit 2 naming it, nothing proven or credited (it was
    Airflow's not-found, a traceback)."""
    tx = world.transfer("2")
    world.stored(tx)
    world.sweep()
    monkeypatch.delenv("AIRFLOW_CONN_TRON_NOD_DEFAULT", raising=False)
    code, _, err = run(world, capsys, "recheck", tx, "--conn-id", "tron_nod_default")
    assert code == 2
    assert "--conn-id 'tron_nod_default' names no connection; deposit proofs need" in err
    assert world.rows("SELECT tx_hash FROM credited_deposits") == []


def test_there_is_no_manual_credit(world, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--ledger", world.ledger_url, "credit", "ab" * 32])
    assert exit_.value.code == 2
    assert "invalid choice: 'credit'" in capsys.readouterr().err


def test_a_ledger_url_that_cannot_be_used_is_a_setup_error(capsys):
    assert cli.main(["--ledger", "mysql://x/y", "list"]) == 2
    assert "unsupported store backend" in capsys.readouterr().err


def legacy_row(world: DepositWorld, tx_hash: str, amount: str, token: str = "USDT") -> None:
    """A row as a ledger of version 2 credited it (the migration keeps it so): the callback's
    word, keyed by the transaction alone."""
    with world.ledger() as ledger, ledger.db.write() as conn:
        conn.execute(sa.text(
            "INSERT INTO credited_deposits (tx_hash, log_index, to_address, from_address, "
            "amount, token, block_number, credited_at, source) VALUES (:tx, -1, :to, :frm, "
            ":amount, :token, 1, '2026-01-01T00:00:00+00:00', 'legacy')"),
            {"tx": tx_hash, "to": world.address, "frm": random_address(), "amount": amount,
             "token": token})


def check_prove_legacy(world: DepositWorld, capsys) -> None:
    real = world.transfer("10", callback=False)
    inflated = world.transfer("1", callback=False)
    twice = world.transfer("4", callback=False, times=2)  # one transaction, two deposits
    missing = secrets.token_hex(32)
    for tx, amount in ((real, "10"), (inflated, "1000"), (twice, "4"), (missing, "5000")):
        legacy_row(world, tx, amount)
    world.solidify()
    before = world.sweep()  # a sweep never credits a legacy row's transaction again
    assert before == []
    node = ["--node-url", world.chain.sandbox.root_url, "--usdt-contract", USDT]
    code, out, _ = run(world, capsys, "prove-legacy", *node, "--by", "ana")
    assert code == 0
    assert f"PROVEN     {real}  10 USDT to {world.address}: now credited by the chain's " \
           "record (log 0: 10000000 units)" in out
    assert "(log 0: 4000000 units, log 1: 4000000 units)" in out
    assert f"DISPUTED   {inflated}  1000 USDT to {world.address}: the chain moved another " \
           "amount to this address (the callback says 1000); the row stays" in out
    assert f"DISPUTED   {missing}  5000 USDT to {world.address}: no such transaction" in out
    assert out.splitlines()[-1] == "2 legacy rows left"
    rows = world.rows("SELECT tx_hash, log_index, amount, source FROM credited_deposits "
                      "ORDER BY tx_hash, log_index")
    assert sorted(rows) == sorted([
        (real, 0, "10", "callback"), (twice, 0, "4", "callback"), (twice, 1, "4", "callback"),
        (inflated, -1, "1000", "legacy"), (missing, -1, "5000", "legacy")])
    states = dict(world.rows("SELECT tx_hash, reason FROM deposit_claims WHERE state = "
                             "'disputed'"))
    assert states == {inflated: "other_amount", missing: "not_found"}
    # Again: nothing credited twice; the disputes stay open for a person.
    code, out, _ = run(world, capsys, "prove-legacy", *node)
    assert code == 0 and "PROVEN" not in out and out.splitlines()[-1] == "2 legacy rows left"
    assert world.rows("SELECT count(*) FROM credited_deposits WHERE log_index >= 0") == [(3,)]
    with world.ledger() as ledger:
        assert ledger.totals("USDT") == {world.address: 18_000_000}
    code, out, _ = run(world, capsys, "dismiss", missing, "--note", "never on chain")
    assert code == 0


def test_prove_legacy_on_sqlite(world, capsys):
    check_prove_legacy(world, capsys)


@pytest.mark.postgres
def test_prove_legacy_on_postgresql(pg_world, capsys):
    check_prove_legacy(pg_world, capsys)
