"""The chain's records as java-tron prints them: receipts, transactions, blocks, sign weight.

java-tron's ``JsonFormat`` leaves out every field at its default (zero, empty,
``SUCCESS``-like enum zero), prints bytes as hex and, with ``visible``, addresses
in base58. Receipts are kept without their block (``transaction_info``) and get
it when read (``with_block``), so a receipt is stored once and printed either way.
"""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from typing import Any

from tronenergy_protocol.address import decode_address, encode_address
from tronenergy_sandbox.chain import codec
from tronenergy_sandbox.chain.blocks import BlockRef
from tronenergy_sandbox.chain.charging import Outcome
from tronenergy_sandbox.chain.codec import TRIGGER, Decoded

TRANSFER_TOPIC = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
"""keccak256 of ``Transfer(address,address,uint256)``: the USDT event's first topic."""
BLOCK_VERSION = 32
UNITS = Decimal(1_000_000)
"""TRX (sun) and USDT (micro-units) both have 6 decimals."""
USDT_CALL_ENERGY = 29_631
"""A USDT transfer's energy to an address holding none (mainnet, 2025): what a receipt the
sandbox writes without executing the call (a simulated or placed transfer) charges."""
REVERT_MESSAGE = b"REVERT opcode executed".hex()


def _nonzero(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v not in (0, "", None, [], {})}


def word(address: str) -> str:
    """An address as an ABI word (32 bytes, hex): a topic, or an argument of a call."""
    return decode_address(address)[1:].rjust(32, b"\0").hex()


def transfer_call_data(to: str, units: int) -> str:
    """``transfer(to, units)``'s call data, hex (the token's selector and two words)."""
    return codec.TRANSFER_SELECTOR.hex() + word(to) + f"{units:064x}"


def transfer_log(contract: str, sender: str, to: str, units: int, *,
                 visible: bool = False) -> dict[str, Any]:
    """A ``Transfer(address,address,uint256)`` log of ``contract``; its address as java-tron
    prints it: with ``visible`` a T-address (``Util.convertLogAddressToTronAddress``), else
    the contract's 20 bytes in hex."""
    address = contract if visible else decode_address(contract)[1:].hex()
    return {"address": address, "topics": [TRANSFER_TOPIC, word(sender), word(to)],
            "data": f"{units:064x}"}


def raw_data(kind: str, value: dict[str, Any], block_ms: int, *, ref_block_id: str | None = None,
             memo: str | None = None) -> dict[str, Any]:
    """A one-contract transaction's ``raw_data`` as made for block time ``block_ms``: made
    3 s before, valid a minute; ``ref_block_id`` (hex) its TaPoS block, ``memo`` its data."""
    raw: dict[str, Any] = {
        "contract": [{"parameter": {"value": value, "type_url": codec.TYPE_URL + kind},
                      "type": kind}],
        "ref_block_bytes": ref_block_id[12:16] if ref_block_id else "0000",
        "ref_block_hash": ref_block_id[16:32] if ref_block_id else "0" * 16,
        "expiration": block_ms + 60_000, "timestamp": block_ms - 3_000}
    if memo is not None:
        raw["data"] = memo
    return raw


def reverted(info: dict[str, Any], energy: int) -> dict[str, Any]:
    """``info`` as the receipt of a contract call that reverted (no log), ``energy`` spent."""
    info["receipt"] = {"energy_usage_total": energy, "energy_usage": energy, "net_usage": 345,
                       "result": "REVERT"}
    info["contractResult"] = [""]
    info["result"] = "FAILED"
    info["resMessage"] = REVERT_MESSAGE
    info.pop("log", None)
    return info


def succeeded(info: dict[str, Any], energy: int) -> dict[str, Any]:
    """``info`` with the receipt of a contract call that succeeded, ``energy`` spent."""
    info["receipt"] = {"energy_usage_total": energy, "energy_usage": energy, "net_usage": 345,
                       "result": "SUCCESS"}
    return info


def transaction_info(tx: Decoded, outcome: Outcome) -> dict[str, Any]:
    """The receipt of an executed transaction, without its block (hex addresses); a token
    transfer's ``Transfer`` log is the called contract's (USDT's or another token's)."""
    receipt = _nonzero({
        "energy_usage": outcome.energy_usage, "energy_fee": outcome.energy_fee,
        "energy_usage_total": outcome.energy_usage_total, "net_usage": outcome.net_usage,
        "net_fee": outcome.net_fee, "result": outcome.result})
    info: dict[str, Any] = {"id": tx.txid, "fee": outcome.fee,
                            "contractResult": [outcome.contract_result]}
    if tx.contract_type == TRIGGER and tx.contract_address is not None:
        info["contract_address"] = decode_address(tx.contract_address).hex()
    info["receipt"] = receipt
    if outcome.result == "SUCCESS" and outcome.recipient is not None and tx.owner is not None \
            and tx.contract_address is not None:
        info["log"] = [transfer_log(tx.contract_address, tx.owner, outcome.recipient,
                                    outcome.units_moved)]
    if outcome.failed:
        info["result"] = "FAILED"
        info["resMessage"] = outcome.res_message.encode().hex()
    if outcome.system_fee:
        info["system_fee"] = outcome.system_fee  # kept for ``ret``; not printed
    return _nonzero(info)


