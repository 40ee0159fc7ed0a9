"""``tronenergy-deposits``: list and show the claims the chain has not proven, recheck one
against the chain (the only way a claim is ever credited), dismiss one with a note."""

from __future__ import annotations

import json

import pytest

from airflow_provider_tronenergy.deposits import cli
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
