from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from airflow_provider_tronenergy.sandbox import SandboxConfig, SandboxServer


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(SandboxConfig(port=0, time_scale=0.01,
                                     webhook_secret="whsec_hook_tests")) as server:
        yield server


def connection_json(sandbox: SandboxServer, **extra: object) -> str:
    return json.dumps({
        "conn_type": "tronenergy",
        "host": sandbox.url,
        "login": sandbox.api_key,
        "password": sandbox.api_secret,
        "extra": {"webhook_secret": sandbox.webhook_secret, **extra},
    })


@pytest.fixture
def tronenergy_conn(sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_DEFAULT", connection_json(sandbox))
    return "tronenergy_default"
