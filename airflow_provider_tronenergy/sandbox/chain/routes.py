"""The node's routes for the chain: blocks, building, broadcasting and receipts.

java-tron's ``/wallet`` and ``/walletsolidity`` HTTP API as an unmodified tronpy
uses it to build, sign, broadcast and follow a USDT ``transfer`` or a TRX
transfer: ``getnodeinfo`` (the reference block), ``getsignweight`` (the txID and
the owner's permission), ``getcontract`` (USDT's ABI), ``triggersmartcontract``
and ``createtransaction`` (unsigned transactions, as java-tron builds them),
``broadcasttransaction`` / ``broadcasthex``, the transaction and its receipt, and a
block's receipts (``gettransactioninfobyblocknum``) for following a batch.
The account and contract reads live in ``sandbox/node.py``.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from tronpy.keys import keccak256

from airflow_provider_tronenergy.protocol.address import encode_address
from airflow_provider_tronenergy.sandbox.api import sandbox
from airflow_provider_tronenergy.sandbox.chain import codec, views, wire
from airflow_provider_tronenergy.sandbox.chain.codec import TRANSFER, TRIGGER, TYPE_URL
from airflow_provider_tronenergy.sandbox.world import World

router = APIRouter(include_in_schema=False)
EXPIRATION_MS = 60_000
"""java-tron's default ``trxExpirationTimeInMilliseconds``: a built transaction lives 60 s."""
CONTRACT_VALIDATE = "class org.tron.core.exception.ContractValidateException : "


def _error(message: str) -> Response:
    """A request java-tron could not serve: ``{"Error": "<exception class> : <message>"}``."""
    return wire.answer({"Error": message})


# -- blocks -------------------------------------------------------------------------------

def _block(world: World, number: int, visible: bool) -> dict[str, Any]:
    block = world.block(number)
    if block is None:
        return {}
    return views.block_json(block, world.block_id(number - 1),
                            world.block_transactions(number, visible), world.witness(), visible)


@router.api_route("/wallet/getnowblock", methods=["GET", "POST"])
async def now_block(request: Request) -> Response:
    world = wire.world(request)
    world.advance()
    return wire.answer(_block(world, world.head_number(), wire.visible(await wire.body(request))))


@router.api_route("/walletsolidity/getnowblock", methods=["GET", "POST"])
async def solid_now_block(request: Request) -> Response:
    world = wire.world(request)
    world.advance()
    return wire.answer(_block(world, world.solid_number(),
                              wire.visible(await wire.body(request))))


async def _block_by_number(request: Request, *, solidified: bool) -> Response:
    body = await wire.body(request)
    number = body.get("num")
    world = wire.world(request)
    world.advance()
    last = world.solid_number() if solidified else world.head_number()
    if isinstance(number, bool) or not isinstance(number, int) or number > last:
        return wire.answer({})
    return wire.answer(_block(world, number, wire.visible(body)))


@router.post("/wallet/getblockbynum")
async def block_by_number(request: Request) -> Response:
    return await _block_by_number(request, solidified=False)


@router.post("/walletsolidity/getblockbynum")
async def solid_block_by_number(request: Request) -> Response:
    return await _block_by_number(request, solidified=True)


@router.post("/wallet/getblockbyid")
async def block_by_id(request: Request) -> Response:
    body = await wire.body(request)
    world = wire.world(request)
    world.advance()
    value = body.get("value")
    block = world.block_by_id(value) if isinstance(value, str) else None
    return wire.answer({} if block is None else _block(world, block.number, wire.visible(body)))


@router.api_route("/wallet/getnodeinfo", methods=["GET", "POST"])
async def node_info(request: Request) -> Response:
    world = wire.world(request)
    world.advance()
    head, solid = world.head_number(), world.solid_number()
    return wire.answer({"beginSyncNum": head, "block": f"Num:{head},ID:{world.block_id(head)}",
                        "solidityBlock": f"Num:{solid},ID:{world.block_id(solid)}",
                        "currentConnectCount": 1, "activeConnectCount": 1})


