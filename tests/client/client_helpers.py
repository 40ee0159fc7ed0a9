"""Helpers for the client tests: sandbox start-up, its control API, client factories.

Kept out of conftest.py so test modules can import them by a unique name.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import requests

from airflow_provider_tronenergy.client import (
    AsyncTronEnergyClient,
    RetryPolicy,
    TronEnergyClient,
)
from airflow_provider_tronenergy.protocol.address import random_address
from airflow_provider_tronenergy.sandbox import SandboxConfig, SandboxServer

# Distinctive credentials, so a leak shows up as a plain substring.
API_KEY = "KEY-" + secrets.token_hex(12)
API_SECRET = "SECRET-" + secrets.token_hex(16)
FAST_RETRY = RetryPolicy(max_attempts=4, initial_wait=0.005, max_wait=2.0)


def start_sandbox(**config: Any) -> SandboxServer:
    settings: dict[str, Any] = {
        "port": 0, "time_scale": 0.01, "api_key": API_KEY, "api_secret": API_SECRET,
        "balance": Decimal("1000000"),
    }
    settings.update(config)
    server = SandboxServer(SandboxConfig(**settings))
    # Sandbox bug (reported): its listening socket is created with proto 0, so asyncio
    # never sets TCP_NODELAY on accepted connections and every keep-alive request
    # waits ~40 ms for a delayed ACK. Linux copies TCP_NODELAY from the listener.
    server.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return server.start()


class Control:
    """The sandbox's /sandbox control API: seed chain state, inject faults, read orders."""

    def __init__(self, server: SandboxServer) -> None:
        self.server = server
        self.base = server.root_url + "/sandbox"
        self.http = requests.Session()

    @staticmethod
    def _ok(response: requests.Response) -> Any:
        assert response.status_code == 200, response.text
        return response.json()["data"]

    def post(self, path: str, body: Any = None) -> Any:
        return self._ok(self.http.post(self.base + path, json=body))

    def activated(self, address: str | None = None) -> str:
        """A (fresh) address that is activated on the emulated chain."""
        address = address or random_address()
        self.post(f"/addresses/{address}/activate")
        return address

    def holder(self, address: str, token: str = "USDT") -> None:
        self.post(f"/addresses/{address}/holder", {"token": token})

    def balance(self, trx: str) -> None:
        self.post("/balance", {"balance": trx})

    def orders(self) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._ok(self.http.get(self.base + "/orders"))
        return result

    def fault(self, **spec: Any) -> dict[str, Any]:
        result: dict[str, Any] = self.post("/faults", spec)
        return result

    def faults(self) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._ok(self.http.get(self.base + "/faults"))
        return result

    def clear_faults(self) -> None:
        self._ok(self.http.delete(self.base + "/faults"))


def make_client(server: SandboxServer, **options: Any) -> TronEnergyClient:
    options.setdefault("retry", FAST_RETRY)
    return TronEnergyClient(server.url, API_KEY, API_SECRET, **options)


def make_async_client(server: SandboxServer, **options: Any) -> AsyncTronEnergyClient:
    options.setdefault("retry", FAST_RETRY)
    return AsyncTronEnergyClient(server.url, API_KEY, API_SECRET, **options)


class BlockingFacade:
    """Runs an AsyncTronEnergyClient's coroutines on a private loop, one call at a time.

    Lets one test body exercise the async client exactly as it does the sync one.
    """

    def __init__(self, client: AsyncTronEnergyClient) -> None:
        self.client = client
        self.loop = asyncio.new_event_loop()

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.client, name)
        if name == "iter_monitored_addresses":
            def walk(*args: Any, **kwargs: Any) -> Iterator[Any]:
                iterator = target(*args, **kwargs)

                async def collect() -> list[Any]:
                    return [item async for item in iterator]

                return iter(self.loop.run_until_complete(collect()))
            return walk
        if not callable(target):
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.loop.run_until_complete(target(*args, **kwargs))
        return call

    def __repr__(self) -> str:
        return repr(self.client)

    def close(self) -> None:
        self.loop.run_until_complete(self.client.aclose())
        self.loop.close()


def free_port() -> int:
    """A loopback port with nothing listening on it (connection refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@contextmanager
def both_clients(server: SandboxServer, **options: Any) -> Iterator[list[Any]]:
    """[sync client, async client behind a BlockingFacade] for one sandbox."""
    sync_client = make_client(server, **options)
    facade = BlockingFacade(make_async_client(server, **options))
    try:
        yield [sync_client, facade]
    finally:
        sync_client.close()
        facade.close()
