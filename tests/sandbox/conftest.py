"""Fixtures for the sandbox's HTTP tests: running sandboxes and signed-request helpers.

Everything here talks real HTTP over loopback sockets, with nothing but ``requests``
and ``protocol.signing`` (support.signed's ``Signed``): the provider's own client is
deliberately not used, so the sandbox is tested independently of the code it exists to test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest

from support.sandbox import sandbox_config, sandbox_fixture
from support.signed import Signed, signed_for
from tronenergy_sandbox import SandboxServer

# One shared sandbox; tests on it use fresh addresses and relative balance checks.
sandbox_server = sandbox_fixture(scope="session", balance=Decimal("1000000"))


@pytest.fixture(scope="session")
def signed(sandbox_server: SandboxServer) -> Signed:
    return signed_for(sandbox_server)


@pytest.fixture
def faults(signed: Signed) -> Iterator[Signed]:
    """The shared sandbox's client, with every injected fault cleared afterwards."""
    signed.clear_faults()
    yield signed
    signed.clear_faults()


@pytest.fixture(scope="module")
def start_sandbox() -> Iterator[Callable[..., SandboxServer]]:
    """Start extra sandboxes (own config) that live until the end of the module."""
    started: list[SandboxServer] = []

    def start(**config: Any) -> SandboxServer:
        server = SandboxServer(sandbox_config(**config)).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def signer() -> Callable[..., Signed]:
    """``signer(server, scheme="v1")``: a signed-request helper for any sandbox."""
    return signed_for
