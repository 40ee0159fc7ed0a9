"""Fixtures: a sandbox whose orders move only when a test says so (see support.orders)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from airflow_provider_tronenergy.sandbox import SandboxConfig, SandboxServer
from support.orders import Control, ManualClock, connection_json


@pytest.fixture(scope="module")
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(scope="module")
def sandbox(clock: ManualClock) -> Iterator[SandboxServer]:
    with SandboxServer(SandboxConfig(port=0, time_scale=1.0)) as server:
        server.state.world.clock = clock
        yield server


@pytest.fixture
def control(sandbox: SandboxServer, clock: ManualClock) -> Iterator[Control]:
    control = Control(sandbox, clock)
    control.call("POST", "/balance", {"balance": "1000"})
    yield control
    control.call("DELETE", "/faults")


@pytest.fixture
def conn(sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_DEFAULT", connection_json(sandbox))
    return "tronenergy_default"
