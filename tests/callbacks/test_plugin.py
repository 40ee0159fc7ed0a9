"""The receiver mounted in a real Airflow 3 API server, through the airflow.plugins entry point."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from airflow_provider_tronenergy.callbacks import CallbackStore
from airflow_provider_tronenergy.callbacks.plugin import LazyReceiverApp
from support.api_server import running_api_server, status
from support.callbacks import ServedApp, callback_body, post, signed_headers
from support.hostile import trickle_until_closed
from support.signed import SignedSession
from support.waiting import wait_until
from tronenergy_protocol.address import random_address
from tronenergy_sandbox import SandboxConfig, SandboxServer


@dataclass
class ApiServer:
    process: subprocess.Popen[str]
    root_url: str
    store_url: str


@pytest.fixture(scope="module")
def airflow_api(tmp_path_factory) -> Iterator[ApiServer]:
    home = tmp_path_factory.mktemp("airflow_home")
    store_url = f"sqlite:///{home / 'callbacks.db'}"
    env = {
        **{k: v for k, v in os.environ.items()
           if not k.startswith(("AIRFLOW", "TRONENERGY_"))},
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
        # Airflow 3.0.x with PyJWT >= 2.10 fails every API request ("Issuer (iss) must be
        # a string") unless an issuer is configured.
        "AIRFLOW__API_AUTH__JWT_ISSUER": "airflow",
        "TRONENERGY_CALLBACK_STORE": store_url,
        "AIRFLOW__TRONENERGY__CALLBACK_BODY_TIMEOUT": "1",
        "PYTHONUNBUFFERED": "1",
    }
    with running_api_server(env, migrate_timeout=180) as (process, root_url):
        yield ApiServer(process, root_url, store_url)


def _admin(root_url: str) -> dict[str, str]:
    """An admin's headers for Airflow's REST API, as the UI gets them in all-admins mode.

    Airflow 3.1 answers 401 to a REST call without a token even when every user is an
    admin; ``GET /auth/token`` hands one out in that mode (later releases let the call
    through without one, and still give the token).
    """
    answer = httpx.get(f"{root_url}/auth/token", trust_env=False, timeout=10)
    if answer.status_code not in (200, 201):
        return {}
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


def test_plugin_receives_in_the_airflow_api_server(airflow_api: ApiServer):
    callbacks = f"{airflow_api.root_url}/tronenergy/callbacks"
    health = f"{airflow_api.root_url}/tronenergy/health"

    # 1. Installed but not configured: a clear 503, and the API server itself is fine.
    body = callback_body()
    unconfigured = post(callbacks, body, signed_headers("anything", body))
    assert unconfigured.status_code == 503
    assert unconfigured.json()["error"] == "not_configured"
    assert "webhook_secret" in unconfigured.json()["message"]
    assert status(health) == 503
    assert status(f"{airflow_api.root_url}/api/v2/version") == 200
    admin = _admin(airflow_api.root_url)
    plugins = httpx.get(f"{airflow_api.root_url}/api/v2/plugins", trust_env=False,
                        headers=admin).json()
    ours = [p for p in plugins["plugins"] if p["name"] == "tronenergy_callbacks"]
    assert ours and ours[0]["fastapi_apps"][0]["url_prefix"] == "/tronenergy"

    with SandboxServer(SandboxConfig(port=0, time_scale=0.01)) as sandbox:
        # 2. An operator adds the connection (here through Airflow's REST API): no restart.
        created = httpx.post(
            f"{airflow_api.root_url}/api/v2/connections", trust_env=False, timeout=10,
            headers=admin,
            json={"connection_id": "tronenergy_default", "conn_type": "generic",
                  "host": sandbox.url,
                  "extra": json.dumps({"webhook_secret": sandbox.webhook_secret})},
        )
        assert created.status_code == 201, created.text
        wait_until(lambda: status(health) == 200, 15, "the receiver to pick up the secret")

        # 3. A real signed callback from the sandbox lands in the store.
        api = SignedSession(sandbox.root_url, sandbox.api_key, sandbox.api_secret)
        address = random_address()
        api.data("POST", "/v1/tron-monitor/addresses",
                 {"address": address, "webhook_url": callbacks})
        tx_hash = api.control("POST", "/transfers", {"from": random_address(), "to": address,
                                                     "amount": "42.000001", "token": "TRX"})[
            "tx_hash"]
        wait_until(lambda: len(api.control("GET", "/deliveries?status=delivered")) == 1, 15,
                   "the delivery")

        # 4. Airflow does not authenticate plugin apps: the signature still gates everything.
        forged = callback_body()
        assert post(callbacks, forged, signed_headers("forged", forged)).status_code == 403
        assert post(callbacks, forged, {}).status_code == 403

    store = CallbackStore(airflow_api.store_url)
    stored = store.list_transfers()
    store.close()
    assert [(t.tx_hash, t.amount_text, t.to_address) for t in stored] == \
        [(tx_hash, "42.000001", address)]


def test_plugin_cuts_slow_bodies_and_closes_after_a_413(airflow_api: ApiServer):
    """Airflow's server has no body deadline and drains refused bodies: the app does both."""
    created = httpx.post(
        f"{airflow_api.root_url}/api/v2/connections", trust_env=False, timeout=10,
        headers=_admin(airflow_api.root_url),
        json={"connection_id": "tronenergy_default", "conn_type": "generic",
              "extra": json.dumps({"webhook_secret": "whsec_plugin_limits"})},
    )
    assert created.status_code in (201, 409), created.text  # 409: an earlier test made it
    wait_until(lambda: status(f"{airflow_api.root_url}/tronenergy/health") == 200, 15,
               "the receiver to pick up the secret")
    port = int(airflow_api.root_url.rsplit(":", 1)[1])
    head = (b"POST /tronenergy/callbacks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Signature: "
            + b"ab" * 32)

    with socket.create_connection(("127.0.0.1", port), timeout=5) as slow:
        slow.sendall(head + b"\r\nContent-Length: 1000\r\n\r\n{")
        closed, answer = trickle_until_closed(slow, 10)  # ten times callback_body_timeout
    assert closed, "a body trickling for 10 s kept its connection"
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]

    total, sent = 100 * 1024 * 1024, 0
    with socket.create_connection(("127.0.0.1", port), timeout=10) as big:
        big.sendall(head + f"\r\nContent-Length: {total}\r\n\r\n".encode())
        refused = big.recv(65536)
        try:
            while sent < total:
                big.sendall(b"x" * (1024 * 1024))
                sent += 1024 * 1024
        except OSError:
            pass
    assert refused.startswith(b"HTTP/1.1 413") and b"connection: close" in refused.lower()
    assert sent < total, "the API server read and discarded the whole 100 MB body"


