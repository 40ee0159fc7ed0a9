"""The emulated service's /v1 endpoints: authentication, validation, envelopes."""

from __future__ import annotations

import hmac
import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from tronenergy_protocol import signing
from tronenergy_protocol.codes import SUCCESS_ENERGY, SUCCESS_MONITOR, ErrorCode
from tronenergy_sandbox import params, schemas
from tronenergy_sandbox.errors import WorldError
from tronenergy_sandbox.jsonout import dumps
from tronenergy_sandbox.pricing import PRICE_RENT_TIMES, PURCHASE_RENT_TIMES
from tronenergy_sandbox.state import SandboxState

router = APIRouter(prefix="/v1", responses=schemas.ERROR_RESPONSES)


def json_response(request: Request, payload: dict[str, Any], code: int, status: int = 200,
                  headers: dict[str, str] | None = None) -> Response:
    request.state.code = code
    return Response(dumps(payload), status_code=status, media_type="application/json",
                    headers=headers)


def ok(request: Request, data: Any, *, code: int = SUCCESS_ENERGY,
       message: str = "success") -> Response:
    return json_response(request, {"success": True, "code": code, "message": message,
                                   "data": data}, code)


def error_payload(code: int, message: str) -> dict[str, Any]:
    return {"success": False, "code": code, "message": message, "data": None}


def sandbox(request: Request) -> SandboxState:
    state: SandboxState = request.app.state.sandbox
    return state


async def authenticate(request: Request, *, key_only_allowed: bool = False) -> bytes:
    """Check key, timestamp window and signature; return the raw body that was signed."""
    creds = sandbox(request).credentials
    headers = request.headers
    api_key = headers.get("x-api-key")
    if not api_key or not hmac.compare_digest(
        api_key.encode("utf-8", "replace"), creds.api_key.encode()
    ):
        raise WorldError(ErrorCode.MISSING_API_KEY, "missing or unknown API key")
    body = await request.body()
    timestamp = headers.get("x-timestamp")
    signature = headers.get("x-signature")
    if key_only_allowed and timestamp is None and signature is None:
        return body
    if timestamp is None or not signing.timestamp_in_window(timestamp, time.time()):
        raise WorldError(ErrorCode.BAD_TIMESTAMP, "X-Timestamp missing or outside the 300 s window")
    raw_path = request.scope.get("raw_path") or request.url.path.encode()
    path = raw_path.decode("latin-1")
    query = request.scope.get("query_string", b"")
    if query:
        path = f"{path}?{query.decode('latin-1')}"
    if not signature or not signing.verify_request(
        creds.api_secret, signature, creds.signature_scheme, timestamp, request.method, path, body
    ):
        raise WorldError(ErrorCode.BAD_SIGNATURE, "X-Signature does not match the request")
    return body


async def signed_json(request: Request) -> dict[str, Any]:
    return params.json_object(await authenticate(request))


# -- energy ---------------------------------------------------------------------


@router.get("/energy/account", responses={200: {"model": schemas.AccountResponse}})
async def get_account(request: Request) -> Response:
    await authenticate(request)
    return ok(request, sandbox(request).world.account())


@router.get(
    "/energy/price",
    responses={200: {"model": schemas.PriceResponse}},
    openapi_extra=schemas.query_params(
        {"name": "rent_time", "schema": {"type": "number", "enum": [0.08, 0.17, 1]}}
    ),
)
async def get_price(request: Request) -> Response:
    await authenticate(request, key_only_allowed=True)
    rent_time = params.rent_time_query(request.query_params.get("rent_time"), PRICE_RENT_TIMES)
    return ok(request, sandbox(request).world.price(rent_time))


def _purchase(order: dict[str, Any], *, with_energy: bool) -> dict[str, Any]:
    data = {"order_id": order["order_id"], "tx_hash": order["tx_hash"], "cost": order["cost"]}
    if with_energy:
        data["energy_amount"] = order["energy_amount"]
    return data


