"""The node's routes for the chain: blocks, building, broadcasting and receipts.

java-tron's ``/wallet`` and ``/walletsolidity`` HTTP API as an unmodified tronpy
uses it to build, sign, broadcast and follow a token's ``transfer`` or a TRX
transfer: ``getnodeinfo`` (the reference block), ``getsignweight`` (the txID and
the owner's permission), ``getcontract`` (a token's ABI: USDT's or one of the
sandbox's own, ``tokens``), ``triggersmartcontract``
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

from tronenergy_protocol.address import encode_address
from tronenergy_sandbox.api import sandbox
from tronenergy_sandbox.chain import codec, views, wire
from tronenergy_sandbox.chain.codec import TRANSFER, TRIGGER, TYPE_URL
from tronenergy_sandbox.world import World

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
    return views.block_json(block, world.parent_id(number),
                            world.block_transactions(number, visible), world.witness(), visible)


@router.api_route("/wallet/getnowblock", methods=["GET", "POST"])
async def now_block(request: Request) -> Response:
    world = wire.world(request)
    world.advance()
    return wire.answer(_block(world, world.head_number(), (await wire.call(request)).visible))


@router.api_route("/walletsolidity/getnowblock", methods=["GET", "POST"])
async def solid_now_block(request: Request) -> Response:
    world = wire.world(request)
    world.advance()
    return wire.answer(_block(world, world.solid_number(), (await wire.call(request)).visible))


async def _block_by_number(request: Request, *, solidified: bool) -> Response:
    call = await wire.call(request)
    try:
        number = call.number("num")
    except codec.CodecError as exc:
        return wire.failure(exc)
    world = wire.world(request)
    world.advance()
    last = world.solid_number() if solidified else world.head_number()
    if number is None or number > last:
        return wire.answer({})
    return wire.answer(_block(world, number, call.visible))


@router.api_route("/wallet/getblockbynum", methods=["GET", "POST"])
async def block_by_number(request: Request) -> Response:
    return await _block_by_number(request, solidified=False)


@router.api_route("/walletsolidity/getblockbynum", methods=["GET", "POST"])
async def solid_block_by_number(request: Request) -> Response:
    return await _block_by_number(request, solidified=True)


async def _block_by_id(request: Request, *, solidified: bool) -> Response:
    call = await wire.call(request)
    world = wire.world(request)
    world.advance()
    value = call.params.get("value")
    block = world.block_by_id(value) if isinstance(value, str) else None
    last = world.solid_number() if solidified else world.head_number()
    if block is None or block.number > last:
        return wire.answer({})
    return wire.answer(_block(world, block.number, call.visible))


@router.api_route("/wallet/getblockbyid", methods=["GET", "POST"])
async def block_by_id(request: Request) -> Response:
    return await _block_by_id(request, solidified=False)


@router.api_route("/walletsolidity/getblockbyid", methods=["GET", "POST"])
async def solid_block_by_id(request: Request) -> Response:
    return await _block_by_id(request, solidified=True)


async def _get_block(request: Request, *, solidified: bool) -> Response:
    """java-tron's ``GetBlockServlet`` and ``Wallet.getBlock``: ``id_or_num`` a number (``{}``
    beyond the head), a 64-hex block id, or absent for the head; without ``detail`` the
    block's transactions are left out."""
    call = await wire.call(request)
    world = wire.world(request)
    world.advance()
    head = world.solid_number() if solidified else world.head_number()
    wanted = call.params.get("id_or_num")
    detail = wire.parse_boolean(call.params.get("detail"))
    number = head
    if wanted not in (None, ""):
        text = str(wanted)
        if text.lstrip("-").isdigit():
            number = int(text)
            if number < 0:
                return wire.answer({"Error": "num must be non-positive number."})
            if number > head:
                return wire.answer({})
        else:
            block = world.block_by_id(text) if len(text) == 64 else None
            if block is None or block.number > head:
                return wire.answer({"Error": "id must be legal block hash."})
            number = block.number
    shown = _block(world, number, call.visible)
    if not detail:
        shown.pop("transactions", None)
    return wire.answer(shown)


@router.api_route("/wallet/getblock", methods=["GET", "POST"])
async def get_block(request: Request) -> Response:
    return await _get_block(request, solidified=False)


@router.api_route("/walletsolidity/getblock", methods=["GET", "POST"])
async def solid_get_block(request: Request) -> Response:
    return await _get_block(request, solidified=True)


@router.api_route("/wallet/getnodeinfo", methods=["GET", "POST"])
@router.api_route("/walletsolidity/getnodeinfo", methods=["GET", "POST"])
async def node_info(request: Request) -> Response:
    world = wire.world(request)
    world.advance()
    head, solid = world.head_number(), world.solid_number()
    return wire.answer({"beginSyncNum": head, "block": f"Num:{head},ID:{world.block_id(head)}",
                        "solidityBlock": f"Num:{solid},ID:{world.block_id(solid)}",
                        "currentConnectCount": 1, "activeConnectCount": 1})


