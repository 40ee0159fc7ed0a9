"""Blocking client over one pooled ``requests.Session``, safe to share between threads."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import Any, TypeVar

import requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from urllib3.exceptions import (
    ConnectTimeoutError,
    MaxRetryError,
    NewConnectionError,
    ProxyError,
)

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


def transport_error(exc: requests.RequestException) -> TransportError:
    """Sort a requests failure by whether the request can have reached the server."""
    reason: object = exc.args[0] if exc.args else exc
    if isinstance(reason, MaxRetryError) and reason.reason is not None:
        reason = reason.reason
    if isinstance(reason, ProxyError) and isinstance(reason.original_error, Exception):
        reason = reason.original_error  # could not reach the proxy: nothing was sent
    detail = f"{type(reason).__name__}: {str(reason)[:200]}"
    if isinstance(exc, requests.ConnectTimeout) or (
        isinstance(exc, requests.ConnectionError)
        and isinstance(reason, (NewConnectionError, ConnectTimeoutError))
    ):
        return ServiceUnreachableError(f"could not connect to the service ({detail})")
    if isinstance(exc, requests.Timeout):
        return NoResponseError(f"timed out waiting on the service ({detail}); the request "
                               "may have been processed")
    return NoResponseError(f"connection failed after sending; the request may have been "
                           f"processed ({detail})")


class TronEnergyClient:
    """Signed, typed, retry-safe access to every endpoint of the service.

    ``base_url`` includes the version prefix (``https://host/v1``). Money-moving
    calls are never resent once they may have reached the server; see
    :class:`RetryPolicy` and :class:`AmbiguousPurchaseError`.
    """

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
        self._session = requests.Session()
        # max_retries=0: urllib3 must never resend on its own; the retry policy decides.
        self._adapter = HTTPAdapter(pool_connections=4, pool_maxsize=pool_size, max_retries=0)
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
        self._base_headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate",
                              "Connection": "keep-alive"}

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
        return (f"TronEnergyClient(base_url={self.base_url!r}, "
                f"signature_scheme={self.signature_scheme!r})")

    def close(self) -> None:
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

    # -- plumbing -------------------------------------------------------------------

    def _run(self, call: Call[T]) -> T:
        run = self._core.start(call)
        try:
            for attempt in self.retry.retrying(call.safety):
                with attempt:
                    return self._attempt(run)
        except TronEnergyError as error:
            final = run.settle(error)
            if final is error:
                raise
            raise final from error
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
            response = self._adapter.send(
                request, timeout=(self.timeout.connect, self.timeout.read),
                verify=self._verify, proxies=self._session.proxies,
            )
        except requests.RequestException as exc:
            raise run.no_answer(transport_error(exc), started) from exc
        return run.answer(response.status_code, response.headers, response.content, started)

    # -- energy ---------------------------------------------------------------------

    def get_account(self) -> Account:
        return self._run(self._api.get_account())

    def get_price(self, rent_time: RentTime = 1) -> Price:
        return self._run(self._api.get_price(rent_time))

    def buy_energy(
        self, target_address: str, energy_amount: int = 65000, rent_time: RentTime = 1
    ) -> Purchase:
        return self._run(self._api.buy_energy(target_address, energy_amount, rent_time))

    def auto_buy_energy(
        self, from_address: str, to_address: str, rent_time: RentTime = 1
    ) -> Purchase:
        return self._run(self._api.auto_buy_energy(from_address, to_address, rent_time))

    def buy_energy_by_count(
        self, target_address: str, count: int = 1, rent_time: RentTime = 1
    ) -> Purchase:
        return self._run(self._api.buy_energy_by_count(target_address, count, rent_time))

    def smart_buy_energy(
        self,
        receiver_address: str,
        to_address: str,
        from_address: str | None = None,
        rent_time: RentTime = 1,
    ) -> SmartPurchase:
        return self._run(
            self._api.smart_buy_energy(receiver_address, to_address, from_address, rent_time)
        )

    def check_address(self, address: str) -> AddressCheck:
        return self._run(self._api.check_address(address))

    def activate_address(self, address: str) -> Activation:
        return self._run(self._api.activate_address(address))

    def get_order(self, order_id: str) -> Order:
        return self._run(self._api.get_order(order_id))

    # -- monitoring -----------------------------------------------------------------

    def get_monitor_stats(self) -> MonitorStats:
        return self._run(self._api.get_monitor_stats())

    def list_monitored_addresses(
        self, page: int = 1, page_size: int = 20, status: str | None = None
    ) -> MonitoredAddressPage:
        return self._run(self._api.list_monitored_addresses(page, page_size, status))

    def iter_monitored_addresses(self, status: str | None = None) -> Iterator[MonitoredAddress]:
        """Every monitored address, page by page (checks run before the first request)."""
        first = self._api.list_monitored_addresses(1, ITER_PAGE_SIZE, status)
        return self._walk(first, status)

    def _walk(
        self, first: Call[MonitoredAddressPage], status: str | None
    ) -> Iterator[MonitoredAddress]:
        page = self._run(first)
        seen = 0
        while True:
            yield from page.addresses
            seen += len(page.addresses)
            following = next_page(page, seen)
            if following is None:
                return
            page = self._run(
                self._api.list_monitored_addresses(following, ITER_PAGE_SIZE, status)
            )

    def add_monitored_address(
        self,
        address: str,
        webhook_url: str | None = None,
        label: str | None = None,
        tokens: list[str] | None = None,
    ) -> MonitorRegistration:
        return self._run(self._api.add_monitored_address(address, webhook_url, label, tokens))

    def remove_monitored_address(self, address: str) -> None:
        self._run(self._api.remove_monitored_address(address))

    # -- anything else ----------------------------------------------------------------

    def request(
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
        return self._run(self._api.request(method, path, json, params, idempotent))
