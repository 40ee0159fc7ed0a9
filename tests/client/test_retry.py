"""Resending: idempotent calls recover from faults; other calls are resent only when unsent."""

from __future__ import annotations

import asyncio
import http.client
import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import requests
from urllib3.exceptions import (
    ConnectTimeoutError,
    MaxRetryError,
    NameResolutionError,
    NewConnectionError,
    ProtocolError,
)

from airflow_provider_tronenergy.client import (
    AmbiguousPurchaseError,
    NoResponseError,
    RateLimitedError,
    RetryPolicy,
    Safety,
    ServerError,
    ServiceUnreachableError,
    TronEnergyAsyncClient,
    TronEnergyClient,
    aio,
    sync,
)
from support.clients import (
    API_KEY,
    API_SECRET,
    both_clients,
    make_async_client,
    make_client,
)
from support.control import Control
from support.ports import closed_port
from tronenergy_protocol.address import random_address
from tronenergy_sandbox import SandboxServer

CLIENT_LOG = "airflow_provider_tronenergy.client.core"

FAULTS = [
    pytest.param({"kind": "error", "status": 503}, id="503"),
    pytest.param({"kind": "error", "status": 500, "after_processing": True}, id="500-after"),
    pytest.param({"kind": "rate_limit", "retry_after": 0}, id="429"),
    pytest.param({"kind": "drop"}, id="drop"),
]


def idempotent_calls(control: Control) -> list[tuple[str, str, Callable[[Any], Any]]]:
    """(method, path relative to /v1, call) for every idempotent endpoint."""
    target = control.activated()
    return [
        ("GET", "/energy/account", lambda api: api.get_account()),
        ("GET", "/energy/price", lambda api: api.get_price(0.17)),
        ("POST", "/energy/check-address", lambda api: api.check_address(target)),
        ("GET", "/energy/order/*", lambda api: api.get_order(api.buy_energy(target).order_id)),
        ("GET", "/tron-monitor/stats", lambda api: api.get_monitor_stats()),
        ("GET", "/tron-monitor/addresses", lambda api: api.list_monitored_addresses()),
        ("GET", "/tron-monitor/addresses", lambda api: list(api.iter_monitored_addresses())),
        ("GET", "/energy/account", lambda api: api.request("GET", "/energy/account")),
        ("POST", "/energy/check-address", lambda api: api.request(
            "POST", "/energy/check-address", json={"address": target}, idempotent=True)),
    ]


@pytest.mark.parametrize("fault", FAULTS)
def test_idempotent_calls_recover_on_every_path(sandbox: SandboxServer, control: Control,
                                               fault: dict[str, Any]) -> None:
    with both_clients(sandbox) as clients:
        for api in clients:
            for method, path, call in idempotent_calls(control):
                control.fault(path=path, method=method, count=2, **fault)
                assert call(api) is not None
                # Both injected failures were consumed: the call was retried twice.
                assert control.faults() == [], (method, path)


def test_retries_stop_after_max_attempts(sandbox: SandboxServer, control: Control) -> None:
    policy = RetryPolicy(max_attempts=3, initial_wait=0.001)
    with both_clients(sandbox, retry=policy) as clients:
        for api in clients:
            control.fault(kind="error", status=503, path="/energy/account")
            with pytest.raises(ServerError):
                api.get_account()
            assert control.faults()[0]["fired"] == 3
            control.clear_faults()
    with both_clients(sandbox, retry=RetryPolicy(max_attempts=1)) as clients:
        for api in clients:
            control.fault(kind="drop", path="/energy/account")
            with pytest.raises(NoResponseError):
                api.get_account()
            assert control.faults()[0]["fired"] == 1
            control.clear_faults()


def test_retry_after_longer_than_max_wait_is_not_waited_for(sandbox: SandboxServer,
                                                           control: Control) -> None:
    with both_clients(sandbox, retry=RetryPolicy(max_attempts=5, max_wait=1)) as clients:
        for api in clients:
            control.fault(kind="rate_limit", retry_after=30, path="/tron-monitor/stats")
            with pytest.raises(RateLimitedError) as info:
                api.get_monitor_stats()
            assert info.value.retry_after == 30
            assert control.faults()[0]["fired"] == 1
            control.clear_faults()