async def _buy(request: Request, kind: str) -> Response:
    body = await signed_json(request)
    target = params.address(params.field(body, "target_address"), "target_address")
    energy = params.integer(params.field(body, "energy_amount"), "energy_amount", 65000)
    rent_time = params.rent_time(params.field(body, "rent_time"), PURCHASE_RENT_TIMES)
    order = sandbox(request).world.buy(target, energy, rent_time, kind=kind)
    return ok(request, _purchase(order, with_energy=kind == "rent"), message="order placed")


@router.post("/energy/buy", responses={200: {"model": schemas.PurchaseResponse}},
             openapi_extra=schemas.request_body(schemas.BuyBody))
async def buy(request: Request) -> Response:
    return await _buy(request, "buy")


@router.post("/energy/rent", responses={200: {"model": schemas.CountedPurchaseResponse}},
             openapi_extra=schemas.request_body(schemas.BuyBody),
             description="Named only by the spec; the sandbox treats it as /energy/buy.")
async def rent(request: Request) -> Response:
    return await _buy(request, "rent")


@router.post("/energy/auto-buy", responses={200: {"model": schemas.CountedPurchaseResponse}},
             openapi_extra=schemas.request_body(schemas.AutoBuyBody))
async def auto_buy(request: Request) -> Response:
    body = await signed_json(request)
    from_address = params.address(params.field(body, "from_address"), "from_address")
    to_address = params.address(params.field(body, "to_address"), "to_address")
    rent_time = params.rent_time(params.field(body, "rent_time"), PURCHASE_RENT_TIMES)
    order = sandbox(request).world.auto_buy(from_address, to_address, rent_time)
    return ok(request, _purchase(order, with_energy=True), message="order placed")


@router.post("/energy/buy-count", responses={200: {"model": schemas.CountedPurchaseResponse}},
             openapi_extra=schemas.request_body(schemas.BuyCountBody))
async def buy_count(request: Request) -> Response:
    body = await signed_json(request)
    target = params.address(params.field(body, "target_address"), "target_address")
    count = params.integer(params.field(body, "count"), "count", 1)
    if count < 1:
        raise params.invalid("count must be at least 1")
    rent_time = params.rent_time(params.field(body, "rent_time"), PURCHASE_RENT_TIMES)
    order = sandbox(request).world.buy_count(target, count, rent_time)
    return ok(request, _purchase(order, with_energy=True), message="order placed")


@router.post("/energy/smart-buy", responses={200: {"model": schemas.SmartPurchaseResponse}},
             openapi_extra=schemas.request_body(schemas.SmartBuyBody))
async def smart_buy(request: Request) -> Response:
    body = await signed_json(request)
    receiver = params.address(params.field(body, "receiver_address"), "receiver_address")
    to_address = params.address(params.field(body, "to_address"), "to_address")
    from_address = params.optional_address(params.field(body, "from_address"), "from_address")
    rent_time = params.rent_time(params.field(body, "rent_time"), PURCHASE_RENT_TIMES)
    order = sandbox(request).world.smart_buy(receiver, to_address, from_address or receiver,
                                             rent_time)
    data = {
        "order_id": order["order_id"],
        "activated": order["activation_cost"] > 0,
        "energy_amount": order["energy_amount"],
        "cost": order["cost"],
    }
    return ok(request, data, message="order placed")


@router.post("/energy/check-address", responses={200: {"model": schemas.AddressCheckResponse}},
             openapi_extra=schemas.request_body(schemas.AddressBody))
async def check_address(request: Request) -> Response:
    body = await signed_json(request)
    address = params.address(params.field(body, "address"), "address")
    return ok(request, sandbox(request).world.check_address(address))


@router.post("/energy/activate", responses={200: {"model": schemas.ActivationResponse}},
             openapi_extra=schemas.request_body(schemas.AddressBody))
