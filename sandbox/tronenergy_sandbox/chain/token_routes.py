"""The control API for TRC-20 tokens (``/sandbox/chain/tokens``): deploy one, set holdings.

Loopback-only like the rest of ``/sandbox``. Amounts are integer units of the token
(``units``: a JSON integer, or a string of digits for a balance past 2^53 that a
JavaScript client cannot hold exactly), answered as strings. See ``chain/tokens.py``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from tronenergy_protocol.address import random_address
from tronenergy_protocol.numbers import is_ascii_digits
from tronenergy_sandbox import params
from tronenergy_sandbox.api import sandbox
from tronenergy_sandbox.chain.tokens import (
    DEFAULT_HOLDER_ENERGY,
    DEFAULT_NEW_HOLDER_ENERGY,
    UINT256_MAX,
)
from tronenergy_sandbox.control import loopback_only, reply

router = APIRouter(prefix="/sandbox/chain/tokens", include_in_schema=False,
                   dependencies=[Depends(loopback_only)])
ENERGY_FIELDS = ("holder_energy", "new_holder_energy", "energy_factor")


def units(value: Any, field: str = "units") -> int:
    """A uint256 as a JSON integer or a string of ASCII digits."""
    if isinstance(value, str) and is_ascii_digits(value) and len(value) <= 78:
        number = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise params.invalid(f"{field} must be a whole number of token units "
                             "(an integer, or a string of digits)")
    if not 0 <= number <= UINT256_MAX:
        raise params.invalid(f"{field} must be between 0 and 2^256 - 1")
    return number


def _decimals(body: dict[str, Any]) -> int | None:
    value = params.field(body, "decimals")
    if value is params.MISSING:
        raise params.invalid("decimals is required (null: a contract whose decimals() reverts)")
    return None if value is None else params.integer(value, "decimals")


def _text(body: dict[str, Any], name: str, default: str | None, max_length: int) -> str | None:
    """``symbol`` / ``name``: text, or null for a contract whose call reverts."""
    value = params.field(body, name)
    if value is None:
        return None
    if value is params.MISSING:
        if default is None:
            raise params.invalid(f"{name} is required (null: a contract whose {name}() reverts)")
        return default
    return params.string(value, name, max_length=max_length)


@router.post("")
async def create_token(request: Request) -> Response:
    """``{symbol, decimals, name?, contract?, holder_energy?, new_holder_energy?,
    energy_factor?}``: deploy a token (``contract`` default: a fresh address; ``name``
    default: the symbol; ``symbol``, ``name`` or ``decimals`` null: that call reverts)."""
    body = params.json_object(await request.body())
    symbol = _text(body, "symbol", None, 32)
    name = _text(body, "name", symbol or "", 64)
    contract = params.optional_address(params.field(body, "contract"), "contract")
    world = sandbox(request).world
    world.advance()
    token = world.create_token(
        contract=contract or random_address(), name=name, symbol=symbol,
        decimals=_decimals(body),
        holder_energy=params.integer(params.field(body, "holder_energy"), "holder_energy",
                                     DEFAULT_HOLDER_ENERGY),
        new_holder_energy=params.integer(params.field(body, "new_holder_energy"),
                                         "new_holder_energy", DEFAULT_NEW_HOLDER_ENERGY),
        energy_factor=params.integer(params.field(body, "energy_factor"), "energy_factor", 0))
    return reply(request, token)


@router.get("")
async def list_tokens(request: Request) -> Response:
    """Every token on the chain, USDT first."""
    world = sandbox(request).world
    world.advance()
    return reply(request, world.tokens_json())


@router.get("/{contract}")
async def get_token(request: Request, contract: str) -> Response:
    params.address(contract, "contract")
    world = sandbox(request).world
    world.advance()
    return reply(request, world.token_json(contract))


@router.post("/{contract}")
async def change_token(request: Request, contract: str) -> Response:
    """``{holder_energy?, new_holder_energy?, energy_factor?}``: from now on."""
    params.address(contract, "contract")
    body = params.json_object(await request.body())
    changes = {name: params.integer(body[name], name) for name in ENERGY_FIELDS if name in body}
    world = sandbox(request).world
    world.advance()
    return reply(request, world.change_token(contract, changes))


@router.post("/{contract}/holdings")
async def set_holding(request: Request, contract: str) -> Response:
    """``{address, units}``: ``address`` holds exactly ``units`` (minted or burned)."""
    params.address(contract, "contract")
    body = params.json_object(await request.body())
    address = params.address(params.field(body, "address"), "address")
    world = sandbox(request).world
    world.advance()
    return reply(request, world.set_units(contract, address, units(params.field(body, "units"))))


@router.get("/{contract}/holdings/{address}")
async def get_holding(request: Request, contract: str, address: str) -> Response:
    params.address(contract, "contract")
    params.address(address, "address")
    world = sandbox(request).world
    world.advance()
    if not world.is_token(contract):
        world.token_json(contract)  # raises: no token there
    return reply(request, {"contract": contract, "address": address,
                           "units": str(world.units_of(contract, address))})
