"""The sandbox as a TRON full node: java-tron's HTTP API at the root, beside ``/v1``.

Enough of ``/wallet/...`` and ``/walletsolidity/...`` for an unmodified tronpy
client and the provider's ``tron_node`` hook: accounts, resources, every token's
(USDT's and the sandbox's own, ``chain/tokens.py``) ``balanceOf`` / ``transfer`` /
``decimals`` / ``symbol`` / ``name`` / ``totalSupply`` as constant calls and energy
estimates. Blocks, building, broadcasting and receipts are the chain's
(``chain/routes.py``). Answers take java-tron's shapes (hex ``41...`` addresses, base58
with ``visible``, read as ``wire.call`` reads them; zero fields left out; ``{}`` for
what the chain does not know). No
signing, as on a public node; an API key header is accepted and ignored (never logged).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from tronenergy_protocol.address import ADDRESS_PREFIX, encode_address
from tronenergy_sandbox.api import sandbox
from tronenergy_sandbox.chain import codec, multicall, wire
from tronenergy_sandbox.chain.charging import revert_energy
from tronenergy_sandbox.world import World

router = APIRouter(include_in_schema=False)
NO_ESTIMATE = "this node does not support estimate energy"
BALANCE_OF_ENERGY = 14_650  # a constant call of balanceOf, as mainnet reports it
VIEW_ENERGY = 300
"""A constant call of ``decimals()`` / ``symbol()`` / ``name()`` / ``totalSupply()``
(the sandbox's figure)."""


def _account_key(request: Request, read: Callable[[], bytes]) -> str | Response | None:
    """The account an address parameter names (None: no account can have these bytes), or
    java-tron's ``Error`` answer for a parameter in the wrong form."""
    try:
        raw = read()
    except codec.CodecError as exc:
        return wire.failure(exc)
    wire.world(request).advance()  # the accounts as of the head block, its transactions run
    address = codec.address_key(raw)
    return address if address is not None and wire.world(request).is_activated(address) \
        else None


@router.api_route("/wallet/getaccount", methods=["GET", "POST"])
async def get_account(request: Request) -> Response:
    """java-tron's ``GetAccountServlet``: the account as of the head block."""
    call = await wire.call(request)
    return _account(request, call)


@router.api_route("/walletsolidity/getaccount", methods=["GET", "POST"])
async def solid_get_account(request: Request) -> Response:
    """``GetAccountOnSolidityServlet``: the account as of the solidified block (``solid``)."""
    call = await wire.call(request)
    world = wire.world(request)
    world.advance()
    with world.solidified():
        return _account(request, call)


def _account(request: Request, call: wire.Call) -> Response:
    """The account ``address`` names, as ``Wallet.getAccount`` prints it (nothing awaited:
    a solidity read runs inside ``World.solidified``)."""
    address = _account_key(request, lambda: call.address("address"))
    if not isinstance(address, str):
        return address if isinstance(address, Response) else wire.answer({})
    world = wire.world(request)
    wallet, times = world.wallet(address), world.consume_times(address)
    account: dict[str, Any] = {"address": codec.shown_address(address, call.visible),
                               "create_time": 1_700_000_000_000}
    if wallet["trx_sun"]:
        account["balance"] = wallet["trx_sun"]
    account.update(world.account_permissions_json(address, call.visible))
    # Usage recovered to the read block and the times of last use as block timestamps (ms),
    # as Wallet.getAccount prints them (updateUsage; genesis + 3 s x slot); zeros left out.
    usage = {"net_usage": wallet["net_used"], "free_net_usage": wallet["free_net_used"],
             "latest_consume_time": times["net"], "latest_consume_free_time": times["free_net"]}
    account.update({k: v for k, v in usage.items() if v})
    energy = {"energy_usage": wallet["energy_used"],
              "latest_consume_time_for_energy": times["energy"]}
    if any(energy.values()):
        account["account_resource"] = {k: v for k, v in energy.items() if v}
    return wire.answer(account)


def _resources(world: World, address: str) -> dict[str, int]:
    figures = world.resources(address)
    shown = {k: v for k, v in figures.items() if v}  # java-tron leaves zeros out
    shown.update({"TotalNetLimit": 43_200_000_000, "TotalNetWeight": 26_000_000_000,
                  "TotalEnergyLimit": 180_000_000_000, "TotalEnergyWeight": 19_000_000_000})
    return shown


@router.api_route("/wallet/getaccountresource", methods=["GET", "POST"])
async def get_account_resource(request: Request) -> Response:
    """java-tron's ``GetAccountResourceServlet`` (``Util.getHexAddress`` with ``visible``)."""
    call = await wire.call(request)
    address = _account_key(request, lambda: call.hex_address("address"))
    if not isinstance(address, str):
        return address if isinstance(address, Response) else wire.answer({})
    return wire.answer(_resources(wire.world(request), address))


@router.api_route("/wallet/getaccountnet", methods=["GET", "POST"])
async def get_account_net(request: Request) -> Response:
    call = await wire.call(request)
    address = _account_key(request, lambda: call.hex_address("address"))
    if not isinstance(address, str):
        return address if isinstance(address, Response) else wire.answer({})
    figures = _resources(wire.world(request), address)
    return wire.answer({k: v for k, v in figures.items() if "Net" in k})


def _abi_address(word: str) -> str | None:
    try:
        raw = bytes.fromhex(word)
    except ValueError:
        return None
    if len(raw) != 32 or any(raw[:12]):
        return None
    return encode_address(bytes([ADDRESS_PREFIX]) + raw[12:])


@dataclass(frozen=True)
class _Constant:
    """A constant call read as ``TriggerConstantContractServlet`` reads it."""

    owner: str | None
    contract: str
    selector: str
    words: list[str]
    visible: bool


def _call(request: Request, call: wire.Call) -> _Constant | Response:
    """``Util.validateParameter``, the ``JsonFormat`` merge, then the contract's check; an
    error answer (``OTHER_ERROR`` for what the servlet's catch-all catches) if refused."""
    body, visible = call.params, call.visible
    if not body.get("owner_address"):
        return wire.error("OTHER_ERROR", "class java.security.InvalidParameterException : "
                          "owner_address isn't set.", visible)
    try:
        owner = codec.address_key(call.address("owner_address"))
        contract = codec.address_key(call.address("contract_address"))
    except codec.CodecError as exc:
        return wire.error("OTHER_ERROR", f"{exc.java_class} : {exc}", visible)
    if contract is None or not wire.world(request).is_token(contract):
        return wire.error("CONTRACT_VALIDATE_ERROR", "No contract or not a smart contract",
                          visible)
    parameter = body.get("parameter") or ""
    if not isinstance(parameter, str) or len(parameter) % 64:
        return wire.error("OTHER_ERROR", "bad parameter", visible)
    return _Constant(owner, contract, str(body.get("function_selector")),
                     [parameter[i:i + 64] for i in range(0, len(parameter), 64)], visible)


def _transfer_energy(world: World, contract: str, owner: str | None, words: list[str],
                     visible: bool) -> int | Response | None:
    """The energy of ``contract``'s ``transfer(to, amount)``; None when the call would revert."""
    if len(words) != 2 or owner is None:
        return wire.error("OTHER_ERROR", "bad parameter", visible)
    to = _abi_address(words[0])
    try:
        amount = int(words[1], 16)
    except ValueError:
        to = None
    if to is None:
        return wire.error("OTHER_ERROR", "bad parameter", visible)
    energy = world.token_energy(contract, world.read_block())
    if energy is None or world.units_of(contract, owner) < amount:
        return None
    return energy.transfer_energy(not world.holds_token(contract, to))


def _transaction(owner: str | None, visible: bool) -> dict[str, Any]:
    shown = None if owner is None else codec.shown_address(owner, visible)
    return {"txID": secrets.token_hex(32), "raw_data": {"contract": [
        {"type": "TriggerSmartContract", "parameter": {"value": {"owner_address": shown}}}]}}


@router.api_route("/wallet/triggerconstantcontract", methods=["GET", "POST"])
@router.api_route("/walletsolidity/triggerconstantcontract", methods=["GET", "POST"])
async def trigger_constant_contract(request: Request) -> Response:
    """The call run on the head state, or on ``/walletsolidity`` on the solidified state
    (``TriggerConstantContractOnSolidityServlet`` through ``WalletOnSolidity``)."""
    if request.method == "GET":
        return wire.nothing()  # java-tron's doGet is empty
    call = await wire.call(request)
    world = wire.world(request)
    world.advance()
    with _state_of(request, world):
        if multicall.named(call.params.get("contract_address")):
            return _multicall(request, call)
        return _constant(request, call, world)


def _state_of(request: Request, world: World) -> AbstractContextManager[Any]:
    """The solidified state for a ``/walletsolidity`` route, else the head's."""
    return world.solidified() if request.url.path.startswith("/walletsolidity/") \
        else nullcontext()


def _constant(request: Request, call: wire.Call, world: World) -> Response:
    """A constant call of a token (nothing awaited: it may run inside ``solidified``)."""
    constant = _call(request, call)
    if isinstance(constant, Response):
        return constant
    selector, words, visible = constant.selector, constant.words, constant.visible
    owner, contract = constant.owner, constant.contract
    answer: dict[str, Any] = {"result": {"result": True},
                              "transaction": _transaction(owner, visible)}
    if selector == "balanceOf(address)" and len(words) == 1 and _abi_address(words[0]):
        holder = _abi_address(words[0]) or ""
        return wire.answer({**answer, "energy_used": BALANCE_OF_ENERGY,
                            "constant_result": [f"{world.units_of(contract, holder):064x}"]})
    if selector == "decimals()" and not words:
        decimals = world.token_decimals(contract)
        if decimals is None:  # a contract without the function: its fallback reverts
            return _reverted(answer, VIEW_ENERGY, "", visible)
        return wire.answer({**answer, "energy_used": VIEW_ENERGY,
                            "constant_result": [f"{decimals:064x}"]})
    if selector in ("name()", "symbol()") and not words:
        text = world.token_names(contract)[0 if selector == "name()" else 1]
        if text is None:  # a contract without the function: its fallback reverts
            return _reverted(answer, VIEW_ENERGY, "", visible)
        return wire.answer({**answer, "energy_used": VIEW_ENERGY,
                            "constant_result": [_abi_string(text)]})
    if selector == "totalSupply()" and not words:
        return wire.answer({**answer, "energy_used": VIEW_ENERGY,
                            "constant_result": [f"{world.total_supply(contract):064x}"]})
    if selector == "transfer(address,uint256)":
        energy = _transfer_energy(world, contract, owner, words, visible)
        if isinstance(energy, Response):
            return energy
        if energy is None:  # java-tron: the call ran, reverted and used what executing uses
            rules = world.token_energy(contract, world.read_block())
            assert rules is not None
            return _reverted(answer, revert_energy(rules), "0" * 64, visible)
        return wire.answer({**answer, "energy_used": energy, "constant_result": [f"{1:064x}"]})
    return wire.error("CONTRACT_VALIDATE_ERROR", f"no such function: {selector}", visible)


def _reverted(answer: dict[str, Any], energy: int, result: str, visible: bool) -> Response:
    """A constant call that ran and reverted: java-tron's ``message`` beside ``result``."""
    reverted = wire.refusal("", "REVERT opcode executed", visible)["message"]
    return wire.answer({"result": {"result": True, "message": reverted}, "energy_used": energy,
                        "constant_result": [result], "transaction": answer["transaction"]})


def _abi_string(text: str) -> str:
    """A ``string`` return value, ABI-encoded (offset, length, the UTF-8 bytes padded)."""
    from eth_abi.abi import encode

    return bytes(encode(["string"], [text])).hex()


def _multicall(request: Request, call: wire.Call) -> Response:
    """A constant call of the chain's Multicall (``chain/multicall.py``)."""
    visible = call.visible
    if call.params.get("function_selector") != multicall.AGGREGATE:
        return wire.error("CONTRACT_VALIDATE_ERROR",
                          f"no such function: {call.params.get('function_selector')}", visible)
    parameter = call.params.get("parameter") or ""
    if not isinstance(parameter, str):
        return wire.error("OTHER_ERROR", "bad parameter", visible)
    try:
        owner = codec.address_key(call.address("owner_address"))
    except codec.CodecError as exc:
        return wire.error("OTHER_ERROR", f"{exc.java_class} : {exc}", visible)
    world = wire.world(request)
    answer = multicall.aggregate(world, parameter)
    transaction = _transaction(owner, visible)
    if "message" in answer["result"]:
        transaction["ret"] = [{"ret": "FAILED"}]
    return wire.answer({**answer, "transaction": transaction})


@router.api_route("/wallet/estimateenergy", methods=["GET", "POST"])
@router.api_route("/walletsolidity/estimateenergy", methods=["GET", "POST"])
async def estimate_energy(request: Request) -> Response:
    if request.method == "GET":
        return wire.nothing()
    call = await wire.call(request)
    if not sandbox(request).config.node_estimate_energy:
        return wire.error("OTHER_ERROR", NO_ESTIMATE, call.visible)
    world = wire.world(request)
    world.advance()
    with _state_of(request, world):
        return _estimate(request, call, world)


def _estimate(request: Request, call: wire.Call, world: World) -> Response:
    constant = _call(request, call)
    if isinstance(constant, Response):
        return constant
    if constant.selector != "transfer(address,uint256)":
        return wire.error("CONTRACT_VALIDATE_ERROR", f"no such function: {constant.selector}",
                          call.visible)
    energy = _transfer_energy(world, constant.contract, constant.owner, constant.words,
                              call.visible)
    if isinstance(energy, Response):
        return energy
    if energy is None:
        return wire.error("CONTRACT_EXE_ERROR", "REVERT opcode executed", call.visible)
    return wire.answer({"result": {"result": True}, "energy_required": energy})