# -- building -----------------------------------------------------------------------------

def _unsigned(world: World, contract_type: str, value: dict[str, Any], visible: bool,
              fee_limit: int = 0) -> dict[str, Any]:
    """A new transaction as java-tron builds it: head block as reference, 60 s to live."""
    head = world.head_number()
    block_id = world.block_id(head)
    head_ms = int(world.block_time(head) * 1000)
    raw_data = {"contract": [{"parameter": {"value": value, "type_url": TYPE_URL + contract_type},
                              "type": contract_type}],
                "ref_block_bytes": block_id[12:16], "ref_block_hash": block_id[16:32],
                "expiration": head_ms + EXPIRATION_MS, "fee_limit": fee_limit,
                "timestamp": int(world.clock() * 1000)}
    return codec.transaction_json(codec.decode(codec.pack_raw(raw_data), []), visible)


def _integer(body: dict[str, Any], name: str) -> int:
    value = body.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, int):
        raise codec.CodecError(f"{name} must be an integer")
    return value


@router.post("/wallet/triggersmartcontract")
async def trigger_smart_contract(request: Request) -> Response:
    """An unsigned contract call (java-tron runs only constant functions here)."""
    body = await wire.body(request)
    world = wire.world(request)
    world.advance()
    for name in ("owner_address", "contract_address"):
        if not body.get(name):
            return wire.error("OTHER_ERROR", "class java.security.InvalidParameterException : "
                              f"{name} isn't set.")
    try:
        owner = codec.raw_address(body["owner_address"])
        contract = codec.raw_address(body["contract_address"])
        selector = body.get("function_selector")
        data = body.get("data", "") if not selector else \
            keccak256(str(selector).encode())[:4].hex() + str(body.get("parameter") or "")
        bytes.fromhex(data)
        fee_limit, call_value = _integer(body, "fee_limit"), _integer(body, "call_value")
    except (codec.CodecError, ValueError) as exc:
        return wire.error("OTHER_ERROR", f"class java.lang.IllegalArgumentException : {exc}")
    if encode_address(contract) != world.usdt_contract:
        return wire.error("CONTRACT_VALIDATE_ERROR", "No contract or not a valid smart contract")
    value = {"owner_address": owner.hex(), "contract_address": contract.hex(), "data": data,
             "call_value": call_value}
    transaction = _unsigned(world, TRIGGER, value, wire.visible(body), fee_limit)
    return wire.answer({"result": {"result": True}, "transaction": transaction})


@router.post("/wallet/createtransaction")
async def create_transaction(request: Request) -> Response:
    """An unsigned TRX transfer, validated as java-tron's ``TransferActuator`` does."""
    body = await wire.body(request)
    world = wire.world(request)
    try:
        owner = codec.raw_address(body.get("owner_address"))
        to = codec.raw_address(body.get("to_address"))
        amount = _integer(body, "amount")
    except codec.CodecError as exc:
        return _error(f"{CONTRACT_VALIDATE}{exc}")
    refused = world.transfer_refusal(encode_address(owner), encode_address(to),
                                     amount)
    if refused is not None:
        return _error(CONTRACT_VALIDATE + refused)
    value = {"owner_address": owner.hex(), "to_address": to.hex(), "amount": amount}
    return wire.answer(_unsigned(world, TRANSFER, value, wire.visible(body)))


@router.post("/wallet/getsignweight")
async def sign_weight(request: Request) -> Response:
    body = await wire.body(request)
    try:
        tx = codec.from_json(body)
    except codec.CodecError as exc:
        return _error(f"class java.lang.IllegalArgumentException : {exc}")
    return wire.answer(wire.world(request).sign_weight(tx, wire.visible(body)))


@router.post("/wallet/getcontract")
async def get_contract(request: Request) -> Response:
    body = await wire.body(request)
    world = wire.world(request)
    value = body.get("value")
    try:
        address = encode_address(codec.raw_address(value))
    except codec.CodecError:
        return wire.answer({})
    if address != world.usdt_contract:
        return wire.answer({})
    return wire.answer(views.usdt_contract_json(address, wire.visible(body)))


