"""What one node says about time and receipts, checked before a payout depends on it.

A payout is signed, judged dead or confirmed on a node's word: its head block's time
(an expiration, "past its expiration"), its solidified block (proof that a transaction
can never execute) and its receipts (paid, and at what cost). A node that lags, lies or
mangles could make a payout paid twice or never, so :class:`ChainView` believes a block
only when:

* its time is not ahead of this worker's clock by more than ``tolerance_s`` (blocks
  come from the past; a head an hour ahead would make every pending transfer look
  expired);
* it does not go backwards: not older than a head (or solidified block) this view saw
  before, nor a head below the newest block a journaled transaction references, by
  more than the same tolerance (nodes behind one load balancer differ by a block or
  two; a node a minute behind is another chain's view);
* a solidified block is not above the head this view saw, and read by number
  (``getblockbynum``) it is the same block (id and time) the node called its newest.

A receipt counts only when the block it names, read by number, holds the transaction
at that time, and its energy and fee figures are what the chain's prices make of them
(:func:`figures_problem`). Anything else raises or reports :class:`UnreliableNode`: the
caller signs nothing and judges nothing on it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Final

from airflow_provider_tronenergy.errors import TronEnergyProviderError
from airflow_provider_tronenergy.node.chain_parameters import ChainParameters
from airflow_provider_tronenergy.node.errors import UnreliableNode
from airflow_provider_tronenergy.node.models import Block, BlockBody, TransactionInfo

__all__ = ["DEFAULT_TOLERANCE_S", "BudgetSpent", "ChainView", "UnreliableNode",
           "figures_problem"]

DEFAULT_TOLERANCE_S: Final = 60.0
"""How far a node's block time may run ahead of this worker's clock (clock skew)."""
MAX_TOLERANCE_S: Final = 3600.0
MAX_TRANSFER_ENERGY: Final = 1_000_000
"""No token transfer uses more (``node.client.MAX_TRANSFER_ENERGY``)."""


class BudgetSpent(TronEnergyProviderError):
    """A watch step's request budget ran out before a check could be made: try next step."""


def _always() -> bool:
    return True


def figures_problem(info: TransactionInfo, prices: ChainParameters,
                    signatures: int | None = None, *, trx: bool = False) -> str | None:
    """Why a payout's receipt figures cannot be the chain's, or None.

    A token transfer burns TRX for energy and bandwidth: ``energy_fee`` is the energy
    burned at the chain's price, ``net_fee`` whole bandwidth bytes at its price, and
    ``fee`` their sum, plus the chain's ``getMultiSignFee`` when it carries more than one
    signature (java-tron's ``TransactionUtil.buildTransactionInfoInstance`` adds the
    receipt's ``multiSignFee``, which has no field of its own: commit
    1e35f79a165424bbae319799d9aca92948b8f5c2; charged when the transaction has more than
    one signature, ``Manager.consumeMultiSignFee``). ``signatures``, the count of the
    signed bytes the journal holds, says which of the two the fee must be; unknown (None),
    either. (A price changed by a proposal since the receipt's block makes an honest
    receipt fail this too: it waits, logged, rather than being reported wrong.)

    ``trx``: a TRX ``TransferContract`` (``node/trx_costs.py`` cites java-tron's rules): no
    energy; ``net_fee`` whole bytes, or ``getCreateAccountFee`` when it created its
    recipient; and the fee may add ``getCreateNewAccountFeeInSystemContract`` (the
    transaction's ``ret.fee`` for an account created).
    """
    if trx and info.energy_usage_total:
        return f"a TRX transfer uses no energy; it says {info.energy_usage_total:,}"
    created = prices.create_new_account_fee_in_system_contract if trx else 0
    if info.energy_usage_total > MAX_TRANSFER_ENERGY:
        return (f"it used {info.energy_usage_total:,} energy; no token transfer uses more "
                f"than {MAX_TRANSFER_ENERGY:,}")
    if info.energy_fee != info.energy_burned * prices.energy_fee:
        return (f"it burned {info.energy_fee:,} sun for {info.energy_burned:,} energy, not "
                f"{prices.energy_fee:,} sun per energy")
    if info.net_fee % prices.transaction_fee and not (
            trx and info.net_fee == prices.create_account_fee):
        return (f"its bandwidth fee {info.net_fee:,} sun is not whole bytes at "
                f"{prices.transaction_fee:,} sun per byte")
    extra = info.fee - info.energy_fee - info.net_fee
    if signatures is None:
        allowed = {0, prices.multi_sign_fee}
        signed = "(plus, signed by several keys, the multi-sign fee"
    else:
        allowed = {prices.multi_sign_fee if signatures > 1 else 0}
        signed = (f"(signed by {signatures} keys: plus the multi-sign fee"
                  if signatures > 1 else "(signed by one key: no multi-sign fee of")
    allowed = {fee + account for fee in allowed for account in {0, created}}  # ret.fee
    if extra not in allowed:
        return (f"its fee {info.fee:,} sun is not its energy fee {info.energy_fee:,} plus its "
                f"bandwidth fee {info.net_fee:,} {signed} {prices.multi_sign_fee:,})")
    return None


