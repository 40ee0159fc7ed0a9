"""The chain's parameters over HTTP: java-tron's two reads and the sandbox's two controls.

``wallet/getchainparameters`` and ``wallet/getcontractinfo`` answer in java-tron's
shapes what the head block charges. ``POST /sandbox/chain/parameters`` (a fee
proposal passing) and ``POST /sandbox/chain/contract`` (USDT's energy factor or
base energy moving) change them from the next block on, so a transaction already
in a block is never charged anew; a refused value is a clear 400, nothing changed.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from tronenergy_sandbox import params
from tronenergy_sandbox.api import sandbox
from tronenergy_sandbox.chain import codec, wire
from tronenergy_sandbox.chain.parameters import (
    ChainParameters,
    ContractEnergy,
    ParameterError,
)
from tronenergy_sandbox.control import loopback_only, reply
from tronenergy_sandbox.world import World

router = APIRouter(include_in_schema=False)
control_router = APIRouter(prefix="/sandbox/chain", include_in_schema=False,
                           dependencies=[Depends(loopback_only)])

CYCLE_BLOCKS = 7_200
"""A maintenance period (6 h of 3 s blocks): java-tron's ``update_cycle`` counts them."""


def _answer(payload: dict[str, Any]) -> Response:
    return Response(json.dumps(payload), media_type="application/json")


def _world(request: Request) -> World:
    return sandbox(request).world


@router.api_route("/wallet/getchainparameters", methods=["GET", "POST"])
async def get_chain_parameters(request: Request) -> Response:
    world = _world(request)
    return _answer(world.parameters.current(world.head_number()).to_wallet())


@router.api_route("/wallet/getcontractinfo", methods=["GET", "POST"])
async def get_contract_info(request: Request) -> Response:
    """java-tron's answer for a token (USDT or one of the sandbox's own, ``tokens``); ``{}``
    for any other address, as for one with no code.
    The value is read as ``GetContractInfoServlet`` reads it: with ``visible`` through
    ``Util.getHexAddress``, else hex merged by ``JsonFormat`` (``wire.Call``)."""
    call = await wire.call(request)
    world = _world(request)
    try:
        raw = call.hex_address("value") if call.visible else call.address("value")
    except codec.CodecError as exc:
        return wire.failure(exc)
    named = codec.address_key(raw)
    head = world.head_number()
    energy = None if named is None else world.token_energy(named, head)
    if named is None or energy is None:
        return _answer({})
    address = codec.shown_address(named, call.visible)
    token = world.token(named)
    state = {"energy_factor": energy.energy_factor, "update_cycle": head // CYCLE_BLOCKS}
    return _answer({
        "smart_contract": {"contract_address": address,
                           "name": token.name or "" if token else "TetherToken"},
        "runtimecode": "",
        "contract_state": {k: v for k, v in state.items() if v},  # proto3 JSON: zeros left out
    })


def _changes(body: dict[str, Any]) -> dict[str, Any]:
    if not body:
        raise params.invalid("nothing to change: name at least one parameter")
    return body


def _chain(world: World) -> dict[str, Any]:
    head = world.head_number()
    now, following = world.parameters.current(head), world.parameters.current()
    usdt = world.parameters.usdt()
    return {"head_block": head, "in_force": _fees(now), "from_next_block": _fees(following),
            "usdt": _contract(usdt, world.parameters.usdt(head))}


def _fees(fees: ChainParameters) -> dict[str, int]:
    return {row["key"]: row.get("value", 0) for row in fees.to_wallet()["chainParameter"]}


def _contract(following: ContractEnergy, now: ContractEnergy) -> dict[str, Any]:
    return {"base_energy": following.base_energy, "energy_factor": following.energy_factor,
            "transfer_energy": {"holder": following.transfer_energy(False),
                                "new_recipient": following.transfer_energy(True)},
            "energy_factor_in_force": now.energy_factor}


@control_router.get("/parameters")
async def chain_parameters(request: Request) -> Response:
    """The fees and USDT's energy in force and from the next block on."""
    return reply(request, _chain(_world(request)))


async def _change(request: Request, usdt: bool) -> Response:
    """Apply the body's changes from the next block on; a refused change records nothing."""
    changes = _changes(params.json_object(await request.body()))
    world = _world(request)
    from_block = world.head_number() + 1
    book = world.parameters
    try:
        (book.set_usdt if usdt else book.set)(from_block, changes)
    except ParameterError as exc:
        raise params.invalid(str(exc)) from None
    return reply(request, {**_chain(world), "from_block": from_block})


@control_router.post("/parameters")
async def set_chain_parameters(request: Request) -> Response:
    """``{"getEnergyFee": 210}`` (or ``{"energy_fee": 210}``): a fee proposal passing."""
    return await _change(request, usdt=False)


@control_router.post("/contract")
async def set_contract(request: Request) -> Response:
    """``{"energy_factor": N, "base_energy": N}``: USDT's dynamic energy moving."""
    return await _change(request, usdt=True)
