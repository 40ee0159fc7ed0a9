"""The sandbox as a TRON full node: java-tron's HTTP API at the root, beside ``/v1``.

Enough of ``/wallet/...`` and ``/walletsolidity/...`` for an unmodified tronpy
client and the provider's ``tron_node`` hook: accounts, resources, the USDT
contract's ``balanceOf`` / ``transfer`` / ``decimals`` as constant calls and energy
estimates. Blocks, building, broadcasting and receipts are the chain's
(``chain/routes.py``). Answers take java-tron's shapes (``"visible": true`` base58
addresses; zero fields left out; ``{}`` for what the chain does not know). No
signing, as on a public node; an API key header is accepted and ignored (never logged).
"""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from airflow_provider_tronenergy.protocol.address import ADDRESS_PREFIX, encode_address
from airflow_provider_tronenergy.sandbox.api import sandbox
from airflow_provider_tronenergy.sandbox.chain import multicall, wire
from airflow_provider_tronenergy.sandbox.chain.charging import revert_energy
from airflow_provider_tronenergy.sandbox.world import World

router = APIRouter(include_in_schema=False)
NO_ESTIMATE = "this node does not support estimate energy"
BALANCE_OF_ENERGY = 14_650  # a constant call of balanceOf, as mainnet reports it


@router.post("/wallet/getaccount")
async def get_account(request: Request) -> Response:
    body = await wire.body(request)
    address = wire.address(body)
    world = wire.world(request)
    if address is None or not world.is_activated(address):
        return wire.answer({})
    wallet = world.wallet(address)
    account: dict[str, Any] = {"address": address, "create_time": 1_700_000_000_000}
    if wallet["trx_sun"]:
        account["balance"] = wallet["trx_sun"]
    account.update(world.account_permissions_json(address, wire.visible(body)))
    return wire.answer(account)


def _resources(world: World, address: str) -> dict[str, int]:
    figures = world.resources(address)
    shown = {k: v for k, v in figures.items() if v}  # java-tron leaves zeros out
    shown.update({"TotalNetLimit": 43_200_000_000, "TotalNetWeight": 26_000_000_000,
                  "TotalEnergyLimit": 180_000_000_000, "TotalEnergyWeight": 19_000_000_000})
    return shown


@router.post("/wallet/getaccountresource")
async def get_account_resource(request: Request) -> Response:
    address = wire.address(await wire.body(request))
    world = wire.world(request)
    if address is None or not world.is_activated(address):
        return wire.answer({})
    return wire.answer(_resources(world, address))


@router.post("/wallet/getaccountnet")
async def get_account_net(request: Request) -> Response:
    address = wire.address(await wire.body(request))
    world = wire.world(request)
    if address is None or not world.is_activated(address):
        return wire.answer({})
    figures = _resources(world, address)
    return wire.answer({k: v for k, v in figures.items() if "Net" in k})


def _abi_address(word: str) -> str | None:
    try:
        raw = bytes.fromhex(word)
    except ValueError:
        return None
    if len(raw) != 32 or any(raw[:12]):
        return None
    return encode_address(bytes([ADDRESS_PREFIX]) + raw[12:])


def _call(request: Request, body: dict[str, Any]) -> tuple[str, list[str]] | Response:
    """Check a contract call's target and split its ABI words; an error answer if bad."""
    contract = body.get("contract_address")
    if contract != sandbox(request).config.usdt_contract:
        return wire.error("CONTRACT_VALIDATE_ERROR", "No contract or not a smart contract")
    parameter = body.get("parameter") or ""
    if not isinstance(parameter, str) or len(parameter) % 64:
        return wire.error("OTHER_ERROR", "bad parameter")
    return str(body.get("function_selector")), [parameter[i:i + 64]
                                                for i in range(0, len(parameter), 64)]


