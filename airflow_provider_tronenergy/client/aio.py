"""Asyncio client over one pooled ``httpx.AsyncClient``, for triggers and other async code."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Any, TypeVar

import httpx

from airflow_provider_tronenergy.client.core import (
    DEFAULT_POOL_SIZE,
    DEFAULT_TIMEOUT,
    USER_AGENT,
    Call,
    CallRun,
    RentTime,
    RequestCore,
    Timeout,
)
from airflow_provider_tronenergy.client.endpoints import ITER_PAGE_SIZE, Endpoints, next_page
from airflow_provider_tronenergy.client.errors import (
    NoResponseError,
    ServiceUnreachableError,
    TransportError,
    TronEnergyError,
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
    Price,
    Purchase,
    SmartPurchase,
)
from airflow_provider_tronenergy.client.retry import RetryPolicy
from airflow_provider_tronenergy.client.validation import ValidationRules

T = TypeVar("T")

# Failures in which no byte of the request left this process.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def transport_error(exc: httpx.HTTPError) -> TransportError:
    """Sort an httpx failure by whether the request can have reached the server."""
    detail = f"{type(exc).__name__}: {str(exc)[:200]}"
    if isinstance(exc, _NOT_SENT):
        return ServiceUnreachableError(f"could not connect to the service ({detail})")
    if isinstance(exc, httpx.TimeoutException):
        return NoResponseError(f"timed out waiting on the service ({detail}); the request "
                               "may have been processed")
    return NoResponseError(f"connection failed after sending; the request may have been "
                           f"processed ({detail})")


class AsyncTronEnergyClient:
    """The async twin of :class:`TronEnergyClient`: same methods, same rules, awaited."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        api_secret: str,
        *,
        signature_scheme: str = "v1",
        timeout: float | tuple[float, float] | Timeout = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        rules: ValidationRules | None = None,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> None:
        self._core = RequestCore(base_url, api_key, api_secret, signature_scheme)
        self._api = Endpoints(rules)
        self.timeout = Timeout.of(timeout)
        self.retry = retry or RetryPolicy()
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(
                connect=self.timeout.connect, read=self.timeout.read,
                write=self.timeout.read, pool=self.timeout.connect + self.timeout.read,
            ),
            limits=httpx.Limits(max_connections=pool_size, max_keepalive_connections=pool_size),
            headers={"User-Agent": USER_AGENT},
            follow_redirects=False,
        )

    @property
    def base_url(self) -> str:
        return self._core.base_url

    @property
    def signature_scheme(self) -> str:
        return self._core.signature_scheme

    @property
    def rules(self) -> ValidationRules:
        """The argument checks this client applies (callers can check early with them)."""
        return self._api.rules

    def __repr__(self) -> str:
        return (f"AsyncTronEnergyClient(base_url={self.base_url!r}, "
                f"signature_scheme={self.signature_scheme!r})")

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncTronEnergyClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- plumbing -------------------------------------------------------------------

    async def _run(self, call: Call[T]) -> T:
        run = self._core.start(call)
        try:
            async for attempt in self.retry.async_retrying(call.safety):
                with attempt:
                    return await self._attempt(run)
        except TronEnergyError as error:
            final = run.settle(error)
            if final is error:
                raise
            raise final from error
        raise AssertionError("unreachable: the retry loop returns or raises")

    async def _attempt(self, run: CallRun[T]) -> T:
        prepared = run.prepared
        headers = run.headers()
        started = time.perf_counter()
        try:
            response = await self._http.request(
                prepared.method, prepared.url, content=prepared.body or None, headers=headers,
            )
        except httpx.HTTPError as exc:
            raise run.no_answer(transport_error(exc), started) from exc
        return run.answer(response.status_code, response.headers, response.content, started)

    # -- energy ---------------------------------------------------------------------

    async def get_account(self) -> Account:
        return await self._run(self._api.get_account())

    async def get_price(self, rent_time: RentTime = 1) -> Price:
        return await self._run(self._api.get_price(rent_time))

    async def buy_energy(
        self, target_address: str, energy_amount: int = 65000, rent_time: RentTime = 1
    ) -> Purchase:
        return await self._run(self._api.buy_energy(target_address, energy_amount, rent_time))

    async def auto_buy_energy(
        self, from_address: str, to_address: str, rent_time: RentTime = 1
    ) -> Purchase:
        return await self._run(self._api.auto_buy_energy(from_address, to_address, rent_time))

    async def buy_energy_by_count(
        self, target_address: str, count: int = 1, rent_time: RentTime = 1
    ) -> Purchase:
        return await self._run(self._api.buy_energy_by_count(target_address, count, rent_time))

    async def smart_buy_energy(
        self,
        receiver_address: str,
        to_address: str,
        from_address: str | None = None,
        rent_time: RentTime = 1,
    ) -> SmartPurchase:
        return await self._run(
            self._api.smart_buy_energy(receiver_address, to_address, from_address, rent_time)
        )

    async def check_address(self, address: str) -> AddressCheck:
        return await self._run(self._api.check_address(address))

    async def activate_address(self, address: str) -> Activation:
        return await self._run(self._api.activate_address(address))

    async def get_order(self, order_id: str) -> Order:
        return await self._run(self._api.get_order(order_id))

    # -- monitoring -----------------------------------------------------------------

    async def get_monitor_stats(self) -> MonitorStats:
        return await self._run(self._api.get_monitor_stats())

    async def list_monitored_addresses(
        self, page: int = 1, page_size: int = 20, status: str | None = None
    ) -> MonitoredAddressPage:
        return await self._run(self._api.list_monitored_addresses(page, page_size, status))

    def iter_monitored_addresses(
        self, status: str | None = None
    ) -> AsyncIterator[MonitoredAddress]:
        """Every monitored address, page by page (``async for``; checks run at once)."""
        first = self._api.list_monitored_addresses(1, ITER_PAGE_SIZE, status)
        return self._walk(first, status)

    async def _walk(
        self, first: Call[MonitoredAddressPage], status: str | None
    ) -> AsyncIterator[MonitoredAddress]:
        page = await self._run(first)
        seen = 0
        while True:
            for item in page.addresses:
                yield item
            seen += len(page.addresses)
            following = next_page(page, seen)
            if following is None:
                return
            page = await self._run(
                self._api.list_monitored_addresses(following, ITER_PAGE_SIZE, status)
            )

    async def add_monitored_address(
        self,
        address: str,
        webhook_url: str | None = None,
        label: str | None = None,
        tokens: list[str] | None = None,
    ) -> MonitorRegistration:
        return await self._run(
            self._api.add_monitored_address(address, webhook_url, label, tokens)
        )

    async def remove_monitored_address(self, address: str) -> None:
        await self._run(self._api.remove_monitored_address(address))

    # -- anything else ----------------------------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        idempotent: bool | None = None,
    ) -> Any:
        """Signed call to ``path`` below the base URL; returns the answer's ``data``.

        Non-read methods are treated as moving money unless ``idempotent=True``.
        """
        return await self._run(self._api.request(method, path, json, params, idempotent))