# -- building -----------------------------------------------------------------------------

def unsigned(world: World, contract_type: str, value: dict[str, Any], visible: bool,
             fee_limit: int = 0, permission_id: int = 0) -> dict[str, Any]:
    """A new transaction as java-tron builds it: head block as reference, 60 s to live;
    ``permission_id`` as ``Util.setTransactionPermissionId`` sets it (when above 0)."""
    head = world.head_number()
    block_id = world.block_id(head)
    head_ms = int(world.block_time(head) * 1000)
    contract: dict[str, Any] = {
        "parameter": {"value": value, "type_url": TYPE_URL + contract_type},
        "type": contract_type}
    if permission_id > 0:
        contract["Permission_id"] = permission_id
    raw_data = {"contract": [contract],
                "ref_block_bytes": block_id[12:16], "ref_block_hash": block_id[16:32],
                "expiration": head_ms + EXPIRATION_MS, "fee_limit": fee_limit,
                "timestamp": int(world.clock() * 1000)}
    return codec.transaction_json(codec.decode(codec.pack_raw(raw_data), []), visible)


def permission_id(body: dict[str, Any]) -> int:
    """The body's ``Permission_id``, which the building servlets set on the contract
    (``Util.setTransactionPermissionId``); 0 when absent or not a number."""
    value = body.get("Permission_id")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _integer(body: dict[str, Any], name: str) -> int:
    value = body.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, int):
        raise codec.CodecError(f"{name} must be an integer")
    return value


@router.api_route("/wallet/triggersmartcontract", methods=["GET", "POST"])
async def trigger_smart_contract(request: Request) -> Response:
    """An unsigned contract call (java-tron runs only constant functions here)."""
    if request.method == "GET":
        return wire.nothing()  # java-tron's doGet is empty
    call = await wire.call(request)
    body, visible = call.params, call.visible
    world = wire.world(request)
    world.advance()
    for name in ("owner_address", "contract_address"):
        if not body.get(name):
            return wire.error("OTHER_ERROR", "class java.security.InvalidParameterException : "
                              f"{name} isn't set.", visible)
    try:
        owner = codec.raw_address(body["owner_address"], visible)
        contract = codec.raw_address(body["contract_address"], visible)
        selector = body.get("function_selector")
        data = body.get("data", "") if not selector else \
            keccak256(str(selector).encode())[:4].hex() + str(body.get("parameter") or "")
        bytes.fromhex(data)
        fee_limit, call_value = _integer(body, "fee_limit"), _integer(body, "call_value")
    except codec.CodecError as exc:
        return wire.error("OTHER_ERROR", f"{exc.java_class} : {exc}", visible)
    except ValueError as exc:
        return wire.error("OTHER_ERROR", f"class java.lang.IllegalArgumentException : {exc}",
                          visible)
    if not world.is_token(encode_address(contract)):
        return wire.error("CONTRACT_VALIDATE_ERROR", "No contract or not a valid smart contract",
                          visible)
    value = {"owner_address": owner.hex(), "contract_address": contract.hex(), "data": data,
             "call_value": call_value}
    transaction = unsigned(world, TRIGGER, value, visible, fee_limit, permission_id(body))
    return wire.answer({"result": {"result": True}, "transaction": transaction})


@router.api_route("/wallet/createtransaction", methods=["GET", "POST"])
async def create_transaction(request: Request) -> Response:
    """An unsigned TRX transfer, validated as java-tron's ``TransferActuator`` does."""
    if request.method == "GET":
        return wire.nothing()
    call = await wire.call(request)
    body = call.params
    world = wire.world(request)
    try:
        owner = codec.raw_address(body.get("owner_address"), call.visible)
        to = codec.raw_address(body.get("to_address"), call.visible)
        amount = _integer(body, "amount")
    except codec.CodecError as exc:
        if exc.java_class != codec.PARSE_EXCEPTION:
            return _error(f"{CONTRACT_VALIDATE}{exc}")
        return wire.failure(exc)
    refused = world.transfer_refusal(encode_address(owner), encode_address(to),
                                     amount)
    if refused is not None:
        return _error(CONTRACT_VALIDATE + refused)
    value = {"owner_address": owner.hex(), "to_address": to.hex(), "amount": amount}
    return wire.answer(unsigned(world, TRANSFER, value, call.visible,
                                permission_id=permission_id(body)))


@router.api_route("/wallet/getsignweight", methods=["GET", "POST"])
async def sign_weight(request: Request) -> Response:
    if request.method == "GET":
        return wire.nothing()
    call = await wire.call(request)
    try:
        tx = codec.from_json(call.params, call.visible)
    except codec.CodecError as exc:
        return _error(f"class java.lang.IllegalArgumentException : {exc}")
    return wire.answer(wire.world(request).sign_weight(tx, call.visible))