def test_lazy_app_answers_503_until_it_can_be_built(sqlite_store):
    from airflow_provider_tronenergy.callbacks import create_app

    attempts: list[int] = []

    def build():
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("postgresql://user:hunter2@db/x is unreachable")
        return create_app(sqlite_store, "s")

    with ServedApp(LazyReceiverApp(build, retry=1.0)) as served:
        body = callback_body()
        first = post(served.callback_url, body, signed_headers("s", body))
        assert first.status_code == 503 and first.json()["error"] == "receiver_unavailable"
        assert "hunter2" not in first.text
        # Within the retry interval it does not rebuild on every request.
        assert post(served.callback_url, body, signed_headers("s", body)).status_code == 503
        assert len(attempts) == 1
        time.sleep(1.05)
        assert post(served.callback_url, body, signed_headers("s", body)).status_code == 200
        assert post(served.callback_url, body, signed_headers("s", body)).json()["duplicate"]
    assert len(attempts) == 2


def test_loading_the_plugin_builds_nothing(tmp_path):
    """Every Airflow component loads plugins: that must not open a store or need a secret."""
    store_dir = tmp_path / "not-created"
    code = ("from airflow import plugins_manager as pm; pm.ensure_plugins_loaded(); "
            "from airflow_provider_tronenergy.callbacks.plugin import receiver_app as app; "
            "info = {p['name']: p for p in pm.get_plugin_info()}; "
            "assert info['tronenergy_callbacks']['fastapi_apps'][0]['url_prefix'] == "
            "'/tronenergy', info; assert app.app is None")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("TRONENERGY_")},
           "AIRFLOW_HOME": str(tmp_path / "home"), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "TRONENERGY_CALLBACK_STORE": f"sqlite:///{store_dir / 'callbacks.db'}"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert not store_dir.exists()


def test_refreshing_secrets_follow_a_rotation():
    from airflow_provider_tronenergy.callbacks.verify import RefreshingSecrets, WebhookSecrets

    current = {"value": None}
    loads: list[int] = []

    def load():
        loads.append(1)
        value = current["value"]
        if value == "boom":
            raise OSError("metadata database unavailable")
        return WebhookSecrets.build(value) if value else None

    source = RefreshingSecrets(load, ttl=0.5, retry=0.05)

    async def scenario() -> None:
        assert await source.get() is None  # not configured yet
        current["value"] = "old"
        await asyncio.sleep(0.06)
        assert (await source.get()).key_level == ("old",)
        current["value"] = "new,old"
        assert (await source.get()).key_level == ("old",)  # cached within the ttl
        await asyncio.sleep(0.51)
        assert (await source.get()).key_level == ("new", "old")
        current["value"] = "boom"
        await asyncio.sleep(0.51)
        assert (await source.get()).key_level == ("new", "old")  # last good value kept

    asyncio.run(scenario())
    assert len(loads) == 4
