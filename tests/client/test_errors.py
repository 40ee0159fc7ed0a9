"""Each error code to its exception: over HTTP from the sandbox, and through the core's table."""

from __future__ import annotations

import pickle
import time
from typing import Any

import pytest

from airflow_provider_tronenergy.client import (
    AddressAlreadyActivatedError,
    AddressNotActivatedError,
    AmbiguousPurchaseError,
    AuthenticationError,
    ConflictError,
    InsufficientBalanceError,
    InvalidAddressError,
    InvalidRequestError,
    NotFoundError,
    RateLimitedError,
    RetryPolicy,
    ServerError,
    TronEnergyClient,
    TronEnergyError,
    UnexpectedResponseError,
)
from airflow_provider_tronenergy.client.core import Call, RequestCore
from airflow_provider_tronenergy.client.errors import error_class
from support.clients import API_KEY, API_SECRET, both_clients
from support.control import Control
from tronenergy_protocol.address import random_address
from tronenergy_protocol.codes import ErrorCode
from tronenergy_sandbox import SandboxServer

EXPECTED: dict[ErrorCode, type[TronEnergyError]] = {
    ErrorCode.MISSING_API_KEY: AuthenticationError,
    ErrorCode.BAD_SIGNATURE: AuthenticationError,
    ErrorCode.BAD_TIMESTAMP: AuthenticationError,
    ErrorCode.INVALID_PARAMETER: InvalidRequestError,
    ErrorCode.INVALID_ADDRESS: InvalidAddressError,
    ErrorCode.ADDRESS_NOT_ACTIVATED: AddressNotActivatedError,
    ErrorCode.ADDRESS_ALREADY_ACTIVATED: AddressAlreadyActivatedError,
    ErrorCode.INSUFFICIENT_BALANCE: InsufficientBalanceError,
    ErrorCode.NOT_FOUND: NotFoundError,
    ErrorCode.ALREADY_MONITORED: ConflictError,
    ErrorCode.RATE_LIMITED: RateLimitedError,
    ErrorCode.INTERNAL_ERROR: ServerError,
    ErrorCode.UPSTREAM_UNAVAILABLE: ServerError,
}

CORE = RequestCore("http://127.0.0.1:1/v1", API_KEY, API_SECRET)


def decode(status: int, body: bytes, headers: dict[str, str] | None = None,
           parse: Any = lambda data: data, flat: bool | None = False) -> Any:
    call: Call[Any] = Call("POST", "/energy/buy", parse, flat=flat)
    return CORE.decode(call, CORE.prepare(call), status, headers or {}, body)


def envelope(code: int, message: str = "nope") -> bytes:
    return (f'{{"success":false,"code":{code},"message":"{message}","data":null}}').encode()


def test_table_covers_every_code_of_the_protocol() -> None:
    assert set(EXPECTED) == set(ErrorCode)


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: c.name)
def test_every_code_maps_to_its_exception(code: ErrorCode) -> None:
    with pytest.raises(TronEnergyError) as info:
        decode(code.http_status, envelope(int(code)), {"Retry-After": "7"})
    error = info.value
    assert type(error) is EXPECTED[code]
    assert (error.code, error.status) == (int(code), code.http_status)
    assert (error.method, error.path) == ("POST", "/v1/energy/buy")
    text = str(error)
    assert str(int(code)) in text and str(code.http_status) in text
    assert "POST /v1/energy/buy" in text and code.description in text
    if isinstance(error, RateLimitedError):
        assert error.retry_after == 7.0


@pytest.mark.parametrize(
    ("status", "expected"),
    [(400, InvalidRequestError), (401, AuthenticationError), (403, AuthenticationError),
     (402, InsufficientBalanceError), (404, NotFoundError), (409, ConflictError),
     (418, InvalidRequestError), (429, RateLimitedError), (500, ServerError),
     (502, ServerError), (503, ServerError), (200, TronEnergyError)],
)
def test_unknown_codes_fall_back_on_http_status(status: int, expected: type) -> None:
    assert error_class(12345, status) is expected
    with pytest.raises(TronEnergyError) as info:
        decode(status, envelope(12345, "brand new failure"))
    assert type(info.value) is expected
    assert info.value.code == 12345 and "brand new failure" in str(info.value)