@router.api_route("/wallet/getcontract", methods=["GET", "POST"])
async def get_contract(request: Request) -> Response:
    """java-tron's ``GetContractServlet``: with ``visible`` the value through
    ``Util.getHexAddress``, else hex merged by ``JsonFormat``."""
    call = await wire.call(request)
    world = wire.world(request)
    try:
        raw = call.hex_address("value") if call.visible else call.address("value")
    except codec.CodecError as exc:
        return wire.failure(exc)
    address = codec.address_key(raw)
    if address is None or not world.is_token(address):
        return wire.answer({})
    token = world.token(address)
    name = "TetherToken" if token is None else token.name or ""
    return wire.answer(views.usdt_contract_json(address, call.visible, name))


# -- broadcast ----------------------------------------------------------------------------

def _broadcast(request: Request, tx: codec.Decoded, visible: bool = False) -> dict[str, Any]:
    """Offer ``tx`` to the chain: java-tron's ``Return`` (result or refusal) and the txid."""
    state = sandbox(request)
    refused = state.world.broadcast(tx)
    if refused is not None:
        return {**wire.refusal(refused.code, refused.message, visible), "txid": tx.txid}
    producer = getattr(state, "producer", None)
    if producer is not None:
        producer.wake()
    return {"result": True, "txid": tx.txid}


@router.post("/wallet/broadcasttransaction")
async def broadcast_transaction(request: Request) -> Response:
    """java-tron's ``BroadcastServlet``: ``Util.packTransaction`` with the body's ``visible``
    (a contract whose addresses are in the other form is dropped, as java-tron drops it)."""
    call = await wire.call(request)
    try:
        tx = codec.from_json(call.params, call.visible)
    except codec.CodecError as exc:
        return _error(f"class java.lang.IllegalArgumentException : {exc}")
    return wire.answer(_broadcast(request, tx, call.visible))


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
    call = await wire.call(request)
    value = call.params.get("value")
    if not isinstance(value, str) or len(value) != 64:
        return None, call.visible
    return value.lower(), call.visible


async def _transaction(request: Request, *, solidified: bool) -> Response:
    txid, visible = await _txid(request)
    if txid is None:
        return wire.answer({})
    return wire.answer(wire.world(request).transaction(txid, solidified=solidified,
                                                       visible=visible))


@router.api_route("/wallet/gettransactionbyid", methods=["GET", "POST"])
async def transaction_by_id(request: Request) -> Response:
    return await _transaction(request, solidified=False)


@router.api_route("/walletsolidity/gettransactionbyid", methods=["GET", "POST"])
async def solid_transaction_by_id(request: Request) -> Response:
    return await _transaction(request, solidified=True)


@router.api_route("/wallet/gettransactionfrompending", methods=["GET", "POST"])
async def transaction_from_pending(request: Request) -> Response:
    """java-tron's ``GetTransactionFromPendingServlet``: a transaction accepted and not yet in
    a block, else ``{}``."""
    txid, visible = await _txid(request)
    if txid is None:
        return wire.answer({})
    return wire.answer(wire.world(request).pending_transaction(txid, visible))


@router.api_route("/wallet/gettransactionlistfrompending", methods=["GET", "POST"])
async def transaction_list_from_pending(request: Request) -> Response:
    return wire.answer({"txId": wire.world(request).pending()})


@router.api_route("/wallet/getpendingsize", methods=["GET", "POST"])
async def pending_size(request: Request) -> Response:
    return wire.answer({"pendingSize": len(wire.world(request).pending())})


async def _transaction_info(request: Request, *, solidified: bool) -> Response:
    txid, visible = await _txid(request)
    if txid is None:
        return wire.answer({})
    return wire.answer(wire.world(request).transaction_info(txid, solidified=solidified,
                                                            visible=visible))


@router.api_route("/wallet/gettransactioninfobyid", methods=["GET", "POST"])
async def transaction_info(request: Request) -> Response:
    return await _transaction_info(request, solidified=False)


@router.api_route("/walletsolidity/gettransactioninfobyid", methods=["GET", "POST"])
async def solid_transaction_info(request: Request) -> Response:
    return await _transaction_info(request, solidified=True)


async def _block_receipts(request: Request, *, solidified: bool) -> Response:
    """java-tron's ``GetTransactionInfoByBlockNumServlet``: ``{}`` for a number below 1, else
    an array, ``[]`` for a block without transactions or beyond the (solid) head."""
    call = await wire.call(request)
    try:
        number = call.number("num") if "num" in call.params else 0
    except codec.CodecError as exc:
        return wire.failure(exc)
    if number is None or number < 1:
        return wire.answer({})
    receipts = wire.world(request).block_receipts(number, solidified=solidified,
                                                  visible=call.visible)
    return Response(json.dumps(receipts), media_type="application/json")


@router.api_route("/wallet/gettransactioninfobyblocknum", methods=["GET", "POST"])
async def block_receipts(request: Request) -> Response:
    return await _block_receipts(request, solidified=False)


@router.api_route("/walletsolidity/gettransactioninfobyblocknum", methods=["GET", "POST"])
async def solid_block_receipts(request: Request) -> Response:
    return await _block_receipts(request, solidified=True)
