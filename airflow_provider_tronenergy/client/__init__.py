"""Framework-free client for the TRON energy-rental and monitoring service.

No Airflow import here: the hook wraps these classes, and anything else
(scripts, services, tests) can use them directly. The async client (httpx) is
imported on first use: DAG files and workers that never wait in a triggerer do
not pay for it.

- ``endpoints``: each endpoint once: its contract (signature, docstring), checks, wire form, parser
- ``base``: ``ClientBase``, settings and every endpoint method, bound sync or async per transport
- ``sync`` / ``aio``: ``TronEnergyClient`` (requests) and ``TronEnergyAsyncClient`` (httpx)
- ``core``: build, sign and read one call; ``retry``: when to resend; ``validation``: checks
- ``models``: the typed results, read from their annotations; ``errors``: the exception tree
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow_provider_tronenergy._deprecated import moved_names
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


def _lazy(name: str) -> Any:
    if name == "TronEnergyAsyncClient":
        from airflow_provider_tronenergy.client.aio import TronEnergyAsyncClient

        return TronEnergyAsyncClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The async client's name before the TronEnergy prefix (docs/decisions.md) still imports.
__getattr__ = moved_names(__name__, {
    "AsyncTronEnergyClient": "airflow_provider_tronenergy.client.aio:TronEnergyAsyncClient",
}, otherwise=_lazy)

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