def test_unreadable_error_bodies_fall_back_on_http_status() -> None:
    with pytest.raises(ServerError) as info:
        decode(502, b"<html>Bad Gateway</html>")
    assert info.value.code is None and "HTTP 502" in str(info.value)
    with pytest.raises(AuthenticationError):
        decode(401, b"")
    with pytest.raises(UnexpectedResponseError, match="not JSON"):
        decode(200, b"<html>ok</html>")
    with pytest.raises(UnexpectedResponseError, match="'success'"):
        decode(200, b'{"code":10000,"data":{}}')
    with pytest.raises(UnexpectedResponseError, match="unexpected code"):
        decode(200, b'{"success":true,"code":7,"data":{}}')
    # success:true with a refusal code says both things: unreadable, never a refusal (issue 22)
    with pytest.raises(UnexpectedResponseError, match="unexpected code '40010'"):
        decode(200, b'{"success":true,"code":40010,"data":null}')


def test_success_codes_and_flat_answers() -> None:
    assert decode(200, b'{"success":true,"code":10000,"message":"","data":{"a":1}}') == {"a": 1}
    assert decode(200, b'{"success":true,"code":0,"message":"","data":null}') is None
    flat = b'{"success":true,"order_id":"x","tx_hash":"","cost":1.1,"message":"done"}'
    assert decode(200, flat, flat=None)["message"] == "done"
    with pytest.raises(UnexpectedResponseError, match="no 'data'"):
        decode(200, flat)


def test_exceptions_pickle_with_their_context() -> None:
    with pytest.raises(RateLimitedError) as info:
        decode(429, envelope(40290), {"Retry-After": "3"})
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is RateLimitedError and str(copy) == str(info.value)
    assert (copy.code, copy.status, copy.retry_after) == (40290, 429, 3.0)


# -- the same codes, produced by the sandbox over HTTP -----------------------------------


def test_authentication_failures(sandbox: SandboxServer) -> None:
    bad_key = TronEnergyClient(sandbox.url, "wrong-key", API_SECRET)
    bad_secret = TronEnergyClient(sandbox.url, API_KEY, "wrong-secret")
    skewed = TronEnergyClient(sandbox.url, API_KEY, API_SECRET)
    skewed._core.clock = lambda: time.time() - 1000
    for client, code in ((bad_key, 40001), (bad_secret, 40002), (skewed, 40003)):
        with pytest.raises(AuthenticationError) as info:
            client.get_account()
        assert (info.value.code, info.value.status) == (code, 401)
        client.close()


def test_client_errors_from_the_service(sandbox: SandboxServer, control: Control) -> None:
    with both_clients(sandbox) as clients:
        for api in clients:
            with pytest.raises(InvalidRequestError) as invalid:
                api.request("POST", "/energy/buy", json={"target_address": control.activated(),
                                                         "energy_amount": "lots"})
            assert invalid.value.code == 40010 and "energy_amount" in str(invalid.value)
            with pytest.raises(InvalidAddressError):
                api.request("POST", "/energy/check-address", json={"address": "Tnope"},
                            idempotent=True)
            with pytest.raises(AddressNotActivatedError):
                api.buy_energy(random_address())
            with pytest.raises(AddressAlreadyActivatedError):
                api.activate_address(control.activated())
            with pytest.raises(NotFoundError):
                api.get_order("no-such-order")
            with pytest.raises(NotFoundError):
                api.remove_monitored_address(random_address())
            address = random_address()
            api.add_monitored_address(address, "https://example.com/hook")
            with pytest.raises(ConflictError) as conflict:
                api.add_monitored_address(address, "https://example.com/hook")
            assert (conflict.value.code, conflict.value.status) == (40090, 409)


def test_insufficient_balance_is_a_definite_refusal(sandbox: SandboxServer,
                                                    control: Control) -> None:
    control.balance("0.5")
    try:
        with both_clients(sandbox) as clients:
            for api in clients:
                with pytest.raises(InsufficientBalanceError) as info:
                    api.buy_energy(control.activated())
                assert not isinstance(info.value, AmbiguousPurchaseError)
                assert (info.value.code, info.value.status) == (40020, 402)
                with pytest.raises(InsufficientBalanceError):
                    api.activate_address(random_address())
    finally:
        control.balance("1000000")


def test_rate_limit_and_server_errors_after_retries(sandbox: SandboxServer,
                                                   control: Control) -> None:
    policy = RetryPolicy(max_attempts=2, initial_wait=0.001, max_wait=1)
    with both_clients(sandbox, retry=policy) as clients:
        for api in clients:
            control.fault(kind="rate_limit", path="/energy/account", retry_after=60)
            with pytest.raises(RateLimitedError) as limited:
                api.get_account()
            assert limited.value.retry_after == 60 and limited.value.code == 40290
            control.clear_faults()
            for status, code in ((500, 50000), (503, 50300)):
                control.fault(kind="error", path="/energy/price", status=status)
                with pytest.raises(ServerError) as failed:
                    api.get_price()
                assert (failed.value.status, failed.value.code) == (status, code)
                control.clear_faults()
