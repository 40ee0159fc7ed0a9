"""TronEnergyHook on real Airflow connections, against the sandbox over HTTP."""

from __future__ import annotations

import asyncio
import json
import re
from decimal import Decimal

import pytest
import requests

from airflow_provider_tronenergy.client import (
    AuthenticationError,
    TronEnergyAsyncClient,
    TronEnergyClient,
    ValidationError,
)
from airflow_provider_tronenergy.hooks.tronenergy import (
    TronEnergyConnectionError,
    TronEnergyHook,
)
from support.sandbox import connection_json
from tronenergy_protocol.address import random_address


def test_client_is_built_once_and_reused(tronenergy_conn):
    hook = TronEnergyHook()
    client = hook.get_conn()
    assert isinstance(client, TronEnergyClient)
    assert hook.get_conn() is client
    assert hook.get_conn().get_account().balance > 0


def test_the_hooks_client_buys(sandbox, tronenergy_conn):
    target = random_address()
    requests.post(f"{sandbox.root_url}/sandbox/addresses/{target}/activate", timeout=5)
    hook = TronEnergyHook(tronenergy_conn_id=tronenergy_conn)
    purchase = hook.get_conn().buy_energy(target, energy_amount=65000, rent_time=1)
    assert purchase.cost == Decimal("2.925")
    assert hook.get_conn().get_order(purchase.order_id).order_id == purchase.order_id
    with pytest.raises(AttributeError):
        _ = hook.not_a_client_method


def test_the_hook_hands_out_clients_instead_of_mirroring_them():
    """Like HttpHook: ``get_conn()`` and ``aget_client()``, no copy of the client's methods."""
    assert "__getattr__" not in TronEnergyHook.__dict__
    public = {name for name in dir(TronEnergyClient)
              if not name.startswith("_") and callable(getattr(TronEnergyClient, name))}
    assert "buy_energy" in public and "get_order" in public
    assert sorted(public & set(dir(TronEnergyHook))) == ["close"]  # the hook closes its client
    assert TronEnergyHook.get_conn.__annotations__["return"] == "TronEnergyClient"
    assert TronEnergyHook.aget_client.__annotations__["return"] == "TronEnergyAsyncClient"


def test_connection_extras_reach_the_client(sandbox, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_CUSTOM", connection_json(
        sandbox, timeout=[2, 7], max_retries=0, purchase_rent_times="1"))
    client = TronEnergyHook("tronenergy_custom").get_conn()
    assert (client.timeout.connect, client.timeout.read) == (2.0, 7.0)
    assert client.retry.max_attempts == 1
    # The connection narrowed purchases to 1 h: 24 h is refused before anything is sent.
    with pytest.raises(ValidationError, match="rent_time"):
        client.buy_energy(random_address(), rent_time=24)


def test_ts_body_scheme_from_extras(monkeypatch):
    from tronenergy_sandbox import SandboxConfig, SandboxServer

    with SandboxServer(SandboxConfig(port=0, signature_scheme="ts.body")) as server:
        monkeypatch.setenv("AIRFLOW_CONN_TS", connection_json(server, signature_scheme="ts.body"))
        assert TronEnergyHook("ts").get_conn().get_account().username
        monkeypatch.setenv("AIRFLOW_CONN_V1", connection_json(server))
        with pytest.raises(AuthenticationError):
            TronEnergyHook("v1").get_conn().get_account()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"host": "127.0.0.1:8900/v1"}, "base URL"),
        ({"login": None}, "API key"),
        ({"password": None}, "API secret"),
        ({"extra": {"signature_scheme": "v2"}}, "signature_scheme"),
        ({"extra": {"max_retries": "many"}}, "max_retries"),
        ({"extra": {"max_retries": -1}}, "max_retries"),
        ({"extra": {"timeout": "soon"}}, "timeout"),
        ({"extra": {"purchase_rent_times": {"1": True}}}, "purchase_rent_times"),
    ],
)
def test_malformed_connections_fail_clearly(sandbox, monkeypatch, change, message):
    conn = json.loads(connection_json(sandbox))
    conn.update(change)
    monkeypatch.setenv("AIRFLOW_CONN_BROKEN", json.dumps(conn))
    with pytest.raises(TronEnergyConnectionError, match=message) as info:
        TronEnergyHook("broken").get_conn()
    assert sandbox.api_secret not in str(info.value)


def test_test_connection_reports_success_and_failure(sandbox, tronenergy_conn, monkeypatch):
    ok, message = TronEnergyHook().test_connection()
    assert ok and re.search(r"available balance \d+(\.\d+)? TRX", message)
    conn = json.loads(connection_json(sandbox))
    conn["password"] = "wrong-secret"
    monkeypatch.setenv("AIRFLOW_CONN_WRONG", json.dumps(conn))
    ok, message = TronEnergyHook("wrong").test_connection()
    assert not ok and "40002" in message
    assert "wrong-secret" not in message


def test_async_client_from_async_connection_lookup(sandbox, tronenergy_conn):
    async def run() -> Decimal:
        client = await TronEnergyHook().aget_client()
        assert isinstance(client, TronEnergyAsyncClient)
        async with client:
            return (await client.get_account()).available_balance

    assert asyncio.run(run()) == TronEnergyHook().get_conn().get_account().available_balance


def test_webhook_secret_comes_from_extras(sandbox, tronenergy_conn):
    assert TronEnergyHook().get_webhook_secret() == sandbox.webhook_secret


SECRET_LOG_SCRIPT = r"""
import io, logging, sys
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
hook = TronEnergyHook()
hook.get_conn().get_account()                        # loads the connection: masks its secrets
from airflow.sdk.log import configure_logging       # the logging tasks get
buffer = io.StringIO()
configure_logging(output=buffer, log_level="DEBUG", colored_console_log=False)
key, secret, webhook = sys.argv[1:4]
hook.log.info("hook log: %s %s %s", key, secret, webhook)
logging.getLogger("some.library").warning("stdlib log: %s %s", key, webhook)
hook.log.info("control value: %s", "visible-control-value")
print(buffer.getvalue())
"""


def test_secrets_never_reach_airflow_logs(sandbox, tronenergy_conn):
    """Airflow's own logging set-up (as tasks get it) masks what the hook registered."""
    import os
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", SECRET_LOG_SCRIPT, sandbox.api_key, sandbox.api_secret,
         sandbox.webhook_secret],
        capture_output=True, text=True, env=os.environ.copy(), timeout=120, check=True,
    )
    output = result.stdout + result.stderr
    assert "visible-control-value" in output  # the logs were captured at all
    assert "hook log: *** *** ***" in output
    assert "stdlib log: *** ***" in output
    for secret in (sandbox.api_key, sandbox.api_secret, sandbox.webhook_secret):
        assert secret not in output


def test_secrets_never_in_reprs_or_errors(sandbox, tronenergy_conn, monkeypatch):
    hook = TronEnergyHook()
    conn = json.loads(connection_json(sandbox))
    conn["password"] = "definitely-wrong-" + sandbox.api_secret[:6]
    monkeypatch.setenv("AIRFLOW_CONN_WRONG2", json.dumps(conn))
    with pytest.raises(AuthenticationError) as info:
        TronEnergyHook("wrong2").get_conn().get_account()
    for secret in (sandbox.api_key, sandbox.api_secret, sandbox.webhook_secret, conn["password"]):
        assert secret not in repr(hook)
        assert secret not in repr(hook.get_conn())
        assert secret not in str(info.value)
        assert secret not in repr(info.value)
