"""Whole blocks as a deposit scan reads them: a block's token transfers, a range of blocks.

Two reads, each one request for many transactions:

- ``gettransactioninfobyblocknum``: every receipt of one block, logs included. Its token
  transfers are read by the one rule, :func:`~.transfers.token_transfers`, after
  :func:`~.models.block_receipts` has checked the receipts (each names this block, once,
  with the block's one timestamp).
- ``getblockbylimitnext``: the blocks ``[start, end)``, at most :data:`MAX_BLOCK_RANGE`,
  transactions included, as java-tron's ``GetBlockByLimitNextServlet`` serves them
  (``framework/src/main/java/org/tron/core/services/http/GetBlockByLimitNextServlet.java``:
  ``endNum > startNum``, ``endNum - startNum <= BLOCK_LIMIT_NUM = 100``, else ``{}``;
  ``Wallet.getBlocksByLimitNext`` returns only the blocks the node has, so an answer may
  stop short of ``end``; ``Util.printBlockList`` prints ``{"block": [...]}``). Its TRX
  transfers are read by :func:`~.transfers.trx_transfer`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from airflow_provider_tronenergy.node.models import Block, block_receipts
from airflow_provider_tronenergy.node.transfers import ChainTransfer, token_transfers, trx_transfer
from tronenergy_protocol.ids import TX_HASH

MAX_BLOCK_RANGE: Final = 100
"""java-tron's ``BLOCK_LIMIT_NUM``: a ``getblockbylimitnext`` answers at most 100 blocks."""


@dataclass(frozen=True)
class BlockTokenTransfers:
    """One block's transfers of one token, read from its receipts.

    ``txids`` are the transactions the receipts name (every transaction of the block,
    in block order); ``transfers`` the token's ``Transfer`` logs among them.
    """

    number: int
    txids: tuple[str, ...]
    transfers: tuple[ChainTransfer, ...]


@dataclass(frozen=True)
class RangeBlock:
    """One block of a ``getblockbylimitnext`` answer: its header, txIDs and TRX transfers."""

    block: Block
    parent_id: str
    txids: tuple[str, ...]
    trx: tuple[ChainTransfer, ...]


def block_token_transfers(number: int, payload: Any, *, contract: str,
                          solidified: bool) -> BlockTokenTransfers:
    """``gettransactioninfobyblocknum``'s answer as the token transfers it records."""
    receipts = block_receipts(number, payload, solidified=solidified)
    transfers: list[ChainTransfer] = []
    for info, item in zip(receipts, payload, strict=True):
        transfers += token_transfers(info.tx_hash, item, contract=contract, block_number=number,
                                     block_timestamp_ms=info.block_timestamp_ms)
    return BlockTokenTransfers(number, tuple(r.tx_hash for r in receipts), tuple(transfers))


def block_range(start: int, end: int, payload: Any) -> list[RangeBlock]:
    """``getblockbylimitnext``'s answer for ``[start, end)``: the blocks from ``start`` on,
    consecutive, each its parent's child; fewer than asked when the node has no more.

    A block out of order, one outside the range, or one whose ``parentHash`` is not the
    previous block's id is refused: a scan skipping or doubling a block could lose a
    deposit.
    """
    if not isinstance(payload, dict):
        raise ValueError(f"node answer is not an object: {type(payload).__name__}")
    items = payload.get("block") or []
    if not isinstance(items, list):
        raise ValueError("node answer's 'block' is not a list")
    blocks: list[RangeBlock] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ValueError(f"block {index} of the answer is not an object")
        read = _range_block(item)
        expected = start + index
        if read.block.number != expected or expected >= end:
            raise ValueError(f"node answered block {read.block.number} where block {expected} "
                             f"of [{start}, {end}) belongs")
        if blocks and read.parent_id != blocks[-1].block.block_id:
            raise ValueError(f"block {expected}'s parent is not block {expected - 1}'s id")
        blocks.append(read)
    return blocks


def _range_block(item: dict[str, Any]) -> RangeBlock:
    block = Block.from_node(item)
    raw = item["block_header"]["raw_data"]
    parent = raw.get("parentHash", "")
    if not isinstance(parent, str) or not TX_HASH.fullmatch(parent):
        raise ValueError(f"block {block.number}'s parentHash is not 64 hex characters")
    transactions = item.get("transactions") or []
    if not isinstance(transactions, list):
        raise ValueError(f"block {block.number}'s transactions is not a list")
    txids: list[str] = []
    seen: set[str] = set()
    trx: list[ChainTransfer] = []
    for transaction in transactions:
        if not isinstance(transaction, dict):
            raise ValueError(f"a transaction of block {block.number} is not an object")
        found = trx_transfer(transaction, block_number=block.number,
                             block_timestamp_ms=block.timestamp_ms)
        txid = str(transaction["txID"]).lower()
        if txid in seen:
            raise ValueError(f"block {block.number} holds transaction {txid} twice")
        seen.add(txid)
        txids.append(txid)
        if found is not None:
            trx.append(found)
    return RangeBlock(block, parent.lower(), tuple(txids), tuple(trx))
