"""The attacks' control routes (``/sandbox/attacks``), loopback-only like all of ``/sandbox``;
what each makes is told in ``chain/attacks.py``."""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from tronenergy_sandbox import params
from tronenergy_sandbox.api import sandbox
from tronenergy_sandbox.chain.attacks import LOOKALIKE_USDT
from tronenergy_sandbox.control import loopback_only, reply

router = APIRouter(prefix="/sandbox/attacks", include_in_schema=False,
                   dependencies=[Depends(loopback_only)])


@router.post("/transfer")
async def transfer(request: Request) -> Response:
    """``{from, to, amount, token?, contract?, failed?, callback?, times?}``; ``contract``:
    ``"lookalike"`` or a contract address."""
    body = params.json_object(await request.body())
    contract = params.field(body, "contract")
    if contract in (None, params.MISSING):
        contract = None
    elif contract == "lookalike":
        contract = LOOKALIKE_USDT
    else:
        contract = params.address(contract, "contract")
    state = sandbox(request)
    result = state.world.attack_transfer(
        params.address(params.field(body, "from"), "from"),
        params.address(params.field(body, "to"), "to"),
        params.amount(params.field(body, "amount")),
        params.string(params.field(body, "token"), "token", default="USDT", max_length=20),
        contract=contract, failed=params.field(body, "failed") is True,
        callback=params.field(body, "callback") is not False,
        times=_times(body))
    if result["delivery_id"] is not None and state.dispatcher is not None:
        state.dispatcher.wake()
    return reply(request, result)


def _times(body: dict[str, Any]) -> int:
    times = params.integer(params.field(body, "times"), "times", 1)
    if not 1 <= times <= 100:
        raise params.invalid("times must be 1 to 100")
    return times


@router.post("/callback")
async def forged_callback(request: Request) -> Response:
    """``{to, amount, token?, tx_hash?, from?, block_number?, block_timestamp?}``: the
    service sends a signed ``tron.transfer`` callback saying exactly this."""
    body = params.json_object(await request.body())
    tx_hash = params.field(body, "tx_hash")
    if tx_hash in (None, params.MISSING):
        tx_hash = secrets.token_hex(32)
    elif not isinstance(tx_hash, str) or len(tx_hash) != 64:
        raise params.invalid("tx_hash must be 64 hex characters")
    state = sandbox(request)
    world = state.world
    head = world.head_number()
    data = {"tx_hash": tx_hash.lower(),
            "from": params.address(params.field(body, "from"), "from")
            if params.field(body, "from") not in (None, params.MISSING) else LOOKALIKE_USDT,
            "to": params.address(params.field(body, "to"), "to"),
            "amount": format(params.amount(params.field(body, "amount")).normalize(), "f"),
            "token": params.string(params.field(body, "token"), "token", default="USDT",
                                   max_length=20),
            "block_number": params.integer(params.field(body, "block_number"), "block_number",
                                           head),
            "block_timestamp": params.integer(params.field(body, "block_timestamp"),
                                              "block_timestamp",
                                              int(world.block_time(head) * 1000))}
    result = world.forge_callback(data)
    if state.dispatcher is not None:
        state.dispatcher.wake()
    return reply(request, result)
