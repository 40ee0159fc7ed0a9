"""The /sandbox control API: drive the emulated world from tests and demos.

No authentication, so by default it answers only clients on the loopback
interface (``--allow-remote-control`` lifts that).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from tronenergy_protocol.codes import ErrorCode
from tronenergy_sandbox import params
from tronenergy_sandbox.api import json_response, sandbox
from tronenergy_sandbox.errors import SandboxError, WorldError
from tronenergy_sandbox.faults import ERROR_CODES, KINDS
from tronenergy_sandbox.pricing import trx_to_sun
from tronenergy_sandbox.ratelimit import Limit


class ForbiddenError(SandboxError):
    """A control call from a host other than loopback (unless allowed)."""


def loopback_only(request: Request) -> None:
    """The control API answers only on loopback unless the sandbox allows remote control."""
    if sandbox(request).config.allow_remote_control:
        return
    host = request.client.host if request.client else ""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host in ("localhost", "testclient")
    if not loopback:
        raise ForbiddenError(f"control API is loopback-only; {host} is not")


router = APIRouter(prefix="/sandbox", include_in_schema=False,
                   dependencies=[Depends(loopback_only)])


def reply(request: Request, payload: Any) -> Response:
    return json_response(request, {"success": True, "data": payload}, 0)


async def _body(request: Request, *, required: bool = True) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip() and not required:
        return {}
    return params.json_object(raw)


@router.get("/health")
async def health(request: Request) -> Response:
    return reply(request, {"status": "ok"})


@router.post("/transfers")
async def transfer(request: Request) -> Response:
    body = await _body(request)
    from_address = params.address(params.field(body, "from"), "from")
    to_address = params.address(params.field(body, "to"), "to")
    amount = params.amount(params.field(body, "amount"))
    token = params.string(params.field(body, "token"), "token", default="TRX", max_length=20)
    state = sandbox(request)
    result = state.world.transfer(from_address, to_address, amount, token)
    if result["delivery_id"] is not None and state.dispatcher is not None:
        state.dispatcher.wake()
    return reply(request, result)


@router.get("/orders")
async def orders(request: Request) -> Response:
    return reply(request, sandbox(request).world.all_orders())


@router.post("/orders/outcome")
async def plan_outcome(request: Request) -> Response:
    """``{"status": "failed", "count": N}``: the next N orders fail when they complete;
    ``{"status": "success", "withhold_delegation": true, "count": N}``: they succeed at the
    service but their delegation never reaches the chain (unknown tx, no energy)."""
    body = await _body(request)
    status = params.field(body, "status")
    count = params.integer(params.field(body, "count"), "count", 1)
    if status == "failed":
        sandbox(request).world.fail_next_orders(count)
        return reply(request, {"fail_next_orders": count})
    if status == "success" and params.field(body, "withhold_delegation") is True:
        sandbox(request).world.withhold_next_delegations(count)
        return reply(request, {"withhold_next_delegations": count})
    raise params.invalid("status must be failed, or success with withhold_delegation true")


@router.post("/orders/{order_id}/fail")
async def fail_order(request: Request, order_id: str) -> Response:
    return reply(request, sandbox(request).world.end_order(order_id, "failed"))


@router.post("/orders/{order_id}/cancel")
async def cancel_order(request: Request, order_id: str) -> Response:
    return reply(request, sandbox(request).world.end_order(order_id, "cancelled"))


@router.post("/balance")
async def set_balance(request: Request) -> Response:
    body = await _body(request)
    balance = params.field(body, "balance")
    sun = 0 if balance in (0, "0") else trx_to_sun(params.amount(balance, "balance"))
    world = sandbox(request).world
    world.set_balance(sun)
    return reply(request, world.account())


@router.post("/addresses/{address}/activate")
async def seed_activated(request: Request, address: str) -> Response:
    params.address(address, "address")
    world = sandbox(request).world
    world.set_activated(address)
    return reply(request, world.check_address(address))


@router.post("/addresses/{address}/holder")
async def seed_holder(request: Request, address: str) -> Response:
    params.address(address, "address")
    body = await _body(request, required=False)
    token = params.string(params.field(body, "token"), "token", default="USDT", max_length=20)
    world = sandbox(request).world
    world.seed_holder(address, token)  # a USDT holder holds some: balance and charge agree
    return reply(request, world.check_address(address))


def _units(body: dict[str, Any], name: str) -> int | None:
    """A decimal amount of TRX or USDT (6 decimals) as integer units; None when absent."""
    value = params.field(body, name)
    if value is params.MISSING:
        return None
    if value in (0, "0"):
        return 0
    return int(params.amount(value, name) * 1_000_000)


@router.post("/addresses/{address}/balances")
async def set_balances(request: Request, address: str) -> Response:
    """``{"trx": "<TRX>", "usdt": "<USDT>"}`` (either): what the node API reports."""
    params.address(address, "address")
    body = await _body(request)
    return reply(request, sandbox(request).world.set_balances(
        address, trx_sun=_units(body, "trx"), usdt_units=_units(body, "usdt")))


def _resource(body: dict[str, Any], name: str) -> int | None:
    """A non-negative whole amount of energy or bandwidth, or None when not given."""
    value = params.field(body, name)
    if value is params.MISSING:
        return None
    number = params.integer(value, name)
    if number < 0:
        raise params.invalid(f"{name} must not be negative")
    return number


@router.post("/addresses/{address}/energy")
async def set_energy(request: Request, address: str) -> Response:
    """``{"staked": N, "used": N}`` (either): the staked baseline and the energy used."""
    params.address(address, "address")
    body = await _body(request)
    return reply(request, sandbox(request).world.set_energy(
        address, staked=_resource(body, "staked"), used=_resource(body, "used")))


@router.post("/addresses/{address}/bandwidth")
async def set_bandwidth(request: Request, address: str) -> Response:
    """``{"staked": N, "used": N}`` (either): staked bandwidth and how much of it is used."""
    params.address(address, "address")
    body = await _body(request)
    return reply(request, sandbox(request).world.set_bandwidth(
        address, staked=_resource(body, "staked"), used=_resource(body, "used")))


@router.get("/addresses/{address}/wallet")
async def wallet(request: Request, address: str) -> Response:
    params.address(address, "address")
    return reply(request, sandbox(request).world.wallet(address))


@router.get("/deliveries")
async def deliveries(request: Request) -> Response:
    status = request.query_params.get("status") or None
    return reply(request, sandbox(request).world.all_deliveries(status))


@router.post("/deliveries/{delivery_id}/resend")
async def resend(request: Request, delivery_id: int) -> Response:
    state = sandbox(request)
    if state.dispatcher is None:
        raise WorldError(ErrorCode.UPSTREAM_UNAVAILABLE, "dispatcher is not running")
    return reply(request, await state.dispatcher.resend(delivery_id))


@router.get("/faults")
async def list_faults(request: Request) -> Response:
    return reply(request, [f.to_dict() for f in sandbox(request).faults.list()])


@router.post("/faults")
async def add_fault(request: Request) -> Response:
    """``{kind, path, method?, status?, retry_after?, latency_ms?, after_processing?,
    count?, probability?, patch?, api_key?}``; path is relative to /v1 and may end in
    ``*``, or names a node path in full (``/wallet/...``, ``/walletsolidity/...``);
    ``patch`` (kind ``tamper``) maps dotted answer paths to raw JSON text; ``api_key``:
    only requests with that ``TRON-PRO-API-KEY``."""
    body = await _body(request)
    kind = params.string(params.field(body, "kind"), "kind")
    if kind not in KINDS:
        raise params.invalid(f"kind must be one of {', '.join(KINDS)}")
    spec: dict[str, Any] = {"kind": kind}
    spec["path"] = params.string(params.field(body, "path"), "path", default="*")
    method = params.field(body, "method")
    if method not in (None, params.MISSING):
        spec["method"] = params.string(method, "method").upper()
    status = params.integer(params.field(body, "status"), "status", 500)
    if status not in ERROR_CODES:
        raise params.invalid("status must be 500 or 503")
    spec["status"] = status
    spec["retry_after"] = params.integer(params.field(body, "retry_after"), "retry_after", 1)
    spec["latency_ms"] = params.integer(params.field(body, "latency_ms"), "latency_ms", 0)
    spec["after_processing"] = params.field(body, "after_processing") is True
    count = params.field(body, "count")
    if count not in (None, params.MISSING):
        spec["count"] = params.integer(count, "count")
        if spec["count"] < 1:
            raise params.invalid("count must be at least 1")
    probability = params.field(body, "probability")
    if probability not in (None, params.MISSING):
        value = params.amount(probability, "probability")
        if value > 1:
            raise params.invalid("probability must be above 0 and at most 1")
        spec["probability"] = value
    patch = params.field(body, "patch")
    if patch not in (None, params.MISSING):
        if not isinstance(patch, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in patch.items()):
            raise params.invalid("patch must map answer paths to raw JSON text")
        spec["patch"] = patch
    api_key = params.field(body, "api_key")
    if api_key not in (None, params.MISSING):
        spec["api_key"] = params.string(api_key, "api_key")
    fault = sandbox(request).faults.add(**spec)
    return reply(request, fault.to_dict())


@router.delete("/faults")
async def clear_faults(request: Request) -> Response:
    sandbox(request).faults.clear()
    return reply(request, [])


@router.delete("/faults/{fault_id}")
async def remove_fault(request: Request, fault_id: int) -> Response:
    if not sandbox(request).faults.remove(fault_id):
        raise WorldError(ErrorCode.NOT_FOUND, f"fault {fault_id} not found")
    return reply(request, [])


@router.get("/rate-limit")
async def rate_limit_counts(request: Request) -> Response:
    """The node's limit and the requests and 429s it counted per wall-clock second."""
    return reply(request, sandbox(request).faults.rate_limit.counts())