def _transfer_energy(world: World, owner: str | None,
                     words: list[str]) -> int | Response | None:
    """The energy of ``transfer(to, amount)``; None when the call would revert."""
    if len(words) != 2 or owner is None:
        return wire.error("OTHER_ERROR", "bad parameter")
    to = _abi_address(words[0])
    try:
        amount = int(words[1], 16)
    except ValueError:
        to = None
    if to is None:
        return wire.error("OTHER_ERROR", "bad parameter")
    if world.usdt_units(owner) < amount:
        return None
    return world.transfer_energy(to)


def _transaction(owner: str | None) -> dict[str, Any]:
    return {"txID": secrets.token_hex(32), "raw_data": {"contract": [
        {"type": "TriggerSmartContract", "parameter": {"value": {"owner_address": owner}}}]}}


@router.post("/wallet/triggerconstantcontract")
async def trigger_constant_contract(request: Request) -> Response:
    body = await wire.body(request)
    if multicall.named(body.get("contract_address")):
        return _multicall(request, body)
    call = _call(request, body)
    if isinstance(call, Response):
        return call
    selector, words = call
    owner, world = wire.address(body, "owner_address"), wire.world(request)
    answer: dict[str, Any] = {"result": {"result": True}, "transaction": _transaction(owner)}
    if selector == "balanceOf(address)" and len(words) == 1 and _abi_address(words[0]):
        holder = _abi_address(words[0]) or ""
        return wire.answer({**answer, "energy_used": BALANCE_OF_ENERGY,
                            "constant_result": [f"{world.usdt_units(holder):064x}"]})
    if selector == "decimals()" and not words:
        return wire.answer({**answer, "energy_used": 300, "constant_result": [f"{6:064x}"]})
    if selector == "transfer(address,uint256)":
        energy = _transfer_energy(world, owner, words)
        if isinstance(energy, Response):
            return energy
        if energy is None:  # java-tron: the call ran, reverted and used what executing uses
            usdt = world.parameters.usdt(world.head_number())
            return wire.answer({"result": {"result": True, "message": "REVERT opcode executed"},
                                "energy_used": revert_energy(usdt),
                                "constant_result": ["0" * 64],
                                "transaction": answer["transaction"]})
        return wire.answer({**answer, "energy_used": energy, "constant_result": [f"{1:064x}"]})
    return wire.error("CONTRACT_VALIDATE_ERROR", f"no such function: {selector}")


def _multicall(request: Request, body: dict[str, Any]) -> Response:
    """A constant call of the chain's Multicall (``chain/multicall.py``)."""
    if body.get("function_selector") != multicall.AGGREGATE:
        return wire.error("CONTRACT_VALIDATE_ERROR",
                          f"no such function: {body.get('function_selector')}")
    parameter = body.get("parameter") or ""
    if not isinstance(parameter, str):
        return wire.error("OTHER_ERROR", "bad parameter")
    world = wire.world(request)
    answer = multicall.aggregate(world, world.parameters.usdt(world.head_number()), parameter)
    transaction = _transaction(wire.address(body, "owner_address"))
    if "message" in answer["result"]:
        transaction["ret"] = [{"ret": "FAILED"}]
    return wire.answer({**answer, "transaction": transaction})


@router.post("/wallet/estimateenergy")
async def estimate_energy(request: Request) -> Response:
    if not sandbox(request).config.node_estimate_energy:
        return wire.error("OTHER_ERROR", NO_ESTIMATE)
    body = await wire.body(request)
    call = _call(request, body)
    if isinstance(call, Response):
        return call
    selector, words = call
    if selector != "transfer(address,uint256)":
        return wire.error("CONTRACT_VALIDATE_ERROR", f"no such function: {selector}")
    energy = _transfer_energy(wire.world(request), wire.address(body, "owner_address"), words)
    if isinstance(energy, Response):
        return energy
    if energy is None:
        return wire.error("CONTRACT_EXE_ERROR", "REVERT opcode executed")
    return wire.answer({"result": {"result": True}, "energy_required": energy})