def with_block(info: dict[str, Any], number: int, at: float, visible: bool) -> dict[str, Any]:
    """A kept receipt as ``gettransactioninfobyid`` prints it, in block ``number``."""
    shown: dict[str, Any] = {"id": info["id"]}
    if "fee" in info:
        shown["fee"] = info["fee"]
    shown["blockNumber"] = number
    shown["blockTimeStamp"] = int(at * 1000)
    for key in ("contractResult", "contract_address", "receipt", "log", "result", "resMessage"):
        if key in info:
            shown[key] = info[key]
    if visible and "contract_address" in shown:
        shown["contract_address"] = encode_address(bytes.fromhex(shown["contract_address"]))
    if visible and "resMessage" in shown:  # a name field: text with visible (JsonFormat)
        shown["resMessage"] = bytes.fromhex(shown["resMessage"]).decode("utf-8", "replace")
    if visible and "log" in shown:  # as a T-address: Util.convertLogAddressToTronAddress
        shown["log"] = [{**log, "address": encode_address(bytes.fromhex(log["address"]))}
                        for log in shown["log"]]
    return shown


def transaction_json(tx: Decoded, info: dict[str, Any], visible: bool) -> dict[str, Any]:
    """A packed transaction as ``gettransactionbyid`` and blocks print it (``ret`` first)."""
    ret = _nonzero({"fee": info.get("system_fee", 0),
                    "contractRet": info.get("receipt", {}).get("result", "SUCCESS")})
    shown = codec.transaction_json(tx, visible)
    shown.pop("visible")
    return {"ret": [ret], **shown}


def block_json(block: BlockRef, parent_id: str, transactions: list[dict[str, Any]],
               witness: str, visible: bool) -> dict[str, Any]:
    """A block as ``getnowblock`` / ``getblockbynum`` / ``getblockbyid`` print it."""
    root = hashlib.sha256("".join(t["txID"] for t in transactions).encode()).hexdigest() \
        if transactions else "0" * 64
    raw = _nonzero({"number": block.number, "txTrieRoot": root,
                    "witness_address": witness if visible else decode_address(witness).hex(),
                    "parentHash": parent_id, "version": BLOCK_VERSION,
                    "timestamp": block.timestamp_ms})
    signature = hashlib.sha256(bytes.fromhex(block.block_id)).hexdigest() * 2 + "1b"
    shown: dict[str, Any] = {"blockID": block.block_id,
                             "block_header": {"raw_data": raw, "witness_signature": signature}}
    if transactions:
        shown["transactions"] = transactions
    return shown


def listing(row: Any, at: float, decimals: int | None = 6) -> dict[str, Any]:
    """One transaction in ``GET /sandbox/chain/transactions``: what it moves and its receipt;
    ``amount`` in the token's ``decimals`` (None: a token without them, in units)."""
    amount = Decimal(row["amount"]).scaleb(-(decimals or 0))
    shown: dict[str, Any] = {
        "txid": row["txid"], "owner": row["owner"], "to": row["to_address"],
        "token": row["token"], "amount": format(amount.normalize(), "f"),
        "status": row["status"], "block_number": row["block_number"]}
    info = json.loads(row["info"]) if row["info"] else None
    if row["status"] == "executed" and info is not None:
        shown["block_timestamp"] = int(at * 1000)
        shown["receipt"] = with_block(info, row["block_number"], at, True)
    elif row["status"] == "dropped" and info is not None:
        shown["refusal"] = info
    return shown


USDT_ORIGIN = "THPvaUhoh2Qn2y9THCZML3H815hhFhn5YC"
"""Who deployed mainnet's USDT (``origin_address``)."""
_USDT_FUNCTIONS: tuple[tuple[str, tuple[tuple[str, str], ...], str, str], ...] = (
    ("name", (), "string", "View"), ("symbol", (), "string", "View"),
    ("decimals", (), "uint8", "View"), ("totalSupply", (), "uint256", "View"),
    ("balanceOf", (("who", "address"),), "uint256", "View"),
    ("allowance", (("_owner", "address"), ("_spender", "address")), "uint256", "View"),
    ("transfer", (("_to", "address"), ("_value", "uint256")), "bool", "Nonpayable"),
    ("transferFrom", (("_from", "address"), ("_to", "address"), ("_value", "uint256")), "bool",
     "Nonpayable"),
    ("approve", (("_spender", "address"), ("_value", "uint256")), "bool", "Nonpayable"),
)


def usdt_contract_json(address: str, visible: bool, contract_name: str = "TetherToken"
                       ) -> dict[str, Any]:
    """``getcontract`` for USDT or another token (``contract_name``): its ABI (the TRC-20
    functions and events), as java-tron prints it.

    The bytecode is a stub: the sandbox runs no bytecode, it executes ``transfer`` itself.
    """
    entries: list[dict[str, Any]] = []
    for name, inputs, output, mutability in _USDT_FUNCTIONS:
        entry: dict[str, Any] = {"outputs": [{"type": output}],
                                 "inputs": [{"name": n, "type": t} for n, t in inputs],
                                 "name": name, "stateMutability": mutability, "type": "Function"}
        if mutability == "View":
            entry = {"constant": True, **entry}
        entries.append(_nonzero(entry))
    for event, names in (("Transfer", ("from", "to")), ("Approval", ("owner", "spender"))):
        entries.append({"anonymous": False, "inputs": [
            {"indexed": True, "name": names[0], "type": "address"},
            {"indexed": True, "name": names[1], "type": "address"},
            {"name": "value", "type": "uint256"}], "name": event, "type": "Event"})
    def shown(text: str) -> str:
        return text if visible else decode_address(text).hex()
    return {"bytecode": "6080604052", "consume_user_resource_percent": 100, "name": contract_name,
            "origin_address": shown(USDT_ORIGIN), "abi": {"entrys": entries},
            "origin_energy_limit": 10_000_000, "contract_address": shown(address),
            "code_hash": hashlib.sha256(decode_address(address)).hexdigest()}
