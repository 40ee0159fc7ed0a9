"""Fixtures for the hook tests: a sandbox with a known webhook secret, and a connection to it."""

from __future__ import annotations

import pytest

from support.sandbox import default_connection, sandbox_fixture
from tronenergy_sandbox import SandboxServer

sandbox = sandbox_fixture(scope="module", webhook_secret="whsec_hook_tests")


@pytest.fixture
def tronenergy_conn(sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch) -> str:
    return default_connection(monkeypatch, sandbox)
