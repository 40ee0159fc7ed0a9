"""A deposit world over real sockets (tests/deposits): the sandbox (service and TRON node, a
manual clock), the real receiver storing its signed callbacks, a watched deposit address, a
node client and a ledger (SQLite, or PostgreSQL for the races)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy.callbacks import CallbackStore, create_app
from airflow_provider_tronenergy.deposits import DepositLedger, ProofSettings, Prover
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.transfers import ChainTransfer
from support.callbacks import ServedApp
from support.chain import USDT, Chain, manual_chain
from support.signed import SignedSession
from tronenergy_protocol.address import random_address

SOLID = 20
"""Blocks after which a block is solidified in the sandbox (19 behind the head)."""
DEADLINE = timedelta(seconds=30)


class DepositWorld:
    """The sandbox chain, its service's callbacks into the real receiver, and a ledger."""

    def __init__(self, chain: Chain, store: CallbackStore, receiver: ServedApp,
                 ledger_url: str) -> None:
        self.chain, self.store, self.receiver = chain, store, receiver
        self.api = SignedSession.of(chain.sandbox)
        self.ledger_url = ledger_url
        self.node = TronNodeClient(chain.sandbox.root_url, usdt_contract=USDT, max_retries=0)
        self.address = self.watch()

    def watch(self, address: str | None = None) -> str:
        return self.api.watch(self.receiver.callback_url, address, tokens=["TRX", "USDT"])

    def prover(self, **settings: Any) -> Prover:
        return Prover(self.node, ProofSettings(**{"deadline": DEADLINE, **settings}),
                      clock=self.chain.clock)

    def ledger(self) -> DepositLedger:
        return DepositLedger(self.ledger_url)

    def attack(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self.api.control("POST", f"/attacks/{path}", body))

    def transfer(self, amount: str, *, to: str | None = None, token: str = "USDT",
                 **attack: Any) -> str:
        """A transfer on chain (``attack``: ``contract``, ``failed``, ``callback``)."""
        body = {"from": random_address(), "to": to or self.address, "amount": amount,
                "token": token, **attack}
        return str(self.attack("transfer", body)["tx_hash"])

    def forge(self, amount: str, *, tx_hash: str | None = None, to: str | None = None,
              token: str = "USDT") -> str:
        """The service sends a signed callback saying this, whatever the chain holds."""
        body: dict[str, Any] = {"to": to or self.address, "amount": amount, "token": token,
                                "tx_hash": tx_hash or secrets.token_hex(32)}
        return str(self.attack("callback", body)["tx_hash"])

    def stored(self, *tx_hashes: str, timeout: float = 15) -> None:
        """Wait until the receiver has stored each of these callbacks."""
        deadline = time.monotonic() + timeout
        while any(self.store.get_transfer(h) is None for h in tx_hashes):
            assert time.monotonic() < deadline, f"callbacks not stored: {tx_hashes}"
            time.sleep(0.02)

    def solidify(self) -> None:
        self.chain.blocks(SOLID)

    def sweep(self, *, addresses: list[str] | None = None,
              **settings: Any) -> list[ChainTransfer]:
        with self.ledger() as ledger:
            return ledger.credit_from_store(addresses or [self.address],
                                            prover=self.prover(**settings),
                                            credited_by="test", store=self.store)

    def rows(self, sql: str = "SELECT tx_hash, log_index, amount, source FROM "
             "credited_deposits ORDER BY tx_hash, log_index") -> list[tuple[Any, ...]]:
        with self.ledger() as ledger, ledger.engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(sql)).all()]

    def close(self) -> None:
        self.node.close()


def urls(backend: str, request: pytest.FixtureRequest, tmp_path: Any) -> tuple[str, dict[str,
                                                                                     Any], str]:
    """(store url, store kwargs, ledger url) on one backend."""
    if backend == "sqlite":
        return (f"sqlite:///{tmp_path / 'callbacks.db'}", {},
                f"sqlite:///{tmp_path / 'ledger.db'}")
    url, schema = request.getfixturevalue("postgres_url"), request.getfixturevalue("pg_schema")
    ledger = sa.engine.make_url(url).update_query_dict(
        {"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
    return url, {"schema": schema}, ledger


def open_world(request: pytest.FixtureRequest, tmp_path: Any,
               backend: str) -> Iterator[DepositWorld]:
    """A deposit world on ``backend`` ("sqlite" or "postgresql"), closed after the test."""
    store_url, kwargs, ledger_url = urls(backend, request, tmp_path)
    store = CallbackStore(store_url, **kwargs)
    with manual_chain() as chain, ServedApp(create_app(
            store, chain.sandbox.webhook_secret)) as receiver:
        world = DepositWorld(chain, store, receiver, ledger_url)
        try:
            yield world
        finally:
            world.close()
            store.close()


def settings_world(request: pytest.FixtureRequest, tmp_path: Any,
                   monkeypatch: pytest.MonkeyPatch) -> Iterator[DepositWorld]:
    """A deposit world on SQLite whose store and ledger are the process's settings (as a
    worker's or the triggerer's: ``TRONENERGY_CALLBACK_STORE``, ``TRONENERGY_DEPOSITS_DB``),
    the per-process stores and ledgers forgotten around it."""
    from airflow_provider_tronenergy.callbacks import access
    from airflow_provider_tronenergy.callbacks.store import ENV_STORE_URL
    from airflow_provider_tronenergy.deposits import ENV_LEDGER_URL, handover

    for found in open_world(request, tmp_path, "sqlite"):
        monkeypatch.setenv(ENV_STORE_URL, str(found.store.url))
        monkeypatch.setenv(ENV_LEDGER_URL, found.ledger_url)
        access.forget_stores()
        handover.forget_ledgers()
        yield found
    access.forget_stores()
    handover.forget_ledgers()