async def activate(request: Request) -> Response:
    body = await signed_json(request)
    address = params.address(params.field(body, "address"), "address")
    order = sandbox(request).world.activate(address)
    payload = {
        "success": True,
        "order_id": order["order_id"],
        "tx_hash": order["tx_hash"],
        "cost": order["cost"],
        "message": f"address {address} activated",
    }
    return json_response(request, payload, SUCCESS_ENERGY)


@router.get("/energy/order/{order_id}", responses={200: {"model": schemas.OrderResponse}},
            openapi_extra=schemas.path_param("order_id", "the order_id a purchase returned"))
async def get_order(request: Request) -> Response:
    await authenticate(request)
    return ok(request, sandbox(request).world.order(request.path_params["order_id"]))


# -- monitoring -----------------------------------------------------------------


async def _stats(request: Request) -> Response:
    await authenticate(request)
    return ok(request, sandbox(request).world.monitor_stats(), code=SUCCESS_MONITOR)


router.add_api_route("/tron-monitor/stats", _stats, methods=["GET"],
                     responses={200: {"model": schemas.MonitorStatsResponse}},
                     name="monitor_stats")
router.add_api_route("/tron-monitor/tron-monitor/stats", _stats, methods=["GET"],
                     responses={200: {"model": schemas.MonitorStatsResponse}},
                     name="monitor_stats_doubled",
                     description="The spec's doubled path; same as /tron-monitor/stats.")


@router.get(
    "/tron-monitor/addresses",
    responses={200: {"model": schemas.MonitoredPageResponse}},
    openapi_extra=schemas.query_params(
        {"name": "page", "schema": {"type": "integer", "minimum": 1, "default": 1}},
        {"name": "page_size",
         "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}},
        {"name": "status", "schema": {"type": "string", "enum": ["active", "inactive"]}},
    ),
)
async def list_addresses(request: Request) -> Response:
    await authenticate(request)
    query = request.query_params
    page = params.int_query(query.get("page"), "page", 1, 1, None)
    page_size = params.int_query(query.get("page_size"), "page_size", 20, 1, 100)
    status = query.get("status") or None
    if status not in (None, "active", "inactive"):
        raise params.invalid("status must be active or inactive")
    data = sandbox(request).world.monitor_list(page, page_size, status)
    return ok(request, data, code=SUCCESS_MONITOR)


@router.post("/tron-monitor/addresses", responses={200: {"model": schemas.MonitorAddedResponse}},
             openapi_extra=schemas.request_body(schemas.MonitorAddBody))
async def add_address(request: Request) -> Response:
    body = await signed_json(request)
    state = sandbox(request)
    address = params.address(params.field(body, "address"), "address")
    webhook_url = params.field(body, "webhook_url")
    if webhook_url in (None, "", params.MISSING) and state.credentials.webhook_url:
        webhook_url = state.credentials.webhook_url
    webhook_url = params.url(webhook_url, "webhook_url")
    label = params.string(params.field(body, "label"), "label", default="")
    tokens = params.tokens(params.field(body, "tokens"))
    secret = params.field(body, "webhook_secret")
    if secret in (None, "", params.MISSING):
        secret = None
    else:
        secret = params.string(secret, "webhook_secret")
    data = state.world.monitor_add(address, webhook_url, label, tokens, secret)
    return ok(request, data, code=SUCCESS_MONITOR, message=f"address {address} added")


@router.delete("/tron-monitor/addresses/{address}",
               responses={200: {"model": schemas.DeletedResponse}},
               openapi_extra=schemas.path_param("address", "the monitored TRON address"))
async def delete_address(request: Request) -> Response:
    await authenticate(request)
    address = params.address(request.path_params["address"], "address")
    sandbox(request).world.monitor_delete(address)
    return ok(request, None, code=SUCCESS_MONITOR, message=f"address {address} removed")
