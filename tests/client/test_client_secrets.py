"""api_key and api_secret never show up in reprs, exception text, DEBUG logs or to_dict()."""

from __future__ import annotations

import asyncio
import logging
import pickle
import traceback
from typing import Any

import pytest

from airflow_provider_tronenergy.client import (
    AmbiguousPurchaseError,
    RetryPolicy,
    TronEnergyAsyncClient,
    TronEnergyClient,
    TronEnergyError,
)
from airflow_provider_tronenergy.client.core import Call, RequestCore
from support.clients import (
    API_KEY,
    API_SECRET,
    BlockingFacade,
    make_async_client,
    make_client,
)
from support.control import Control
from support.ports import closed_port
from tronenergy_protocol.address import random_address
from tronenergy_sandbox import SandboxServer

SECRETS = (API_KEY, API_SECRET)


def assert_clean(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"secret found in {where}"


def error_texts(error: BaseException) -> list[str]:
    """str, repr and the formatted traceback of an error and everything it chains to."""
    texts = ["".join(traceback.format_exception(error))]
    seen: BaseException | None = error
    while seen is not None:
        texts += [str(seen), repr(seen)]
        seen = seen.__cause__ or seen.__context__
    return texts


def exercise(api: Any, control: Control) -> tuple[list[Any], list[BaseException]]:
    """Successes and failures of every kind, collected for inspection."""
    results: list[Any] = []
    errors: list[BaseException] = []
    target = control.activated()

    def attempt(call: Any) -> None:
        try:
            results.append(call())
        except TronEnergyError as error:
            errors.append(error)

    attempt(api.get_account)
    attempt(api.get_price)
    attempt(lambda: api.buy_energy(target))
    attempt(lambda: api.smart_buy_energy(target, random_address()))
    attempt(lambda: api.activate_address(random_address()))
    attempt(lambda: api.check_address(target))
    attempt(api.get_monitor_stats)
    attempt(lambda: api.add_monitored_address(random_address(), "https://example.com/h"))
    attempt(api.list_monitored_addresses)
    attempt(lambda: api.get_order("missing"))  # NotFoundError
    attempt(lambda: api.buy_energy("Tnot-an-address"))  # ValidationError
    attempt(lambda: api.buy_energy(random_address()))  # AddressNotActivatedError
    control.fault(kind="drop", path="/energy/buy", count=1)
    attempt(lambda: api.buy_energy(target))  # AmbiguousPurchaseError (dropped)
    control.fault(kind="error", status=503, path="/energy/account")
    attempt(api.get_account)  # ServerError after retries
    control.clear_faults()
    assert any(isinstance(e, AmbiguousPurchaseError) for e in errors)
    assert len(errors) >= 5 and len(results) >= 8
    return results, errors


def test_nothing_leaks_from_either_client(sandbox: SandboxServer, control: Control,
                                          caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # root: urllib3, httpx and httpcore included
    sync_client = make_client(sandbox, retry=RetryPolicy(max_attempts=2, initial_wait=0.001))
    facade = BlockingFacade(make_async_client(
        sandbox, retry=RetryPolicy(max_attempts=2, initial_wait=0.001)))
    try:
        for api in (sync_client, facade):
            assert_clean(repr(api), "client repr")
            assert_clean(repr(vars(api)), "client attributes")
            assert_clean(repr(vars(api._core)), "core attributes")
            results, errors = exercise(api, control)
            for result in results:
                assert_clean(repr(result), "result repr")
                assert_clean(str(result.to_dict()), "to_dict")
            for error in errors:
                for text in error_texts(error):
                    assert_clean(text, f"{type(error).__name__} text")
                assert_clean(repr(pickle.loads(pickle.dumps(error))), "pickled error")
    finally:
        sync_client.close()
        facade.close()
    # The capture really saw the traffic, so its cleanliness means something.
    assert "/v1/energy/buy" in caplog.text and "httpcore" in caplog.text
    assert_clean(caplog.text, "captured logs")
    for record in caplog.records:
        assert_clean(repr(record.args), "log record args")


def test_connection_failures_leak_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"http://127.0.0.1:{closed_port()}/v1"
    policy = RetryPolicy(max_attempts=2, initial_wait=0.001)
    errors: list[BaseException] = []
    with TronEnergyClient(url, API_KEY, API_SECRET, retry=policy) as client:
        try:
            client.buy_energy(random_address())
        except TronEnergyError as sync_error:
            errors.append(sync_error)

    async def async_call() -> None:
        async with TronEnergyAsyncClient(url, API_KEY, API_SECRET, retry=policy) as client:
            await client.get_account()

    try:
        asyncio.run(async_call())
    except TronEnergyError as async_error:
        errors.append(async_error)
    assert len(errors) == 2
    for error in errors:
        for text in error_texts(error):
            assert_clean(text, "connection error text")
    assert_clean(caplog.text, "captured logs")


def test_service_messages_echoing_a_secret_are_redacted() -> None:
    core = RequestCore("http://127.0.0.1:1/v1", API_KEY, API_SECRET)
    call: Call[Any] = Call("GET", "/energy/account", lambda data: data)
    body = (f'{{"success":false,"code":40001,"message":"unknown key {API_KEY} '
            f'(secret {API_SECRET})","data":null}}').encode()
    with pytest.raises(TronEnergyError) as info:
        core.decode(call, core.prepare(call), 401, {}, body)
    assert "***" in str(info.value)
    for text in error_texts(info.value):
        assert_clean(text, "redacted error")


def test_secrets_are_still_sent_where_they_belong() -> None:
    """Guards the test above against passing because nothing is sent at all."""
    core = RequestCore("http://127.0.0.1:1/v1", API_KEY, API_SECRET)
    call: Call[Any] = Call("GET", "/energy/account", lambda data: data)
    headers = core.headers(core.prepare(call))
    assert headers["X-API-Key"] == API_KEY
    assert API_SECRET not in str(headers)
