"""TronEnergyHook.client_settings(): a client's keyword arguments that never show the secrets."""

from __future__ import annotations

import asyncio
import json
import logging
import pprint

import pytest

from airflow_provider_tronenergy.client import (
    RetryPolicy,
    Timeout,
    TronEnergyAsyncClient,
    TronEnergyClient,
)
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook

API_KEY = "key-f00d-4d1e-8c3b"
API_SECRET = "secret-beef-77aa-0f12"
BASE_URL = "https://api.example.com/v1"


def settings() -> object:
    from airflow.sdk import Connection

    conn = Connection(conn_id="settings", conn_type="tronenergy", host=BASE_URL, login=API_KEY,
                      password=API_SECRET, extra=json.dumps({"timeout": [2, 7], "max_retries": 1}))
    return TronEnergyHook.client_settings(conn)


def test_secrets_never_show_in_any_rendering(caplog):
    value = settings()
    logging.getLogger("tests.client_settings").warning("settings: %s %r", value, value)
    renderings = {
        "repr": repr(value), "str": str(value), "f-string": f"{value} {value!r}",
        "format": format(value), "%": "%s" % (value,),  # noqa: UP031 - as old code does
        "pprint": pprint.pformat(value),
        "in a list": str([value]), "in a dict": str({"settings": value}),
        "exception": str(ValueError(value)), "exception repr": repr(ValueError(value)),
        "exception f-string": str(RuntimeError(f"cannot use {value}")),
        "log": caplog.text,
    }
    for where, text in renderings.items():
        assert API_KEY not in text, where
        assert API_SECRET not in text, where
    # Still a useful repr: what is safe to show is shown.
    assert BASE_URL in repr(value)
    assert "Timeout(connect=2.0, read=7.0, total=None)" in repr(value)


def test_settings_still_splat_into_both_clients():
    value = settings()
    assert value["api_key"] == API_KEY and value["api_secret"] == API_SECRET
    assert set(value) == {"base_url", "api_key", "api_secret", "signature_scheme", "timeout",
                          "retry", "rules", "max_answer_bytes"}
    with TronEnergyClient(**value) as client:
        assert client.timeout == Timeout(2.0, 7.0)
        assert client.retry == RetryPolicy(max_attempts=2)
        assert API_SECRET not in repr(client)

    async def build() -> None:
        async with TronEnergyAsyncClient(**value) as client:
            assert client.retry == RetryPolicy(max_attempts=2)

    asyncio.run(build())


def test_settings_are_read_only():
    value = settings()
    with pytest.raises(AttributeError) as info:
        value.api_secret = "other"  # type: ignore[misc]
    assert API_SECRET not in str(info.value)
    with pytest.raises(KeyError) as missing:
        value["password"]
    assert API_SECRET not in str(missing.value)


def _connection(extra: dict[str, object]) -> object:
    from airflow.sdk import Connection

    return Connection(conn_id="explorer", conn_type="tronenergy", host=BASE_URL, login=API_KEY,
                      password=API_SECRET, extra=json.dumps(extra))


def test_the_links_explorer_is_the_extra_or_mainnet_tronscan():
    assert TronEnergyHook.explorer(_connection({})).root == "https://tronscan.org"
    assert TronEnergyHook.explorer(_connection({"explorer_url": ""})).root \
        == "https://tronscan.org"
    nile = _connection({"explorer_url": "https://nile.tronscan.org/#/"})
    assert TronEnergyHook.explorer(nile).transaction("0f" * 32) \
        == f"https://nile.tronscan.org/#/transaction/{'0f' * 32}"


def test_a_bad_explorer_url_makes_the_connection_unusable_before_any_call():
    """Refused with the client's settings: a task fails before buying, not after."""
    from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyConnectionError

    conn = _connection({"explorer_url": "tronscan.org"})
    with pytest.raises(TronEnergyConnectionError,
                       match="'explorer': extra explorer_url must start with https://"):
        TronEnergyHook.client_settings(conn)