def test_retry_after_is_honoured_by_the_wait() -> None:
    policy = RetryPolicy(max_attempts=3, initial_wait=0.01, max_wait=5)
    slept: list[float] = []
    retrying = policy.retrying(Safety.IDEMPOTENT)
    retrying.sleep = slept.append
    attempts = iter([RateLimitedError("slow down", retry_after=1.5),
                     ServerError("boom", status=503)])

    def flaky() -> str:
        error = next(attempts, None)
        if error is not None:
            raise error
        return "ok"

    assert retrying(flaky) == "ok"
    assert slept[0] >= 1.5
    assert 0 < slept[1] <= 0.02 * 2  # plain backoff: second wait within its ceiling
    for attempt in range(1, 12):
        wait = policy.wait_seconds(ServerError("x"), attempt)
        assert 0 <= wait <= policy.max_wait


def test_add_monitored_address_is_not_resent(sandbox: SandboxServer, control: Control) -> None:
    with both_clients(sandbox) as clients:
        for api in clients:
            address = random_address()
            control.fault(kind="error", status=503, path="/tron-monitor/addresses",
                          method="POST", count=1)
            with pytest.raises(ServerError):
                api.add_monitored_address(address, "https://example.com/hook")
            # Had it been resent, the (now unfaulted) second attempt would have added it.
            assert address not in {a.address for a in api.iter_monitored_addresses()}
            control.fault(kind="drop", path="/tron-monitor/addresses", method="POST", count=1)
            with pytest.raises(NoResponseError):
                api.add_monitored_address(address, "https://example.com/hook")
            assert address in {a.address for a in api.iter_monitored_addresses("active")}


def test_remove_after_a_lost_answer_counts_as_done(sandbox: SandboxServer,
                                                   control: Control) -> None:
    with both_clients(sandbox) as clients:
        for api in clients:
            address = random_address()
            api.add_monitored_address(address, "https://example.com/hook")
            control.fault(kind="drop", path=f"/tron-monitor/addresses/{address}",
                          method="DELETE", count=1)
            assert api.remove_monitored_address(address) is None  # resend saw 404: done
            assert control.faults() == []
            listed = {a.address: a for a in api.iter_monitored_addresses("inactive")}
            assert listed[address].is_active is False


def attempts_logged(caplog: pytest.LogCaptureFixture, path: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == CLIENT_LOG and f"POST {path} ->" in r.getMessage()]


def test_purchase_to_a_closed_port_is_retried_then_not_ambiguous(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger=CLIENT_LOG)
    url = f"http://127.0.0.1:{closed_port()}/v1"
    policy = RetryPolicy(max_attempts=3, initial_wait=0.001)
    target = random_address()
    with TronEnergyClient(url, API_KEY, API_SECRET, retry=policy) as client, \
            pytest.raises(ServiceUnreachableError) as info:
        client.buy_energy(target)
    assert not isinstance(info.value, AmbiguousPurchaseError)
    assert len(attempts_logged(caplog, "/v1/energy/buy")) == 3
    caplog.clear()

    async def buy() -> None:
        async with TronEnergyAsyncClient(url, API_KEY, API_SECRET, retry=policy) as client:
            await client.activate_address(target)

    with pytest.raises(ServiceUnreachableError) as async_info:
        asyncio.run(buy())
    assert not isinstance(async_info.value, AmbiguousPurchaseError)
    assert len(attempts_logged(caplog, "/v1/energy/activate")) == 3


