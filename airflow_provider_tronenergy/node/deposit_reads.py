"""The node reads deposits are proven and scanned by: what a transaction or a block moved.

A part of :class:`~.client.TronNodeClient` (its base), kept apart so the client's module
holds one job: each read here is one request, its answer checked, its transfers read by
the one rule of :mod:`~.transfers`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from airflow_provider_tronenergy.node.blocks import (
    MAX_BLOCK_RANGE,
    BlockTokenTransfers,
    RangeBlock,
    block_range,
    block_token_transfers,
)
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.models import TransactionInfo
from airflow_provider_tronenergy.node.transfers import ChainTransfer, TransferReceipt, trx_transfer
from tronenergy_protocol.address import is_valid_address
from tronenergy_protocol.ids import TX_HASH

T = TypeVar("T")


def valid_block_number(number: int) -> int:
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ValueError(f"number must be a block number of 1 or more, got {number!r}")
    return number


def valid_address(value: str, what: str) -> str:
    if not is_valid_address(value):
        raise ValueError(f"{what} is not a valid TRON address (base58check): {value!r}")
    return value


class TransferReads:
    """Transfers as one transaction or whole blocks record them (the client's base)."""

    usdt_contract: str
    _provider: Any

    def _call(self, what: str, call: Callable[[], T]) -> T:
        raise NotImplementedError  # the client's: one request, its errors named

    @staticmethod
    def _checked(what: str, read: Callable[[], T]) -> T:
        raise NotImplementedError  # the client's: a malformed answer as a NodeError

    # -- block-level reads: whole blocks for a scan (one request per block or range) ------------

    def get_block_token_transfers(self, number: int, *, contract: str | None = None,
                                  solidified: bool = False) -> BlockTokenTransfers:
        """The transfers of ``contract``'s token (USDT's by default) block ``number`` records.

        One ``gettransactioninfobyblocknum`` request, its receipts checked as
        :meth:`get_block_receipts` checks them, its logs read by the one rule
        (``node.transfers.token_transfers``). ``[]`` (no transaction, or a block not yet
        produced or solidified) reads as none: read the head first.
        """
        token = valid_address(contract or self.usdt_contract, "contract")
        valid_block_number(number)
        path = ("walletsolidity" if solidified else "wallet") + "/gettransactioninfobyblocknum"
        payload = self._call(path, lambda: self._provider.json_answer(
            path, {"num": number, "visible": True}))
        return self._checked(path, lambda: block_token_transfers(
            number, payload, contract=token, solidified=solidified))

    def get_blocks(self, start: int, end: int, *, solidified: bool = False) -> list[RangeBlock]:
        """Blocks ``start`` to ``end - 1`` with their transactions (``getblockbylimitnext``:
        ``end`` excluded, at most 100 blocks), each block's TRX transfers read. Fewer
        blocks than asked when the node has no more (with ``solidified=True``: none past
        the solidified head); they are always the first ones, consecutive.
        """
        valid_block_number(start)
        if isinstance(end, bool) or not isinstance(end, int) or \
                not start < end <= start + MAX_BLOCK_RANGE:
            raise ValueError(f"end must be above start and at most {MAX_BLOCK_RANGE} past it, "
                             f"got [{start}, {end!r})")
        path = ("walletsolidity" if solidified else "wallet") + "/getblockbylimitnext"
        payload = self._call(path, lambda: self._provider.json_answer(
            path, {"startNum": start, "endNum": end, "visible": True}))
        return self._checked(path, lambda: block_range(start, end, payload))

    # -- deposits: what one transaction moved (node.transfers) -----------------------------

    def get_transfer_receipt(self, tx_hash: str, *, contract: str | None = None,
                             solidified: bool = False) -> TransferReceipt | None:
        """The transfers of ``contract``'s token (USDT's by default) a transaction's receipt
        records, and other contracts' ``Transfer`` logs; None while the node does not know it
        (with ``solidified=True``: not solidified yet). One ``gettransactioninfobyid``."""
        if not isinstance(tx_hash, str) or not TX_HASH.fullmatch(tx_hash):
            raise ValueError("tx_hash must be 64 hexadecimal characters")
        token = valid_address(contract or self.usdt_contract, "contract")
        path = ("walletsolidity" if solidified else "wallet") + "/gettransactioninfobyid"
        payload = self._call(path, lambda: dict(self._provider.make_request(
            path, {"value": tx_hash.lower(), "visible": True})))
        if not payload:
            return None
        return self._checked(path, lambda: TransferReceipt.from_node(
            tx_hash.lower(), payload, contract=token, solidified=solidified))

    def get_trx_transfer(self, info: TransactionInfo) -> ChainTransfer | None:
        """The TRX transfer the transaction of receipt ``info`` is, if it is one that
        succeeded (``gettransactionbyid``, from the API the receipt was read from); None for
        any other transaction. A node that has the receipt but not its transaction is
        a :class:`NodeError` (try again), not "no transfer"."""
        path = ("walletsolidity" if info.solidified else "wallet") + "/gettransactionbyid"
        payload = self._call(path, lambda: dict(self._provider.make_request(
            path, {"value": info.tx_hash, "visible": True})))
        if not payload:
            raise NodeError(f"node call {path} does not know transaction {info.tx_hash}, whose "
                            "receipt it has", path=path)
        if str(payload.get("txID", "")).lower() != info.tx_hash:
            raise NodeError(f"node call {path} answered another transaction", path=path)
        return self._checked(path, lambda: trx_transfer(
            payload, block_number=info.block_number, block_timestamp_ms=info.block_timestamp_ms))
