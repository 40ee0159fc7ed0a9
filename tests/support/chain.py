"""The sandbox's chain from tests: an unmodified tronpy client, funded keys, the manual clock.

``Chain`` wraps one sandbox: ``account()`` makes a key whose address holds TRX and
USDT on the chain (through the control API), ``usdt()`` / ``trx()`` build transfers
with tronpy exactly as a payout sender would, ``blocks(n)`` moves a manual clock by
``n`` blocks, and ``raw_broadcast`` shows java-tron's answer as sent (code and the
hex message), which tronpy turns into exceptions.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import requests
from tronpy import Tron
from tronpy.contract import Contract
from tronpy.keys import PrivateKey
from tronpy.providers import HTTPProvider
from tronpy.tron import Transaction, TransactionBuilder

from airflow_provider_tronenergy.node.transactions import (
    RefBlock,
    UnsignedTransfer,
    trx_transfer_contract,
)
from support.control import Control
from support.orders import ManualClock
from support.sandbox import running_sandbox
from tronenergy_sandbox import SandboxServer

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
FEE_LIMIT = 30_000_000
"""30 TRX: enough for a first-time USDT transfer burned at 100 sun per energy (13.03 TRX)."""


@contextmanager
def manual_chain(**config: Any) -> Iterator[Chain]:
    """A sandbox whose clock (hence its blocks) moves only when the test says so.

    The clock starts at the sandbox's first block, so ``blocks(n)`` lands on block times.
    """
    clock = ManualClock()
    with running_sandbox(time_scale=1.0, clock=clock, **config) as server:
        world = server.state.world
        clock.now = world.block_time(world.head_number())
        yield Chain(server)


class Chain:
    """One sandbox's chain through tronpy and the control API."""

    def __init__(self, sandbox: SandboxServer) -> None:
        self.sandbox = sandbox
        self.control = Control(sandbox)
        self.tron = Tron(HTTPProvider(sandbox.root_url + "/"))
        self._usdt: Contract | None = None

    @property
    def clock(self) -> ManualClock:
        return self.control.clock

    @property
    def block_seconds(self) -> float:
        return float(self.sandbox.state.world.block_seconds)

    def blocks(self, count: int) -> None:
        """Move the manual clock by ``count`` blocks."""
        self.clock.advance(count * self.block_seconds)

    def head(self) -> int:
        return int(self.control.call("GET", "/chain")["head"])

    def account(self, *, trx: str | None = "100", usdt: str | None = None,
                staked: int | None = None) -> tuple[PrivateKey, str]:
        """A new key and its address, activated with ``trx`` and holding ``usdt``."""
        key = PrivateKey.random()
        address = key.public_key.to_base58check_address()
        self.control.wallet(address, trx=trx, usdt=usdt, staked=staked)
        return key, address

    def contract(self) -> Contract:
        """USDT as tronpy reads it from ``wallet/getcontract``."""
        if self._usdt is None:
            self._usdt = self.tron.get_contract(USDT)
        return self._usdt

    def estimate(self, owner: str, to: str, units: int = 1) -> int | None:
        """The node's energy estimate for a USDT transfer now (the provider's client)."""
        from airflow_provider_tronenergy.node.client import TronNodeClient

        with TronNodeClient(self.sandbox.root_url, usdt_contract=USDT) as node:
            return node.estimate_transfer_energy(owner, to, units)

    def usdt(self, owner: str, to: str, units: int,
             fee_limit: int = FEE_LIMIT) -> TransactionBuilder:
        """A USDT ``transfer(to, units)`` from ``owner``, built the way tronpy builds it."""
        method = self.contract().functions.transfer
        return method(to, units).with_owner(owner).fee_limit(fee_limit)

    def trx(self, owner: str, to: str, sun: int) -> TransactionBuilder:
        return self.tron.trx.transfer(owner, to, sun)

    def expiring(self, builder: TransactionBuilder, after_head_ms: int = 60_000
                 ) -> TransactionBuilder:
        """Expire ``after_head_ms`` after the head block's time (a manual clock runs apart)."""
        head_ms = self.tron.get_latest_block()["block_header"]["raw_data"]["timestamp"]
        return builder.expiration(head_ms - int(time.time() * 1000) + after_head_ms)

    def sent(self, builder: TransactionBuilder, key: PrivateKey) -> str:
        """Build (online), sign and broadcast; the txID."""
        txn = builder.build().sign(key)
        return str(txn.broadcast().txid)

    def raw_broadcast(self, txn: Transaction, *, visible: bool = False) -> dict[str, Any]:
        """``wallet/broadcasttransaction`` as java-tron answers it, message decoded;
        ``visible`` for a transaction whose addresses are base58 (java-tron reads hex
        unless the body says ``"visible": true``)."""
        body = {**txn.to_json(), "visible": True} if visible else txn.to_json()
        answer: dict[str, Any] = requests.post(
            f"{self.sandbox.root_url}/wallet/broadcasttransaction", json=body,
            timeout=10).json()
        if "message" in answer and not visible:  # Return.message: text with visible
            answer["message"] = bytes.fromhex(answer["message"]).decode()
        return answer

    def info(self, txid: str, *, solid: bool = False) -> dict[str, Any]:
        """``gettransactioninfobyid`` (``{}`` while unknown)."""
        path = "walletsolidity" if solid else "wallet"
        answer: dict[str, Any] = self.tron.provider.make_request(
            f"{path}/gettransactioninfobyid", {"value": txid, "visible": True})
        return answer

    def node_post(self, path: str, body: dict[str, Any]) -> Any:
        """``POST /wallet/<path>`` on the sandbox's node, answered 200; its JSON."""
        response = requests.post(f"{self.sandbox.root_url}/wallet/{path}", json=body,
                                 timeout=10)
        assert response.status_code == 200, response.text
        return response.json()

    def wallet(self, address: str) -> dict[str, Any]:
        """What the chain holds for ``address``: TRX in sun, USDT in units, resources."""
        return dict(self.control.call("GET", f"/addresses/{address}/wallet"))

    def transactions(self, **query: str) -> list[dict[str, Any]]:
        """``GET /sandbox/chain/transactions``."""
        response = self.control.session.get(f"{self.control.root}/chain/transactions",
                                            params=query, timeout=10)
        assert response.status_code == 200, response.text
        return list(json.loads(response.text, parse_float=Decimal)["data"])


def trx_transfer(node: Any, owner: str, to: str, amount_sun: int,
                 permission_id: int = 0) -> UnsignedTransfer:
    """A TRX transfer built offline on the node's head block, valid for a minute."""
    head = node.get_now_block()
    return trx_transfer_contract(owner=owner, to=to, amount_sun=amount_sun,
                                 ref=RefBlock(head.number, head.block_id, head.timestamp_ms),
                                 expiration_ms=head.timestamp_ms + 60_000,
                                 timestamp_ms=head.timestamp_ms, permission_id=permission_id)


def signed_by(tx: UnsignedTransfer, *keys: PrivateKey) -> dict[str, Any]:
    """``tx`` with a signature of each key, in order."""
    return tx.signed(*[bytes.fromhex(k.sign_msg_hash(bytes.fromhex(tx.txid)).hex())
                       for k in keys])
