"""A stored callback checked against the chain: proven, waiting, or disputed with a reason.

A callback's signature proves only that whoever holds the webhook secret sent it. What
is credited is what the chain holds: the transaction's receipt, read through a
``tron_node`` client, from the solidity API by default (nothing read there can be
reverted) or, with ``confirmations`` N, from the head once the block is N blocks deep.
The callback is a hint: it must match one transfer exactly (recipient and amount), and
then every transfer of the token into a watched address in that transaction is
credited, at the chain's figures (:mod:`airflow_provider_tronenergy.node.transfers`
reads them: a ``Transfer`` log of the configured contract, USDT's by default; a TRX
``TransferContract`` that succeeded).

A node that fails to answer decides nothing: the claim waits and is tried again. A
transaction the node does not know is waited for until ``deadline`` after the callback
arrived, then disputed.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Final

from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.transfers import TRX, ChainTransfer

if TYPE_CHECKING:
    from airflow_provider_tronenergy.callbacks.events import StoredTransfer
    from airflow_provider_tronenergy.node.client import TronNodeClient
    from airflow_provider_tronenergy.node.transfers import TransferReceipt

PROVEN: Final = "proven"
WAITING: Final = "waiting"
DISPUTED: Final = "disputed"
USDT: Final = "USDT"
DECIMALS: Final = 6
"""Both tokens a callback names have 6 decimals (sun; USDT's micro-units)."""
DEFAULT_DEADLINE: Final = timedelta(minutes=10)
NODE_NEEDED: Final = ("deposit proofs need a TRON node to check each callback against the "
                      "chain before it is credited")
"""What a missing ``tron_node_conn_id`` of a prover is refused with (``ConnectionMissing``)."""

REASONS: Final = {
    # waiting
    "not_solid": "in a block that is not solidified yet",
    "not_deep": "in a block not yet as many blocks deep as required",
    "not_found_yet": "not on chain yet (within the deadline)",
    "node_error": "the node did not answer (tried again on the next sweep)",
    # disputed
    "not_found": "no such transaction on chain after the deadline",
    "failed": "the transaction failed on chain",
    "other_contract": "the chain moved another contract's token (a look-alike), not the "
                      "configured one",
    "not_a_transfer": "the transaction moved none of the token",
    "other_amount": "the chain moved another amount to this address",
    "other_recipient": "the chain moved the token to another address",
    "unknown_token": "a token this ledger does not credit",
}
"""Why a claim waits or is disputed: the code kept with it, and what it means."""


@dataclass(frozen=True)
class Said:
    """What a callback claims: the hint a proof starts from, never what is credited."""

    tx_hash: str
    to_address: str
    amount: str
    token: str
    received_at_ms: int
    from_address: str = ""
    block_number: int = 0
    store_id: int = 0

    @classmethod
    def of(cls, t: StoredTransfer) -> Said:
        return cls(tx_hash=t.tx_hash, to_address=t.to_address, amount=t.amount_text,
                   token=t.token.upper(), received_at_ms=t.received_at_ms,
                   from_address=t.from_address, block_number=t.block_number, store_id=t.id)

    @classmethod
    def from_json(cls, text: str) -> Said:
        return cls(**json.loads(text))

    def to_json(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True)

    @property
    def units(self) -> int | None:
        """The amount in the token's smallest units; None if the chain could not hold it."""
        try:
            scaled = Decimal(self.amount).scaleb(DECIMALS)
        except InvalidOperation:
            return None
        if not scaled.is_finite() or scaled != scaled.to_integral_value() or scaled <= 0:
            return None
        return int(scaled)


@dataclass(frozen=True)
class Verdict:
    """A proof's outcome; ``transfers`` (proven only) are what to credit."""

    state: str
    reason: str
    token: str
    transfers: tuple[ChainTransfer, ...] = ()
    chain: dict[str, Any] = field(default_factory=dict)
    """What the chain says (JSON-safe): its block, result and transfers; {} when not read."""
    detail: str = ""

    @property
    def meaning(self) -> str:
        return REASONS.get(self.reason, self.reason)


@dataclass(frozen=True)
class ProofSettings:
    """How a callback is proven.

    :param confirmations: None (default) reads the solidity API: proven once solidified.
        N reads the head and accepts a block N blocks below it (faster, revertible).
    :param deadline: how long after a callback arrived its transaction may be unknown
        to the node before the claim is disputed.
    :param contract: the token contract a ``USDT`` callback is proven by: the node
        connection's ``usdt_contract`` (None, the default); another is refused when the
        :class:`Prover` is made (a ``USDT`` credit is always the network's USDT).
    """

    confirmations: int | None = None
    deadline: timedelta = DEFAULT_DEADLINE
    contract: str | None = None

    def __post_init__(self) -> None:
        if self.confirmations is not None and (isinstance(self.confirmations, bool)
                                               or self.confirmations < 1):
            raise ValueError("confirmations must be None (solidified) or a whole number >= 1")
        if self.deadline < timedelta(0):
            raise ValueError("deadline must not be negative")


class Prover:
    """``Prover(node, settings).prove(said, addresses)``: one callback against the chain."""

    def __init__(self, node: TronNodeClient, settings: ProofSettings | None = None,
                 *, clock: Any = time.time) -> None:
        self.node = node
        self.settings = settings or ProofSettings()
        self.contract = self.settings.contract or node.usdt_contract
        if self.contract != node.usdt_contract:  # a USDT credit is the network's USDT only
            raise ValueError(f"ProofSettings.contract {self.contract} is not the node "
                             f"connection's USDT ({node.usdt_contract}): a callback saying "
                             "USDT is proven by that contract only (another token is credited "
                             "by the deposit scan, by its contract); leave contract unset")
        self._clock = clock

    def with_node(self, node: Any) -> Prover:
        """The same proof through another node (a sweep's, which counts its requests)."""
        return Prover(node, self.settings, clock=self._clock)

    def prove(self, said: Said, addresses: frozenset[str]) -> Verdict:
        """Read the chain once for ``said`` and decide; a node failure is ``waiting``."""
        if said.token not in (USDT, TRX):
            return Verdict(DISPUTED, "unknown_token", said.token,
                           detail=f"callbacks of {said.token!r} are not credited")
        try:
            return self._prove(said, addresses | {said.to_address})
        except NodeError as exc:
            return Verdict(WAITING, "node_error", said.token, detail=str(exc)[:500])

    def _prove(self, said: Said, addresses: frozenset[str]) -> Verdict:
        solid = self.settings.confirmations is None
        receipt = self.node.get_transfer_receipt(said.tx_hash, contract=self.contract,
                                                 solidified=solid)
        if receipt is None:
            if solid and self.node.get_transaction_info(said.tx_hash) is not None:
                return Verdict(WAITING, "not_solid", said.token)
            waited = self._clock() * 1000 - said.received_at_ms
            if waited < self.settings.deadline.total_seconds() * 1000:
                return Verdict(WAITING, "not_found_yet", said.token)
            return Verdict(DISPUTED, "not_found", said.token,
                           detail=f"unknown to the node {waited / 60000:.0f} min after the "
                                  "callback arrived")
        if not solid:
            head = self.node.get_now_block().number
            depth = head - receipt.info.block_number
            if depth < (self.settings.confirmations or 0):
                return Verdict(WAITING, "not_deep", said.token,
                               chain=_view(receipt, self.contract),
                               detail=f"{depth} of {self.settings.confirmations} blocks deep")
        chain = _view(receipt, self.contract)
        if receipt.info.failed:
            return Verdict(DISPUTED, "failed", said.token, chain=chain,
                           detail=f"receipt result {receipt.info.receipt_result or 'FAILED'}")
        if said.token == TRX:
            return self._trx(said, receipt, chain)
        return _judge(said, receipt.transfers, receipt.others, addresses, chain)

    def _trx(self, said: Said, receipt: TransferReceipt, chain: dict[str, Any]) -> Verdict:
        transfer = self.node.get_trx_transfer(receipt.info)
        chain = {**chain, "transfers": [] if transfer is None else [transfer.to_dict()]}
        if transfer is None:
            return Verdict(DISPUTED, "not_a_transfer", TRX, chain=chain,
                           detail="not a TransferContract that succeeded")
        return _judge(said, (transfer,), receipt.transfers + receipt.others,
                      frozenset({said.to_address}), chain)


def _judge(said: Said, transfers: tuple[ChainTransfer, ...], others: tuple[ChainTransfer, ...],
           addresses: frozenset[str], chain: dict[str, Any]) -> Verdict:
    """The callback against what the chain moved: one exact match proves the transaction."""
    units = said.units
    if any(t.to_address == said.to_address and t.units == units for t in transfers):
        mine = tuple(t for t in transfers if t.to_address in addresses)
        return Verdict(PROVEN, PROVEN, said.token, transfers=mine, chain=chain)
    if any(t.to_address == said.to_address for t in transfers):
        return Verdict(DISPUTED, "other_amount", said.token, chain=chain,
                       detail=f"the callback says {said.amount}")
    if transfers:
        return Verdict(DISPUTED, "other_recipient", said.token, chain=chain)
    if others:
        return Verdict(DISPUTED, "other_contract", said.token, chain=chain,
                       detail="Transfer logs of " + ", ".join(sorted(
                           {str(t.contract) for t in others})))
    return Verdict(DISPUTED, "not_a_transfer", said.token, chain=chain)


def _view(receipt: TransferReceipt, contract: str) -> dict[str, Any]:
    """What the chain says about a transaction, for a person (JSON-safe)."""
    info = receipt.info
    return {"block_number": info.block_number, "block_timestamp_ms": info.block_timestamp_ms,
            "solidified": info.solidified, "failed": info.failed,
            "receipt_result": info.receipt_result, "contract": contract,
            "transfers": [t.to_dict() for t in receipt.transfers],
            "other_contracts": [t.to_dict() for t in receipt.others]}
