"""Fixtures for the client tests: one shared sandbox, its control API, and clients.

The sandbox runs in-process on a background thread and is reached over real
loopback HTTP. ``api`` runs a test twice: with the sync client, and with the
async client behind a blocking facade, so both meet the same assertions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from airflow_provider_tronenergy.client import TronEnergyClient
from support.clients import SANDBOX_CONFIG, BlockingFacade, make_async_client, make_client
from support.control import Control
from support.sandbox import sandbox_fixture
from tronenergy_sandbox import SandboxServer

sandbox = sandbox_fixture(scope="session", **SANDBOX_CONFIG)


@pytest.fixture(scope="session")
def control(sandbox: SandboxServer) -> Control:
    return Control(sandbox)


@pytest.fixture(autouse=True)
def _no_leftover_faults(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "control" in request.fixturenames:
        request.getfixturevalue("control").clear_faults()


@pytest.fixture(params=["sync", "async"])
def api(request: pytest.FixtureRequest, sandbox: SandboxServer) -> Iterator[Any]:
    """The sync client, or the async one behind a blocking facade."""
    if request.param == "sync":
        client = make_client(sandbox)
        yield client
        client.close()
    else:
        facade = BlockingFacade(make_async_client(sandbox))
        yield facade
        facade.close()


@pytest.fixture
def client(sandbox: SandboxServer) -> Iterator[TronEnergyClient]:
    with make_client(sandbox) as sync_client:
        yield sync_client
