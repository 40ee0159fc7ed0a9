"""The sandbox's secrets and its loopback-only control API, against local users and spoofing.

The ``--state`` file holds the API key, the API secret and the webhook secret:
it must be owner-only (0600), however permissive the umask. And
``FORWARDED_ALLOW_IPS=*`` in the environment must not let a request choose the
client address the control API judges (uvicorn's proxy headers stay off
unless ``--forwarded-allow-ips`` names a proxy).
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tronenergy_sandbox import SandboxConfig, SandboxServer
from tronenergy_sandbox.process import start_sandbox

SPOOFED = "203.0.113.9"


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The common default umask (0644 files), so a test cannot pass by luck of the machine."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_state_file_and_its_wal_are_created_owner_only(tmp_path: Path, open_umask: None):
    state = tmp_path / "sandbox.sqlite"
    sandbox = start_sandbox("--state", str(state), "--webhook-secret", "whsec_state_file")
    try:
        assert state.exists()
        assert mode(state) == 0o600, oct(mode(state))
        wal = tmp_path / "sandbox.sqlite-wal"
        assert wal.exists() and mode(wal) == 0o600, oct(mode(wal))
    finally:
        sandbox.stop()
    # It does hold the secrets: this is what the mode protects.
    with sqlite3.connect(state) as db:
        values = {str(v) for (v,) in db.execute("SELECT value FROM meta")}
    assert "whsec_state_file" in values and sandbox.api_secret in values


def test_a_state_file_left_readable_is_tightened(tmp_path: Path, open_umask: None):
    state = tmp_path / "old.sqlite"
    sqlite3.connect(state).close()
    state.chmod(0o644)
    with SandboxServer(SandboxConfig(port=0, state=str(state))):
        assert mode(state) == 0o600


def test_control_api_ignores_spoofed_forwarded_for_cli(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")
    sandbox = start_sandbox()
    try:
        answer = requests.get(f"{sandbox.root_url}/sandbox/health",
                              headers={"X-Forwarded-For": SPOOFED}, timeout=5)
        # The socket's peer is loopback: the header changes nothing, in either direction.
        assert answer.status_code == 200, answer.text
    finally:
        sandbox.stop()


def test_control_api_ignores_spoofed_forwarded_for_in_process(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")
    with SandboxServer(SandboxConfig(port=0)) as sandbox:
        answer = requests.get(f"{sandbox.root_url}/sandbox/health",
                              headers={"X-Forwarded-For": SPOOFED}, timeout=5)
        assert answer.status_code == 200, answer.text
    # Behind a proxy named on purpose, the header is the client: a remote one is refused.
    trusted = SandboxConfig(port=0, forwarded_allow_ips="127.0.0.1")
    with SandboxServer(trusted) as sandbox:
        answer = requests.get(f"{sandbox.root_url}/sandbox/health",
                              headers={"X-Forwarded-For": SPOOFED}, timeout=5)
        assert answer.status_code == 403, answer.text
