"""A TRX payout proven on chain: its block holds it as the transfer it was meant to be.

A ``TransferContract`` leaves no log, so its receipt (``gettransactioninfobyid``) says
only its block and its fees. What it moved is read from the transaction as its block
holds it (``getblockbynum``, which prints each transaction with its ``ret``): one contract,
a ``TransferContract`` from the sender to the recipient of exactly the amount, and
``ret[0].contractRet`` ``SUCCESS`` (``contractResult`` in Tron.proto: ``DEFAULT = 0``,
which java-tron's ``JsonFormat`` leaves out, ``SUCCESS = 1``; read by
:func:`~.transfers.trx_transfer`, the rule deposits are credited by). ``ret[0].fee`` is what
``TransferActuator.execute`` charged (``ret.setStatus(fee, SUCESS)``): the account-creation
fee when the transfer created its recipient, else 0.

As for a USDT payout (``payout.trust.ChainView.receipt_problem``), the receipt counts only
when the block, read by number, holds the transaction at the receipt's time, and its
figures are what the chain's prices make of them (:func:`trx_figures_problem`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from airflow_provider_tronenergy.node.models import BlockBody, TransactionInfo, whole
from airflow_provider_tronenergy.node.transfers import ChainTransfer, trx_transfer
from airflow_provider_tronenergy.node.trx_costs import TrxFees

TRANSFER_CONTRACT: Final = "TransferContract"
SUCCESS: Final = "SUCCESS"


@dataclass(frozen=True)
class BlockEntry:
    """One transaction as its block holds it: its one contract's type (None when it holds
    several or none), ``ret[0].contractRet`` and ``ret[0].fee``, and the TRX transfer it
    is when it is a ``TransferContract`` that succeeded."""

    contract_type: str | None
    contract_ret: str | None
    ret_fee_sun: int
    transfer: ChainTransfer | None


@dataclass(frozen=True)
class BlockTrx:
    """A block read by number (``getblockbynum``): its header, txIDs and each transaction."""

    body: BlockBody
    entries: Mapping[str, BlockEntry]

    @classmethod
    def from_node(cls, number: int, payload: dict[str, Any]) -> BlockTrx:
        """Read one block, checked as :meth:`BlockBody.from_node` checks it (block
        ``number``, each txID once); a ``TransferContract`` that succeeded must read as a
        transfer (its amount a positive integer, its addresses TRON's)."""
        body = BlockBody.from_node(number, payload)
        entries: dict[str, BlockEntry] = {}
        for item in payload.get("transactions") or []:
            txid = str(item["txID"]).lower()
            raw = item.get("raw_data")
            contracts = raw.get("contract") if isinstance(raw, dict) else None
            kind = None
            if isinstance(contracts, list) and len(contracts) == 1 and isinstance(
                    contracts[0], dict) and isinstance(contracts[0].get("type"), str):
                kind = contracts[0]["type"]
            ret = item.get("ret") or [{}]
            if not isinstance(ret, list) or not ret or not isinstance(ret[0], dict):
                raise ValueError(f"transaction {txid}: 'ret' is not a list of results")
            answered = ret[0].get("contractRet")
            entries[txid] = BlockEntry(
                contract_type=kind,
                contract_ret=answered if isinstance(answered, str) else None,
                ret_fee_sun=whole(ret[0], "fee"),
                transfer=trx_transfer(item, block_number=number,
                                      block_timestamp_ms=body.block.timestamp_ms))
        return cls(body, entries)


def trx_payment_problem(block: BlockTrx, info: TransactionInfo, *, owner: str, to: str,
                        amount_sun: int, fees: TrxFees | None = None,
                        signatures: int | None = None) -> str | None:
    """Why receipt ``info`` and ``block`` (the block it names, read by number) do not prove
    a TRX transfer of ``amount_sun`` from ``owner`` to ``to``; None when they do. With
    ``fees``: its figures must also be the chain's (:func:`trx_figures_problem`)."""
    number, txid = block.body.block.number, info.tx_hash
    if info.block_number != number:
        return f"it names block {info.block_number}, not block {number}"
    if txid not in block.body.txids:
        return f"block {number}, read by number, does not hold it"
    if info.block_timestamp_ms != block.body.block.timestamp_ms:
        return (f"it says block {number} is at {info.block_timestamp_ms}; the block says "
                f"{block.body.block.timestamp_ms}")
    entry = block.entries[txid]
    if entry.contract_type != TRANSFER_CONTRACT:
        return f"block {number} holds it as {entry.contract_type or 'no single contract'}, " \
               f"not a {TRANSFER_CONTRACT}"
    if entry.contract_ret != SUCCESS or entry.transfer is None:
        return f"block {number} holds it with contractRet {entry.contract_ret!r}, not SUCCESS"
    if info.failed:
        return "its receipt says it failed"
    moved = entry.transfer
    if (moved.from_address, moved.to_address) != (owner, to):
        return (f"it moves TRX from {moved.from_address} to {moved.to_address}, not from "
                f"{owner} to {to}")
    if moved.units != amount_sun:
        return f"it moves {moved.units:,} sun, not {amount_sun:,}"
    return None if fees is None else trx_figures_problem(info, entry, fees, signatures)


def trx_figures_problem(info: TransactionInfo, entry: BlockEntry, fees: TrxFees,
                        signatures: int | None = None) -> str | None:
    """Why a TRX transfer's receipt figures cannot be the chain's (``node.trx_costs``), or
    None: no energy; ``ret.fee`` 0 or the account-creation fee; ``net_fee`` whole bytes
    burned, or for a created account 0 or ``getCreateAccountFee``; ``fee`` their sum plus,
    signed by several keys, the multi-sign fee (``signatures`` None: either). A price a
    proposal changed since the receipt's block fails an honest receipt too."""
    if info.energy_usage_total or info.energy_fee:
        return (f"a TRX transfer uses no energy; it says {info.energy_usage_total:,} energy "
                f"and {info.energy_fee:,} sun for it")
    account_fee = fees.create_new_account_fee_in_system_contract
    if entry.ret_fee_sun not in (0, account_fee):
        return (f"its block charges it {entry.ret_fee_sun:,} sun; a TRX transfer pays 0, or "
                f"{account_fee:,} when it creates its recipient")
    created = account_fee > 0 and entry.ret_fee_sun == account_fee
    if created and info.net_fee not in (0, fees.create_account_fee):
        return (f"it created its recipient and burned {info.net_fee:,} sun for bandwidth, "
                f"not 0 (staked) or {fees.create_account_fee:,}")
    if not created and info.net_fee % fees.transaction_fee:
        return (f"its bandwidth fee {info.net_fee:,} sun is not whole bytes at "
                f"{fees.transaction_fee:,} sun per byte")
    extra = info.fee - info.net_fee - entry.ret_fee_sun
    allowed = {0, fees.multi_sign_fee} if signatures is None else {
        fees.multi_sign_fee if signatures > 1 else 0}
    if extra not in allowed:
        return (f"its fee {info.fee:,} sun is not its bandwidth fee {info.net_fee:,} plus "
                f"{entry.ret_fee_sun:,} for the account (plus, signed by several keys, the "
                f"multi-sign fee {fees.multi_sign_fee:,})")
    return None
