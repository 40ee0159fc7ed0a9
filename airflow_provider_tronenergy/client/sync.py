"""Blocking client over one pooled ``requests.Session``, safe to share between threads."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from types import TracebackType
from typing import TypeVar

import requests
from requests.structures import CaseInsensitiveDict
from urllib3.exceptions import (
    ConnectTimeoutError,
    MaxRetryError,
    NewConnectionError,
    ProxyError,
)

from airflow_provider_tronenergy.client.base import ClientBase
from airflow_provider_tronenergy.client.bounded import BodyError
from airflow_provider_tronenergy.client.core import USER_AGENT, Call, CallRun
from airflow_provider_tronenergy.client.deadline import DeadlineAdapter, DeadlineExceeded, exchange
from airflow_provider_tronenergy.client.endpoints import PageWalk
from airflow_provider_tronenergy.client.errors import (
    TransportError,
    TronEnergyError,
    no_answer_error,
)
from airflow_provider_tronenergy.client.models import MonitoredAddress, MonitoredAddressPage

T = TypeVar("T")


def transport_error(exc: requests.RequestException) -> TransportError:
    """Sort a requests failure by whether the request can have reached the server."""
    reason: object = exc.args[0] if exc.args else exc
    if isinstance(reason, MaxRetryError) and reason.reason is not None:
        reason = reason.reason
    if isinstance(reason, ProxyError) and isinstance(reason.original_error, Exception):
        reason = reason.original_error  # could not reach the proxy: nothing was sent
    detail = f"{type(reason).__name__}: {str(reason)[:200]}"
    unsent = isinstance(exc, requests.ConnectTimeout) or (
        isinstance(exc, requests.ConnectionError)
        and isinstance(reason, (NewConnectionError, ConnectTimeoutError))
    )
    return no_answer_error(detail, unsent=unsent, timed_out=isinstance(exc, requests.Timeout))


class TronEnergyClient(ClientBase):
    """Signed, typed, retry-safe access to every endpoint of the service.

    ``base_url`` includes the version prefix (``https://host/v1``). Money-moving
    calls are never resent once they may have reached the server; see
    :class:`RetryPolicy` and :class:`AmbiguousPurchaseError`. The endpoint
    methods come from :class:`ClientBase` (one definition for both clients).
    """

    def _connect(self, pool_size: int) -> None:
        self._session = requests.Session()
        # max_retries=0: urllib3 must never resend on its own; the retry policy decides.
        self._adapter = DeadlineAdapter(pool_connections=4, pool_maxsize=pool_size,
                                        max_retries=0)
        self._session.mount("http://", self._adapter)
        self._session.mount("https://", self._adapter)
        self._session.headers["User-Agent"] = USER_AGENT
        # Read proxy and CA settings from the environment once, not on every request
        # (requests' per-call lookup costs more than signing and parsing together).
        self._session.trust_env = False
        self._session.proxies.update(requests.utils.get_environ_proxies(self.base_url))
        bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
        if bundle:
            self._session.verify = bundle
        self._verify: bool | str = bundle or True
        self._base_headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip",
                              "Connection": "keep-alive"}

    def close(self) -> None:
        """Close the pooled connections."""
        self._session.close()

    def __enter__(self) -> TronEnergyClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- plumbing: the endpoint methods run their calls here ------------------------

    def _run(self, call: Call[T]) -> T:
        run = self._core.start(call)
        try:
            for attempt in self.retry.retrying(call.safety):
                with attempt:
                    return self._attempt(run)
        except TronEnergyError as error:
            run.fail(error)
        raise AssertionError("unreachable: the retry loop returns or raises")

    def _attempt(self, run: CallRun[T]) -> T:
        prepared = run.prepared
        # The request is built here, not by Session.request: it goes out byte for byte as
        # signed (no re-quoting of the URL), and requests' per-call merging of cookies,
        # hooks and settings (which this client does not use) costs more than the rest
        # of the call together. The session's pooled adapter still sends it.
        request = requests.PreparedRequest()
        request.method = prepared.method
        request.url = prepared.url
        request.headers = CaseInsensitiveDict(self._base_headers)
        request.headers.update(run.headers())
        request.body = prepared.body or None
        if prepared.body or prepared.method not in ("GET", "HEAD", "OPTIONS"):
            request.headers["Content-Length"] = str(len(prepared.body))
        started = time.perf_counter()
        try:
            answer = exchange(
                self._adapter, request, connect=self.timeout.connect, read=self.timeout.read,
                total=self.timeout.overall, limit=self.max_answer_bytes, verify=self._verify,
                proxies=self._session.proxies,
            )
        except DeadlineExceeded:
            raise run.timed_out(self.timeout.overall, started) from None
        except BodyError as exc:
            raise run.unreadable(exc.status, str(exc), started) from None
        except requests.RequestException as exc:
            raise run.no_answer(transport_error(exc), started) from exc
        return run.answer(answer.status, answer.headers, answer.body, started)

    def _walk(self, walk: PageWalk) -> Iterator[MonitoredAddress]:
        call: Call[MonitoredAddressPage] | None = walk.first
        while call is not None:
            page = self._run(call)
            yield from page.addresses
            call = walk.after(page)
