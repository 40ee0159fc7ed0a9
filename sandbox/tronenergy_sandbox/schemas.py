"""OpenAPI description of /v1: documentation models only.

Handlers parse requests strictly by hand (see ``params``) and write responses
with exact decimals (see ``jsonout``); these models exist so that
``/openapi.json`` says precisely what goes over the wire, and tests check each
real response against them.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

Amount = Annotated[Decimal, WithJsonSchema({"type": "number", "description": "TRX, 6 decimals"})]
Address = Annotated[str, Field(min_length=34, max_length=34, pattern="^T[1-9A-HJ-NP-Za-km-z]{33}$")]
RentTime = Annotated[Decimal, WithJsonSchema({"type": "number"})]
PurchaseRentTime = Annotated[
    Decimal, WithJsonSchema({"type": "number", "enum": [0.25, 1, 24], "default": 1})
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorResponse(_Strict):
    success: Literal[False]
    code: int
    message: str
    data: None


class _Envelope(_Strict):
    success: Literal[True]
    code: int
    message: str


class Account(_Strict):
    user_id: int
    username: str
    balance: Amount
    available_balance: Amount
    frozen_amount: Amount
    pending_orders_count: int
    recharge_address: Address


class AccountResponse(_Envelope):
    data: Account


class Price(_Strict):
    price_65k_1hour: Amount
    price_per_10k: Amount
    energy_per_transfer: int
    min_energy: int
    max_energy: int
    rent_time: RentTime


class PriceResponse(_Envelope):
    data: Price


class Purchase(_Strict):
    order_id: str
    tx_hash: str
    cost: Amount


class PurchaseResponse(_Envelope):
    data: Purchase


class CountedPurchase(Purchase):
    energy_amount: int


class CountedPurchaseResponse(_Envelope):
    data: CountedPurchase


class SmartPurchase(_Strict):
    order_id: str
    activated: bool
    energy_amount: int
    cost: Amount


class SmartPurchaseResponse(_Envelope):
    data: SmartPurchase


class AddressCheck(_Strict):
    address: Address
    is_activated: bool
    need_activate: bool
    transfer_count: int


class AddressCheckResponse(_Envelope):
    data: AddressCheck


class ActivationResponse(_Strict):
    """The one flat response of the service: no code, no data."""

    success: Literal[True]
    order_id: str
    tx_hash: str
    cost: Amount
    message: str


class Order(_Strict):
    order_id: str
    status: Literal["pending", "processing", "success", "failed", "cancelled"]
    tx_hash: str = Field(description='"" until status is success')
    cost: Amount
    energy_amount: int
    rent_time: RentTime
    target_address: Address
    created_at: str
    updated_at: str
    kind: Literal["buy", "auto_buy", "buy_count", "smart_buy", "activate", "rent"]
    activation_cost: Amount
    to_address: Address | None


class OrderResponse(_Envelope):
    data: Order


class MonitorStats(_Strict):
    total_addresses: int
    active_addresses: int
    total_callbacks: int
    success_callbacks: int
    failed_callbacks: int


class MonitorStatsResponse(_Envelope):
    data: MonitorStats


class MonitoredAddress(_Strict):
    address: Address
    label: str
    tokens: list[str]
    is_active: bool
    total_callbacks: int
    last_callback_at: str | None
    created_at: str


class MonitoredPage(_Strict):
    total: int
    addresses: list[MonitoredAddress]


class MonitoredPageResponse(_Envelope):
    data: MonitoredPage


class MonitorAdded(_Strict):
    address: Address
    status: Literal["active"]
    webhook_url: str


class MonitorAddedResponse(_Envelope):
    data: MonitorAdded


class DeletedResponse(_Envelope):
    data: None


# Request bodies (inline in the operation; unknown fields are ignored by the service).
class BuyBody(BaseModel):
    target_address: Address
    energy_amount: int = Field(65000, ge=32000, le=5_000_000)
    rent_time: PurchaseRentTime = Decimal(1)


class AutoBuyBody(BaseModel):
    from_address: Address
    to_address: Address
    rent_time: PurchaseRentTime = Decimal(1)


class BuyCountBody(BaseModel):
    target_address: Address
    count: int = Field(1, ge=1, le=76)
    rent_time: PurchaseRentTime = Decimal(1)


class SmartBuyBody(BaseModel):
    receiver_address: Address
    to_address: Address
    from_address: Address | None = None
    rent_time: PurchaseRentTime = Decimal(1)


class AddressBody(BaseModel):
    address: Address


class MonitorAddBody(BaseModel):
    address: Address
    webhook_url: str | None = Field(None, description="required unless the key has one")
    label: str | None = None
    tokens: list[str] = ["TRX"]
    webhook_secret: str | None = Field(None, description="sandbox: per-address callback secret")


def request_body(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": schema}},
        }
    }


def query_params(*params: dict[str, Any]) -> dict[str, Any]:
    return {"parameters": [{"in": "query", "required": False, **p} for p in params]}


def path_param(name: str, description: str) -> dict[str, Any]:
    """Declared by hand (handlers read ``request.path_params``), so that FastAPI does not
    document a 422 response the sandbox never sends: its validation errors are 400."""
    return {"parameters": [{"in": "path", "name": name, "required": True,
                            "description": description, "schema": {"type": "string"}}]}


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse, "description": text}
    for status, text in {
        400: "invalid parameter or address (40010-40013)",
        401: "missing key, bad signature or timestamp (40001-40003)",
        402: "insufficient available balance (40020)",
        404: "not found (40040)",
        409: "already monitored (40090)",
        429: "rate limited (40290); Retry-After header",
        500: "internal error (50000)",
        503: "upstream unavailable (50300)",
    }.items()
}
