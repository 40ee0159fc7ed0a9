"""Blocking client over one pooled ``requests.Session``, safe to share between threads."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import Any, TypeVar

import requests
from requests.structures import CaseInsensitiveDict
from urllib3.exceptions import (
    ConnectTimeoutError,
    MaxRetryError,
    NewConnectionError,
    ProxyError,
)

from airflow_provider_tronenergy.client import models
from airflow_provider_tronenergy.client.base import ClientBase
from airflow_provider_tronenergy.client.bounded import BodyError
from airflow_provider_tronenergy.client.core import USER_AGENT, Call, CallRun, RentTime
from airflow_provider_tronenergy.client.deadline import DeadlineAdapter, DeadlineExceeded, exchange
from airflow_provider_tronenergy.client.endpoints import PageWalk
from airflow_provider_tronenergy.client.errors import (
    TransportError,
    TronEnergyError,
    no_answer_error,
)

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
    :class:`RetryPolicy` and :class:`AmbiguousPurchaseError`. Each endpoint
    method runs its :class:`Endpoints` definition, whose docstring is the full
    contract.
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

    # -- energy ---------------------------------------------------------------------

    def get_account(self) -> models.Account:
        """The account: balances, frozen amount, pending orders, recharge address."""
        return self.run(self._api.get_account())

    def get_price(self, rent_time: RentTime = 1) -> models.Price:
        """Energy prices for ``rent_time`` hours (one of ``rules.price_rent_times``)."""
        return self.run(self._api.get_price(rent_time))

    def buy_energy(
        self, target_address: str, energy_amount: int = 65000, rent_time: RentTime = 1
    ) -> models.Purchase:
        """Rent ``energy_amount`` energy to ``target_address`` for ``rent_time`` hours."""
        return self.run(self._api.buy_energy(target_address, energy_amount, rent_time))

    def auto_buy_energy(
        self, from_address: str, to_address: str, rent_time: RentTime = 1
    ) -> models.Purchase:
        """Rent what one transfer from ``from_address`` to ``to_address`` needs."""
        return self.run(self._api.auto_buy_energy(from_address, to_address, rent_time))

    def buy_energy_by_count(
        self, target_address: str, count: int = 1, rent_time: RentTime = 1
    ) -> models.Purchase:
        """Rent ``count`` times ``energy_per_transfer`` energy to ``target_address``."""
        return self.run(self._api.buy_energy_by_count(target_address, count, rent_time))

    def smart_buy_energy(
        self,
        receiver_address: str,
        to_address: str,
        from_address: str | None = None,
        rent_time: RentTime = 1,
    ) -> models.SmartPurchase:
        """Check ``to_address``, activate it if needed, and rent energy to ``receiver_address``."""
        return self.run(self._api.smart_buy_energy(receiver_address, to_address,
                                                    from_address, rent_time))

    def check_address(self, address: str) -> models.AddressCheck:
        """Whether ``address`` is activated on chain and how many transfers it has seen."""
        return self.run(self._api.check_address(address))

    def activate_address(self, address: str) -> models.Activation:
        """Activate ``address`` on chain (the service pays the fee and charges it)."""
        return self.run(self._api.activate_address(address))

    def get_order(self, order_id: str) -> models.Order:
        """One order; poll until ``status.is_terminal()``."""
        return self.run(self._api.get_order(order_id))

    # -- monitoring -----------------------------------------------------------------

    def get_monitor_stats(self) -> models.MonitorStats:
        """Counts of monitored addresses and of callbacks sent, succeeded and failed."""
        return self.run(self._api.get_monitor_stats())

    def list_monitored_addresses(
        self, page: int = 1, page_size: int = 20, status: str | None = None
    ) -> models.MonitoredAddressPage:
        """One page of monitored addresses, optionally only ``"active"`` or ``"inactive"``."""
        return self.run(self._api.list_monitored_addresses(page, page_size, status))

    def iter_monitored_addresses(
        self, status: str | None = None
    ) -> Iterator[models.MonitoredAddress]:
        """Every monitored address, page by page (``async for`` on the async client)."""
        return self._walk(self._api.iter_monitored_addresses(status))

    def add_monitored_address(
        self,
        address: str,
        webhook_url: str | None = None,
        label: str | None = None,
        tokens: list[str] | None = None,
    ) -> models.MonitorRegistration:
        """Watch ``address`` for incoming transfers, with callbacks to ``webhook_url``."""
        return self.run(self._api.add_monitored_address(address, webhook_url, label, tokens))

    def remove_monitored_address(self, address: str) -> None:
        """Stop watching ``address``; a 404 on a resend after an unclear attempt counts as done."""
        return self.run(self._api.remove_monitored_address(address))

    # -- anything else ----------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        idempotent: bool | None = None,
    ) -> Any:
        """Signed call to ``path`` below the base URL; returns the answer's ``data``."""
        return self.run(self._api.request(method, path, json, params, idempotent))

    # -- running a call: every endpoint method ends here --------------------------

    def run(self, call: Call[T]) -> T:
        """Send a call built by ``endpoints`` (checked there) and return its parsed answer.

        Resent or not by the retry policy for the call's safety, as every endpoint
        method is: a money-moving call that may have reached the service and failed
        raises :class:`AmbiguousPurchaseError`. Nothing is checked again.
        """
        progress = self._core.start(call)
        try:
            for attempt in self.retry.retrying(call.safety):
                with attempt:
                    return self._attempt(progress)
        except TronEnergyError as error:
            progress.fail(error)
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

    def _walk(self, walk: PageWalk) -> Iterator[models.MonitoredAddress]:
        call: Call[models.MonitoredAddressPage] | None = walk.first
        while call is not None:
            page = self.run(call)
            yield from walk.take(page)
            call = walk.after(page)