@router.post("/rate-limit")
async def set_rate_limit(request: Request) -> Response:
    """``{requests_per_second, burst?, retry_after?, status?, api_key?}``: the node API answers as
    TronGrid does over its rate, per ``TRON-PRO-API-KEY``; ``burst`` defaults to the rate
    (one second's requests at once), ``retry_after`` to 1 (null: no header), ``status`` to
    429 (503 as TronGrid answers at times); ``api_key``: only that key is limited and
    counted. The counts start again."""
    body = await _body(request)
    rate = params.amount(params.field(body, "requests_per_second"), "requests_per_second")
    burst_value = params.field(body, "burst")
    burst = rate if burst_value in (None, params.MISSING) else params.amount(burst_value, "burst")
    if burst < 1:
        raise params.invalid("burst must be at least 1")
    retry_field = params.field(body, "retry_after")
    retry_after = None if retry_field is None else params.integer(
        retry_field, "retry_after", 1)
    if retry_after is not None and retry_after < 0:
        raise params.invalid("retry_after must not be negative")
    status = params.integer(params.field(body, "status"), "status", 429)
    if status not in (429, 503):
        raise params.invalid("status must be 429 or 503")
    key_field = params.field(body, "api_key")
    api_key = None if key_field in (None, params.MISSING) else params.string(key_field,
                                                                              "api_key")
    limit = Limit(rate, burst, retry_after, status, api_key)
    state = sandbox(request).faults.rate_limit
    state.set(limit)
    state.reset_counts()
    return reply(request, limit.to_dict())


@router.delete("/rate-limit")
async def lift_rate_limit(request: Request) -> Response:
    """No limit any more; the counts start again."""
    state = sandbox(request).faults.rate_limit
    state.set(None)
    state.reset_counts()
    return reply(request, [])
