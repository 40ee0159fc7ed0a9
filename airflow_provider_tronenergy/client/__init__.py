"""Framework-free client for the TRON energy-rental and monitoring service.

No Airflow import here: the hook wraps these classes, and anything else
(scripts, services, tests) can use them directly. The async client (httpx) is
imported on first use: DAG files and workers that never wait in a triggerer do
not pay for it.

- ``endpoints``: each endpoint once: its contract (signature, docstring), checks, wire form, parser
- ``base``: ``ClientBase``, the settings both clients share
- ``sync`` / ``aio``: ``TronEnergyClient`` (requests) and ``TronEnergyAsyncClient`` (httpx),
  each with one short method per endpoint
- ``core``: build, sign and read one call; ``retry``: when to resend; ``validation``: checks
- ``models``: the typed results, read from their annotations; ``errors``: the exception tree
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow_provider_tronenergy.client.core import DEFAULT_TIMEOUT, Timeout
from airflow_provider_tronenergy.client.errors import (
    AddressAlreadyActivatedError,
    AddressNotActivatedError,
    AmbiguousPurchaseError,
    AuthenticationError,
    ConflictError,
    InsufficientBalanceError,
    InvalidAddressError,
    InvalidRequestError,
    NoResponseError,
    NotFoundError,
    RateLimitedError,
    ServerError,
    ServiceUnreachableError,
    TransportError,
    TronEnergyError,
    UnexpectedResponseError,
    ValidationError,
)
from airflow_provider_tronenergy.client.models import (
    Account,
    Activation,
    AddressCheck,
    MonitoredAddress,
    MonitoredAddressPage,
    MonitorRegistration,
    MonitorStats,
    Order,
    OrderStatus,
    Price,
    Purchase,
    SmartPurchase,
    TransferEvent,
)
from airflow_provider_tronenergy.client.retry import RetryPolicy, Safety
from airflow_provider_tronenergy.client.sync import TronEnergyClient
from airflow_provider_tronenergy.client.validation import ValidationRules

if TYPE_CHECKING:
    from airflow_provider_tronenergy.client.aio import TronEnergyAsyncClient


def __getattr__(name: str) -> Any:
    """The async client, imported on first use (httpx only for those who wait async)."""
    if name == "TronEnergyAsyncClient":
        from airflow_provider_tronenergy.client.aio import TronEnergyAsyncClient

        return TronEnergyAsyncClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "DEFAULT_TIMEOUT",
    "Account",
    "Activation",
    "AddressAlreadyActivatedError",
    "AddressCheck",
    "AddressNotActivatedError",
    "AmbiguousPurchaseError",
    "AuthenticationError",
    "ConflictError",
    "InsufficientBalanceError",
    "InvalidAddressError",
    "InvalidRequestError",
    "MonitorRegistration",
    "MonitorStats",
    "MonitoredAddress",
    "MonitoredAddressPage",
    "NoResponseError",
    "NotFoundError",
    "Order",
    "OrderStatus",
    "Price",
    "Purchase",
    "RateLimitedError",
    "RetryPolicy",
    "Safety",
    "ServerError",
    "ServiceUnreachableError",
    "SmartPurchase",
    "Timeout",
    "TransferEvent",
    "TransportError",
    "TronEnergyAsyncClient",
    "TronEnergyClient",
    "TronEnergyError",
    "UnexpectedResponseError",
    "ValidationError",
    "ValidationRules",
]
