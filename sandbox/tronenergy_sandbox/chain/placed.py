"""Transfers placed straight into blocks: a day of traffic in one request, for drills and bench.

``POST /sandbox/chain/blocks/transfers`` writes transactions as the chain would hold them
once executed (a USDT ``transfer`` call and its receipt's ``Transfer`` logs, a TRX
``TransferContract``), each into the block it names, without a key, a broadcast or
charging: a scan reads them exactly as it reads broadcast ones (``getblockbylimitnext``,
``gettransactioninfobyblocknum``, ``gettransactioninfobyid``). A block may lie in the chain's
past (the sandbox's chain had one: blocks before its first came every interval before it),
so a day of blocks exists at once without waiting for it, or ahead of the head: the
transaction shows once its block is produced. The recipient's balance moves at once.

Each transfer names ``to``, ``units`` (a list: one transaction paying ``to`` several times,
one log each, as a payer contract calling the token does), and optionally ``block``
(default: the next block), ``from``, ``token`` (``USDT`` or ``TRX``), ``contract`` (another
TRC-20 contract: a token of the sandbox's own, whose balance moves, ``units`` then up to
uint256 as digit strings; else a look-alike token, no balance moves), ``failed`` (the call
reverted: no log) and ``callback`` (default true: a monitored recipient's callback is
queued, due when the block is produced, as the service would send it).
"""

from __future__ import annotations

import json
import secrets
from decimal import Decimal
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from tronenergy_protocol.address import decode_address, random_address
from tronenergy_sandbox import params
from tronenergy_sandbox.api import sandbox
from tronenergy_sandbox.chain import codec
from tronenergy_sandbox.chain.codec import TRANSFER, TRIGGER
from tronenergy_sandbox.chain.ledger import USDT_UNITS
from tronenergy_sandbox.chain.token_routes import units as token_units
from tronenergy_sandbox.chain.views import (
    USDT_CALL_ENERGY,
    raw_data,
    reverted,
    succeeded,
    transfer_call_data,
    transfer_log,
)
from tronenergy_sandbox.control import loopback_only, reply
from tronenergy_sandbox.world import World

router = APIRouter(prefix="/sandbox/chain", include_in_schema=False,
                   dependencies=[Depends(loopback_only)])
MAX_PLACED = 50_000
"""Transfers one request may place."""
MAX_AHEAD = 100_000
"""How far past the head a transfer may be placed (blocks)."""


def _raw(kind: str, value: dict[str, Any], block_ms: int) -> codec.Decoded:
    """A transaction of ``kind``; 8 random bytes of memo keep equal transfers apart."""
    return codec.decode(codec.pack_raw(raw_data(kind, value, block_ms,
                                                memo=secrets.token_hex(8))), [])


def _checked(world: World, item: Any) -> dict[str, Any]:
    """One transfer of the request, its fields checked and defaults filled in."""
    if not isinstance(item, dict):
        raise params.invalid("each transfer must be an object")
    token = str(item.get("token") or "USDT").upper()
    if token not in ("USDT", "TRX"):
        raise params.invalid("token must be USDT or TRX")
    amounts = item.get("units")
    amounts = amounts if isinstance(amounts, list) else [amounts]
    contract = params.optional_address(item.get("contract"), "contract")
    own = contract is not None and world.token(contract) is not None
    units = [token_units(a) if own else params.integer(a, "units") for a in amounts]
    if not units or any(u <= 0 for u in units) or (token == "TRX" and len(units) != 1):
        raise params.invalid("units must be a positive integer (a list of them for USDT)")
    head = world.head_number()
    block = params.integer(item.get("block"), "block", head + 1)
    if not 1 <= block <= head + MAX_AHEAD:
        raise params.invalid(f"block must be between 1 and {head + MAX_AHEAD}")
    if token == "TRX" and (contract is not None or item.get("failed")):
        raise params.invalid("a TRX transfer has no contract and does not fail")
    return {"to": params.address(item.get("to"), "to"), "units": units, "block": block,
            "from": params.optional_address(item.get("from"), "from") or random_address(),
            "token": token, "contract": contract or world.usdt_contract,
            "failed": bool(item.get("failed")), "own": own,
            "callback": item.get("callback", True) is not False}


