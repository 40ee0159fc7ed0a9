"""Asyncio client over one pooled ``httpx.AsyncClient``, for triggers and other async code."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import TypeVar

import httpx

from airflow_provider_tronenergy._deprecated import moved_names, renamed
from airflow_provider_tronenergy.client.base import ClientBase
from airflow_provider_tronenergy.client.bounded import BodyError, BodyReader
from airflow_provider_tronenergy.client.core import USER_AGENT, Call, CallRun, Prepared
from airflow_provider_tronenergy.client.endpoints import PageWalk
from airflow_provider_tronenergy.client.errors import (
    TransportError,
    TronEnergyError,
    no_answer_error,
)
from airflow_provider_tronenergy.client.models import MonitoredAddress, MonitoredAddressPage

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

    The endpoint methods come from :class:`ClientBase` (one definition for both
    clients); here they are coroutine functions.
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

    # -- plumbing: the endpoint methods run their calls here ------------------------

    async def _run(self, call: Call[T]) -> T:
        run = self._core.start(call)
        try:
            async for attempt in self.retry.async_retrying(call.safety):
                with attempt:
                    return await self._attempt(run)
        except TronEnergyError as error:
            run.fail(error)
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

    async def _walk(self, walk: PageWalk) -> AsyncIterator[MonitoredAddress]:
        call: Call[MonitoredAddressPage] | None = walk.first
        while call is not None:
            page = await self._run(call)
            for item in page.addresses:
                yield item
            call = walk.after(page)


# The names before the TronEnergy prefix (docs/decisions.md) still import, with a warning.
__getattr__ = moved_names(__name__, renamed(__name__, {
    "AsyncTronEnergyClient": "TronEnergyAsyncClient",
}))