def test_unsent_purchase_is_resent_and_buys_once(sandbox: SandboxServer,
                                                 control: Control) -> None:
    """A connect failure on the first attempt: resent, and exactly one order results."""
    target = control.activated()
    client = make_client(sandbox)
    real_send = client._adapter.send
    sent: list[str] = []

    def first_refused(request: Any, *args: Any, **kwargs: Any) -> Any:
        # The sync client sends through its adapter; the first attempt never connects.
        sent.append(request.path_url)
        if len(sent) == 1:
            raise requests.ConnectionError(MaxRetryError(
                None, "/v1/energy/buy", NewConnectionError(None, "refused")))  # type: ignore[arg-type]
        return real_send(request, *args, **kwargs)

    client._adapter.send = first_refused  # type: ignore[method-assign]
    purchase = client.buy_energy(target)
    client.close()
    assert sent == ["/v1/energy/buy", "/v1/energy/buy"]

    async_sent: list[str] = []

    async def async_buy() -> Any:
        async with make_async_client(sandbox) as async_client:
            real = async_client._http.send

            async def first_refused_async(request: httpx.Request, *args: Any,
                                          **kwargs: Any) -> Any:
                async_sent.append(str(request.url))
                if len(async_sent) == 1:
                    raise httpx.ConnectError("refused")
                return await real(request, *args, **kwargs)

            async_client._http.send = first_refused_async  # type: ignore[method-assign]
            return await async_client.buy_energy(target)

    second = asyncio.run(async_buy())
    assert len(async_sent) == 2 and all(u.endswith("/v1/energy/buy") for u in async_sent)
    mine = [o for o in control.orders() if o["target_address"] == target]
    assert sorted(o["order_id"] for o in mine) == sorted([purchase.order_id, second.order_id])


# -- sorting transport failures: provably unsent, or possibly processed ------------------


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (requests.ConnectTimeout("connect timed out"), ServiceUnreachableError),
        (requests.ConnectionError(MaxRetryError(None, "/", NewConnectionError(  # type: ignore[arg-type]
            None, "refused"))), ServiceUnreachableError),  # type: ignore[arg-type]
        (requests.ConnectionError(MaxRetryError(None, "/", NameResolutionError(  # type: ignore[arg-type]
            "nowhere.invalid", None, OSError("dns")))), ServiceUnreachableError),  # type: ignore[arg-type]
        (requests.ConnectionError(MaxRetryError(None, "/", ConnectTimeoutError())),  # type: ignore[arg-type]
         ServiceUnreachableError),
        (requests.ReadTimeout("read timed out"), NoResponseError),
        (requests.ConnectionError(ProtocolError("Connection aborted.",
                                                http.client.RemoteDisconnected("x"))),
         NoResponseError),
        (requests.ConnectionError(ConnectionResetError(104, "reset")), NoResponseError),
        (requests.exceptions.ChunkedEncodingError("cut"), NoResponseError),
        (requests.exceptions.SSLError("handshake?"), NoResponseError),
    ],
)
def test_requests_failures_are_sorted(error: requests.RequestException, expected: type) -> None:
    assert type(sync.transport_error(error)) is expected


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (httpx.ConnectError("refused"), ServiceUnreachableError),
        (httpx.ConnectTimeout("slow connect"), ServiceUnreachableError),
        (httpx.PoolTimeout("pool"), ServiceUnreachableError),
        (httpx.ReadTimeout("slow answer"), NoResponseError),
        (httpx.WriteTimeout("slow send"), NoResponseError),
        (httpx.RemoteProtocolError("Server disconnected"), NoResponseError),
        (httpx.ReadError("reset"), NoResponseError),
        (httpx.WriteError("broken pipe"), NoResponseError),
    ],
)
def test_httpx_failures_are_sorted(error: httpx.HTTPError, expected: type) -> None:
    assert type(aio.transport_error(error)) is expected


def test_policy_decisions_by_safety() -> None:
    policy = RetryPolicy(max_wait=5)
    unsent = ServiceUnreachableError("refused")
    for safety in Safety:
        assert policy.should_retry(safety, unsent)
    for error in (NoResponseError("?"), ServerError("x", status=503),
                  RateLimitedError("x", retry_after=1)):
        assert policy.should_retry(Safety.IDEMPOTENT, error)
        assert not policy.should_retry(Safety.UNSAFE, error)
        assert not policy.should_retry(Safety.MONEY, error)
    assert not policy.should_retry(Safety.IDEMPOTENT, RateLimitedError("x", retry_after=6))
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
