"""Helpers for the client tests: sandbox start-up and client factories.

Kept out of conftest.py so test modules import them (``support.clients``); the fixtures
built on them are in tests/client/conftest.py.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from airflow_provider_tronenergy.client import (
    RetryPolicy,
    TronEnergyAsyncClient,
    TronEnergyClient,
)
from support.sandbox import sandbox_config
from tronenergy_sandbox import SandboxServer

# Distinctive credentials, so a leak shows up as a plain substring.
API_KEY = "KEY-" + secrets.token_hex(12)
API_SECRET = "SECRET-" + secrets.token_hex(16)
FAST_RETRY = RetryPolicy(max_attempts=4, initial_wait=0.005, max_wait=2.0)


# The client tests' sandbox: known credentials and a balance no test runs out of.
SANDBOX_CONFIG: dict[str, Any] = {
    "api_key": API_KEY, "api_secret": API_SECRET, "balance": Decimal("1000000"),
}


def start_sandbox(**config: Any) -> SandboxServer:
    """A started extra sandbox (``SANDBOX_CONFIG``, then ``config``); the caller stops it."""
    return SandboxServer(sandbox_config(**{**SANDBOX_CONFIG, **config})).start()


def make_client(server: SandboxServer, **options: Any) -> TronEnergyClient:
    options.setdefault("retry", FAST_RETRY)
    return TronEnergyClient(server.url, API_KEY, API_SECRET, **options)


def make_async_client(server: SandboxServer, **options: Any) -> TronEnergyAsyncClient:
    options.setdefault("retry", FAST_RETRY)
    return TronEnergyAsyncClient(server.url, API_KEY, API_SECRET, **options)


class BlockingFacade:
    """Runs an TronEnergyAsyncClient's coroutines on a private loop, one call at a time.

    Lets one test body exercise the async client exactly as it does the sync one.
    """

    def __init__(self, client: TronEnergyAsyncClient) -> None:
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