# -- broadcast ----------------------------------------------------------------------------

def _broadcast(request: Request, tx: codec.Decoded) -> dict[str, Any]:
    """Offer ``tx`` to the chain: java-tron's ``Return`` (result or refusal) and the txid."""
    state = sandbox(request)
    refused = state.world.broadcast(tx)
    if refused is not None:
        return {**wire.refusal(refused.code, refused.message), "txid": tx.txid}
    producer = getattr(state, "producer", None)
    if producer is not None:
        producer.wake()
    return {"result": True, "txid": tx.txid}


@router.post("/wallet/broadcasttransaction")
async def broadcast_transaction(request: Request) -> Response:
    try:
        tx = codec.from_json(await wire.body(request))
    except codec.CodecError as exc:
        return _error(f"class java.lang.IllegalArgumentException : {exc}")
    return wire.answer(_broadcast(request, tx))


@router.post("/wallet/broadcasthex")
async def broadcast_hex(request: Request) -> Response:
    """The protobuf ``Transaction`` in hex; java-tron answers its message as text here."""
    try:
        tx = codec.from_hex((await wire.body(request)).get("transaction"))
    except codec.CodecError as exc:
        return _error(f"class com.google.protobuf.InvalidProtocolBufferException : {exc}")
    result = _broadcast(request, tx)
    message = bytes.fromhex(result.get("message", "")).decode()
    return wire.answer({"result": result.get("result", False),
                        "code": result.get("code", "SUCCESS"), "message": message,
                        "transaction": json.dumps(codec.transaction_json(tx, True)),
                        "txid": tx.txid})


# -- transactions and receipts ------------------------------------------------------------

async def _txid(request: Request) -> tuple[str | None, bool]:
    body = await wire.body(request)
    value = body.get("value")
    if not isinstance(value, str) or len(value) != 64:
        return None, wire.visible(body)
    return value.lower(), wire.visible(body)


async def _transaction(request: Request, *, solidified: bool) -> Response:
    txid, visible = await _txid(request)
    if txid is None:
        return wire.answer({})
    return wire.answer(wire.world(request).transaction(txid, solidified=solidified,
                                                       visible=visible))


@router.post("/wallet/gettransactionbyid")
async def transaction_by_id(request: Request) -> Response:
    return await _transaction(request, solidified=False)


@router.post("/walletsolidity/gettransactionbyid")
async def solid_transaction_by_id(request: Request) -> Response:
    return await _transaction(request, solidified=True)


async def _transaction_info(request: Request, *, solidified: bool) -> Response:
    txid, visible = await _txid(request)
    if txid is None:
        return wire.answer({})
    return wire.answer(wire.world(request).transaction_info(txid, solidified=solidified,
                                                            visible=visible))


@router.post("/wallet/gettransactioninfobyid")
async def transaction_info(request: Request) -> Response:
    return await _transaction_info(request, solidified=False)


@router.post("/walletsolidity/gettransactioninfobyid")
async def solid_transaction_info(request: Request) -> Response:
    return await _transaction_info(request, solidified=True)


async def _block_receipts(request: Request, *, solidified: bool) -> Response:
    """java-tron's ``GetTransactionInfoByBlockNumServlet``: ``{}`` for a number below 1, else
    an array, ``[]`` for a block without transactions or beyond the (solid) head."""
    body = await wire.body(request)
    number = body.get("num", 0)
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        return wire.answer({})
    receipts = wire.world(request).block_receipts(number, solidified=solidified,
                                                  visible=wire.visible(body))
    return Response(json.dumps(receipts), media_type="application/json")


@router.post("/wallet/gettransactioninfobyblocknum")
async def block_receipts(request: Request) -> Response:
    return await _block_receipts(request, solidified=False)


@router.post("/walletsolidity/gettransactioninfobyblocknum")
async def solid_block_receipts(request: Request) -> Response:
    return await _block_receipts(request, solidified=True)