def _token_transaction(world: World, t: dict[str, Any], block_ms: int
                       ) -> tuple[codec.Decoded, dict[str, Any]]:
    """A token call and its receipt: ``transfer(to, units)`` on the token, or a payer
    contract's call that makes the token pay ``to`` several times (one log each)."""
    several = len(t["units"]) > 1
    called = random_address() if several else t["contract"]
    data = secrets.token_hex(36) if several else transfer_call_data(t["to"], t["units"][0])
    tx = _raw(TRIGGER, {"owner_address": decode_address(t["from"]).hex(),
                        "contract_address": decode_address(called).hex(), "data": data},
              block_ms)
    energy = USDT_CALL_ENERGY * len(t["units"])
    info: dict[str, Any] = {"id": tx.txid, "contractResult": [f"{1:064x}"],
                            "contract_address": decode_address(called).hex()}
    if t["failed"]:
        return tx, reverted(info, energy)
    succeeded(info, energy)
    info["log"] = [transfer_log(t["contract"], t["from"], t["to"], u) for u in t["units"]]
    return tx, info


def place(world: World, items: list[Any]) -> list[dict[str, Any]]:
    """Write each transfer into its block (one database transaction); their txids."""
    if not isinstance(items, list) or not 0 < len(items) <= MAX_PLACED:
        raise params.invalid(f"transfers must be a list of 1 to {MAX_PLACED:,}")
    world.advance()
    checked = [_checked(world, item) for item in items]
    placed = []
    with world._tx() as db:
        for t in checked:
            at = world.block_time(t["block"])
            block_ms = int(at * 1000)
            if t["token"] == "TRX":
                tx = _raw(TRANSFER, {"owner_address": decode_address(t["from"]).hex(),
                                     "to_address": decode_address(t["to"]).hex(),
                                     "amount": t["units"][0]}, block_ms)
                info: dict[str, Any] = {"id": tx.txid, "contractResult": [""],
                                        "receipt": {"net_usage": 268}}
            else:
                tx, info = _token_transaction(world, t, block_ms)
            db.execute(
                "INSERT INTO chain_transactions (txid, owner, to_address, token, amount, raw_hex,"
                " signatures, block_number, accepted_at, status, info) VALUES (?, ?, ?, ?, ?, ?,"
                " '[]', ?, ?, 'executed', ?)",
                (tx.txid, t["from"], t["to"], t["contract"] if t["own"] else t["token"],
                 str(sum(t["units"])), tx.raw_hex(),
                 t["block"], world.clock(), json.dumps(info)))
            with world._writing_in(t["block"]):
                _move(world, t, tx.txid)
            placed.append({"txid": tx.txid, "block_number": t["block"]})
    return placed


def _move(world: World, t: dict[str, Any], txid: str) -> None:
    """The recipient's balance (the real token's or TRX only) and its callbacks."""
    if t["own"]:  # a token of the sandbox's own: its balance, no callback (the service
        if not t["failed"]:  # monitors TRX and USDT)
            world._write_units(t["contract"], t["to"],
                               world.units_of(t["contract"], t["to"]) + sum(t["units"]))
        return
    if t["failed"] or (t["token"] == "USDT" and t["contract"] != world.usdt_contract):
        return
    world._ensure_wallet(t["to"])
    column = "trx_sun" if t["token"] == "TRX" else "usdt_units"
    world.db.execute(f"UPDATE wallets SET {column} = COALESCE({column}, 0) + ? "
                     "WHERE address = ?", (sum(t["units"]), t["to"]))
    if t["token"] == "TRX":
        world.set_activated(t["to"])
    else:
        world.set_holder(t["to"], "USDT")
    url = world._watching_url(t["to"], t["token"]) if t["callback"] else None
    if url is None:
        return
    at = world.block_time(t["block"])
    for units in t["units"]:
        data = {"tx_hash": txid, "from": t["from"], "to": t["to"],
                "amount": format((Decimal(units) / USDT_UNITS).normalize(), "f"),
                "token": t["token"], "block_number": t["block"],
                "block_timestamp": int(at * 1000)}
        world._enqueue(t["to"], data, url, at)


@router.post("/blocks/transfers")
async def place_transfers(request: Request) -> Response:
    """``{"transfers": [...]}``: place each into its block; ``{"transactions": [...]}``."""
    body = params.json_object(await request.body())
    state = sandbox(request)
    placed = place(state.world, body.get("transfers"))  # type: ignore[arg-type]
    if state.dispatcher is not None:
        state.dispatcher.wake()
    return reply(request, {"transactions": placed})