class ChainView:
    """One node's head, solidified block and receipts, each checked (see the module).

    :param clock: this worker's clock (epoch seconds): a node's block times are checked
        against it, never the other way round.
    :param tolerance_s: how far ahead of ``clock`` a block's time may be.
    :param name: how messages name this node ("the node", "the confirming node").

    ``spend`` is called before each request (a watch step's budget); False raises
    :class:`BudgetSpent`. Blocks read by number are kept until :meth:`forget`.
    """

    def __init__(self, node: Any, *, clock: Callable[[], float] = time.time,
                 tolerance_s: float = DEFAULT_TOLERANCE_S, name: str = "the node") -> None:
        if not 0 <= tolerance_s <= MAX_TOLERANCE_S:
            raise ValueError(f"the clock tolerance must be 0 to {MAX_TOLERANCE_S:g} seconds")
        self.node, self.clock, self.tolerance_s, self.name = node, clock, tolerance_s, name
        self.spend: Callable[[], bool] = _always
        self._seen: dict[bool, Block] = {}
        self._blocks: dict[tuple[int, bool], BlockBody | None] = {}
        self._prices: ChainParameters | None = None
        self._reading = threading.Lock()  # a judge's threads read each block once

    def forget(self) -> None:
        """Drop the unsolidified blocks read by number (a new step: one may be replaced);
        a solidified block never changes."""
        self._blocks = {key: body for key, body in self._blocks.items()
                        if key[1] and body is not None}

    def _request(self) -> None:
        if not self.spend():
            raise BudgetSpent

    def now_ms(self) -> int:
        """This worker's clock, in ms."""
        return int(self.clock() * 1000)

    # -- the node's clock -------------------------------------------------------------------

    def head(self, *, floor: int = 0, by_number: bool = True) -> Block:
        """The head block, checked; ``floor``: the newest block a journaled transaction
        references (the head cannot be below it). ``by_number=False`` skips the
        block-by-number read (a watch step that decides nothing final on the head)."""
        self._request()
        block: Block = self.node.get_now_block()
        if block.number < floor - self._slack_blocks():
            raise UnreliableNode(f"{self.name}'s head block {block.number} is below block "
                                 f"{floor}, which a journaled transaction references: it "
                                 "lags or lies; nothing was signed or judged on it",
                                 path="wallet/getnowblock")
        self._check(block, solidified=False, by_number=by_number)
        return block

    def solid(self, *, by_number: bool = True) -> Block:
        """The newest solidified block, checked, and read by number on the solidity API
        (``by_number=False``: not, for a watch step's top block)."""
        self._request()
        block: Block = self.node.get_solid_block()
        head = self._seen.get(False)
        if head is not None and block.number > head.number:
            raise UnreliableNode(f"{self.name}'s solidified block {block.number} is above its "
                                 f"head {head.number}", path="walletsolidity/getnowblock")
        self._check(block, solidified=True, by_number=by_number)
        return block

    def _slack_blocks(self) -> int:
        """The tolerance in blocks (3 s each)."""
        return int(self.tolerance_s // 3)

    def _check(self, block: Block, *, solidified: bool, by_number: bool) -> None:
        what = "solidified block" if solidified else "head block"
        path = ("walletsolidity" if solidified else "wallet") + "/getnowblock"
        self._not_ahead(block, what, path)
        seen = self._seen.get(solidified)
        if seen is not None and (block.number < seen.number - self._slack_blocks()
                                 or block.timestamp_ms < seen.timestamp_ms
                                 - self.tolerance_s * 1000):
            raise UnreliableNode(f"{self.name}'s {what} went backwards: {block.number} at "
                                 f"{block.timestamp_ms} after {seen.number} at "
                                 f"{seen.timestamp_ms}; nothing was signed or judged on it",
                                 path=path)
        if by_number:
            body = self.block(block.number, solidified=solidified)
            if body is None or body.block != block:
                shown = "nothing" if body is None else (
                    f"id {body.block.block_id} at {body.block.timestamp_ms}")
                raise UnreliableNode(
                    f"{self.name}'s {what} {block.number} (id {block.block_id} at "
                    f"{block.timestamp_ms}) is not the block it returns by number ({shown}); "
                    "nothing was signed or judged on it", path=path)
        if seen is None or block.number > seen.number:
            self._seen[solidified] = block

    def _not_ahead(self, block: Block, what: str, path: str) -> None:
        ahead_ms = block.timestamp_ms - self.now_ms()
        if ahead_ms > self.tolerance_s * 1000:
            raise UnreliableNode(f"{self.name}'s {what} {block.number} is {ahead_ms / 1000:,.0f}"
                                 f" s ahead of this worker's clock (tolerance "
                                 f"{self.tolerance_s:g} s): not believed; nothing was signed "
                                 "or judged on it", path=path)

    def block(self, number: int, *, solidified: bool) -> BlockBody | None:
        """Block ``number`` read by number (kept until :meth:`forget`)."""
        key = (number, solidified)
        with self._reading:
            if key not in self._blocks:
                self._request()
                self._blocks[key] = self.node.get_block(number, solidified=solidified)
            return self._blocks[key]

    def prices(self) -> ChainParameters:
        """The chain's prices, read once per view."""
        if self._prices is None:
            self._request()
            self._prices = self.node.get_chain_parameters()
        return self._prices

    # -- receipts ---------------------------------------------------------------------------

    def receipt_problem(self, info: TransactionInfo, *, top: Block, solidified: bool,
                        signatures: int | None = None, trx: bool = False) -> str | None:
        """Why ``info`` is not a receipt the chain holds (None: it is): its block, read by
        number up to ``top``, must hold the transaction at the receipt's time, and its
        figures must be the chain's for a transaction of ``signatures`` signatures
        (:func:`figures_problem`)."""
        number = info.block_number
        if not 0 < number <= top.number:
            return f"it names block {number}, not one up to block {top.number}"
        body = self.block(number, solidified=solidified)
        if body is None:
            return f"{self.name} has no block {number} by number"
        if body.block.timestamp_ms - self.now_ms() > self.tolerance_s * 1000:
            return f"its block {number} is ahead of this worker's clock"
        if info.tx_hash not in body.txids:
            return f"block {number}, read by number, does not hold it"
        if info.block_timestamp_ms != body.block.timestamp_ms:
            return (f"it says block {number} is at {info.block_timestamp_ms}; the block says "
                    f"{body.block.timestamp_ms}")
        return figures_problem(info, self.prices(), signatures, trx=trx)
