"""The chain in the state file: a restarted sandbox continues its chain, and a state from
before the chain had blocks or staked bandwidth opens and continues from its head."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tronpy.tron import Transaction

from support.chain import Chain
from support.sandbox import sandbox_config
from tronenergy_protocol.address import random_address
from tronenergy_sandbox import SandboxServer
from tronenergy_sandbox.database import SCHEMA
from tronenergy_sandbox.world import World


def test_a_restarted_sandbox_continues_its_chain(tmp_path: Path):
    state = str(tmp_path / "sandbox.db")
    with SandboxServer(sandbox_config(state=state, time_scale=0.01)) as server:
        chain = Chain(server)
        key, owner = chain.account(usdt="5")
        to = random_address()
        sent = chain.usdt(owner, to, 2_000_000).build().sign(key).broadcast()
        receipt = sent.wait(timeout=10, interval=0.05)
        head = chain.head()
    with SandboxServer(sandbox_config(state=state, time_scale=0.01)) as server:
        chain = Chain(server)
        assert chain.head() >= head
        assert chain.info(sent.txid) == receipt
        assert chain.contract().functions.balanceOf(to) == 2_000_000
        assert [t["txid"] for t in chain.transactions(owner=owner)] == [sent.txid]
        shown = chain.tron.get_transaction(sent.txid)  # the same signed transaction again
        again = Transaction(shown["raw_data"], txid=sent.txid, permission=None,
                            signature=shown["signature"])
        assert chain.raw_broadcast(again, visible=True)["code"] == "DUP_TRANSACTION_ERROR"


OLD_WALLETS = """
CREATE TABLE wallets (
    address TEXT PRIMARY KEY, trx_sun INTEGER NOT NULL DEFAULT 0, usdt_units INTEGER,
    energy_staked INTEGER NOT NULL DEFAULT 0, energy_used INTEGER NOT NULL DEFAULT 0,
    free_net_used INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL);
"""


def test_a_state_from_before_the_chain_opens_at_its_head(tmp_path: Path):
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript(SCHEMA + OLD_WALLETS)
    old.execute("INSERT INTO meta VALUES ('block_number', '68000123')")
    old.execute("INSERT INTO wallets (address, trx_sun, created_at) VALUES ('TOld', 5, 0)")
    old.commit()
    old.close()
    world = World(str(path))
    try:
        assert world.head_number() == 68_000_123
        wallet = world.set_bandwidth("TOld", staked=300, used=None)
        assert (wallet["trx_sun"], wallet["net_limit"], wallet["net_used"]) == (5, 300, 0)
    finally:
        world.close()
