"""Asyncio client over one pooled ``httpx.AsyncClient``, for triggers and other async code."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Any, TypeVar

import httpx

from airflow_provider_tronenergy.client import models
from airflow_provider_tronenergy.client.base import ClientBase
from airflow_provider_tronenergy.client.bounded import BodyError, BodyReader
from airflow_provider_tronenergy.client.core import (
    USER_AGENT,
    Call,
    CallRun,
    Prepared,
    RentTime,
)
from airflow_provider_tronenergy.client.endpoints import PageWalk
from airflow_provider_tronenergy.client.errors import (
    TransportError,
    TronEnergyError,
    no_answer_error,
)

T = TypeVar("T")

# Failures in which no byte of the request left this process.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def transport_error(exc: httpx.HTTPError) -> TransportError:
    """Sort an httpx failure by whether the request can have reached the server."""
    detail = f"{type(exc).__name__}: {str(exc)[:200]}"
    return no_answer_error(detail, unsent=isinstance(exc, _NOT_SENT),
                           timed_out=isinstance(exc, httpx.TimeoutException))


class TronEnergyAsyncClient(ClientBase):
    """The async twin of :class:`TronEnergyClient`: same methods, same rules, awaited.

    Each endpoint method runs its :class:`Endpoints` definition, as on the sync
    client; here they are coroutine functions (``iter_monitored_addresses`` gives
    an async iterator).
    """

    def _connect(self, pool_size: int) -> None:
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(
                connect=self.timeout.connect, read=self.timeout.read,
                write=self.timeout.read, pool=self.timeout.connect + self.timeout.read,
            ),
            limits=httpx.Limits(max_connections=pool_size, max_keepalive_connections=pool_size),
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip"},
            follow_redirects=False,
        )

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self._http.aclose()

    async def __aenter__(self) -> TronEnergyAsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- energy ---------------------------------------------------------------------

    async def get_account(self) -> models.Account:
        """The account: balances, frozen amount, pending orders, recharge address."""
        return await self.run(self._api.get_account())

    async def get_price(self, rent_time: RentTime = 1) -> models.Price:
        """Energy prices for ``rent_time`` hours (one of ``rules.price_rent_times``)."""
        return await self.run(self._api.get_price(rent_time))

    async def buy_energy(
        self, target_address: str, energy_amount: int = 65000, rent_time: RentTime = 1
    ) -> models.Purchase:
        """Rent ``energy_amount`` energy to ``target_address`` for ``rent_time`` hours."""
        return await self.run(self._api.buy_energy(target_address, energy_amount, rent_time))

    async def auto_buy_energy(
        self, from_address: str, to_address: str, rent_time: RentTime = 1
    ) -> models.Purchase:
        """Rent what one transfer from ``from_address`` to ``to_address`` needs."""
        return await self.run(self._api.auto_buy_energy(from_address, to_address, rent_time))

    async def buy_energy_by_count(
        self, target_address: str, count: int = 1, rent_time: RentTime = 1
    ) -> models.Purchase:
        """Rent ``count`` times ``energy_per_transfer`` energy to ``target_address``."""
        return await self.run(self._api.buy_energy_by_count(target_address, count, rent_time))

    async def smart_buy_energy(
        self,
        receiver_address: str,
        to_address: str,
        from_address: str | None = None,
        rent_time: RentTime = 1,
    ) -> models.SmartPurchase:
        """Check ``to_address``, activate it if needed, and rent energy to ``receiver_address``."""
        return await self.run(self._api.smart_buy_energy(receiver_address, to_address,
                                                          from_address, rent_time))

    async def check_address(self, address: str) -> models.AddressCheck:
        """Whether ``address`` is activated on chain and how many transfers it has seen."""
        return await self.run(self._api.check_address(address))

    async def activate_address(self, address: str) -> models.Activation:
        """Activate ``address`` on chain (the service pays the fee and charges it)."""
        return await self.run(self._api.activate_address(address))

    async def get_order(self, order_id: str) -> models.Order:
        """One order; poll until ``status.is_terminal()``."""
        return await self.run(self._api.get_order(order_id))

    # -- monitoring -----------------------------------------------------------------

    async def get_monitor_stats(self) -> models.MonitorStats:
        """Counts of monitored addresses and of callbacks sent, succeeded and failed."""
        return await self.run(self._api.get_monitor_stats())

    async def list_monitored_addresses(
        self, page: int = 1, page_size: int = 20, status: str | None = None
    ) -> models.MonitoredAddressPage:
        """One page of monitored addresses, optionally only ``"active"`` or ``"inactive"``."""
        return await self.run(self._api.list_monitored_addresses(page, page_size, status))

    def iter_monitored_addresses(
        self, status: str | None = None
    ) -> AsyncIterator[models.MonitoredAddress]:
        """Every monitored address, page by page (``async for`` on the async client)."""
        return self._walk(self._api.iter_monitored_addresses(status))

    async def add_monitored_address(
        self,
        address: str,
        webhook_url: str | None = None,
        label: str | None = None,
        tokens: list[str] | None = None,
    ) -> models.MonitorRegistration:
        """Watch ``address`` for incoming transfers, with callbacks to ``webhook_url``."""
        return await self.run(self._api.add_monitored_address(address, webhook_url, label, tokens))

    async def remove_monitored_address(self, address: str) -> None:
        """Stop watching ``address``; a 404 on a resend after an unclear attempt counts as done."""
        return await self.run(self._api.remove_monitored_address(address))

    # -- anything else ----------------------------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        idempotent: bool | None = None,
    ) -> Any:
        """Signed call to ``path`` below the base URL; returns the answer's ``data``."""
        return await self.run(self._api.request(method, path, json, params, idempotent))

    # -- running a call: every endpoint method ends here --------------------------

    async def run(self, call: Call[T]) -> T:
        """Send a call built by ``endpoints`` (checked there) and return its parsed answer.

        Resent or not by the retry policy for the call's safety, as every endpoint
        method is: a money-moving call that may have reached the service and failed
        raises :class:`AmbiguousPurchaseError`. Nothing is checked again.
        """
        progress = self._core.start(call)
        try:
            async for attempt in self.retry.async_retrying(call.safety):
                with attempt:
                    return await self._attempt(progress)
        except TronEnergyError as error:
            progress.fail(error)
        raise AssertionError("unreachable: the retry loop returns or raises")

    async def _attempt(self, run: CallRun[T]) -> T:
        headers = run.headers()
        started = time.perf_counter()
        try:
            status, answer_headers, body = await asyncio.wait_for(
                self._exchange(run.prepared, headers), self.timeout.overall)
        except asyncio.TimeoutError:
            raise run.timed_out(self.timeout.overall, started) from None
        except BodyError as exc:
            raise run.unreadable(exc.status, str(exc), started) from None
        except httpx.HTTPError as exc:
            raise run.no_answer(transport_error(exc), started) from exc
        return run.answer(status, answer_headers, body, started)

    async def _exchange(self, prepared: Prepared, headers: Mapping[str, str]
                        ) -> tuple[int, httpx.Headers, bytes]:
        """One request; its body read raw, to the cap, and inflated here (never by httpx)."""
        request = self._http.build_request(prepared.method, prepared.url,
                                           content=prepared.body or None, headers=headers)
        response = await self._http.send(request, stream=True)
        try:
            reader = BodyReader(self.max_answer_bytes,
                                response.headers.get("Content-Encoding", ""))
            async for chunk in response.aiter_raw():
                reader.feed(chunk)
            return response.status_code, response.headers, reader.finish()
        except BodyError as exc:
            exc.status = response.status_code
            raise
        finally:
            await response.aclose()

    async def _walk(self, walk: PageWalk) -> AsyncIterator[models.MonitoredAddress]:
        call: Call[models.MonitoredAddressPage] | None = walk.first
        while call is not None:
            page = await self.run(call)
            for item in walk.take(page):
                yield item
            call = walk.after(page)

