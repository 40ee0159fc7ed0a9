"""A sandbox for a test: start one, declare a ``sandbox`` fixture, point Airflow at it.

Every in-process sandbox in the tests starts here, so a test module names only the
settings it really needs (a manual clock, a webhook secret, its own time scale).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

import pytest
import requests

from tronenergy_sandbox import SandboxConfig, SandboxServer
from tronenergy_sandbox.chain.blocks import GENESIS_BLOCK_ID

SANDBOX_GENESIS = GENESIS_BLOCK_ID
"""Block 0 of every sandbox chain: a ``tron_node`` connection to one names it."""
SANDBOX_USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
"""The sandbox's USDT contract (it deploys mainnet's address)."""

# A free loopback port; the service's 10 s / 60 s / 300 s waits become 0.1 / 0.6 / 3 s.
Scope = Literal["session", "package", "module", "class", "function"]
DEFAULTS: dict[str, Any] = {"port": 0, "time_scale": 0.01}


def sandbox_config(**config: Any) -> SandboxConfig:
    """A SandboxConfig: :data:`DEFAULTS`, then ``config``."""
    return SandboxConfig(**{**DEFAULTS, **config})


@contextmanager
def running_sandbox(*, clock: Callable[[], float] | None = None,
                    **config: Any) -> Iterator[SandboxServer]:
    """A started in-process sandbox, stopped on exit; ``clock`` replaces its world's clock."""
    with SandboxServer(sandbox_config(**config)) as server:
        if clock is not None:
            server.state.world.clock = clock
        yield server


def sandbox_fixture(*, scope: Scope = "function", **config: Any) -> Any:
    """A ``sandbox`` fixture: ``sandbox = sandbox_fixture(scope="module", time_scale=0.002)``.

    pytest names a fixture after the attribute it is assigned to.
    """

    @pytest.fixture(scope=scope)
    def sandbox() -> Iterator[SandboxServer]:
        with running_sandbox(**config) as server:
            yield server

    return sandbox


def connection_json(sandbox: SandboxServer, *, secret: str | None = None, webhook: bool = True,
                    **extra: object) -> str:
    """An Airflow ``tronenergy`` connection (``AIRFLOW_CONN_*`` JSON) to ``sandbox``.

    ``secret`` replaces the API secret (bad-credential tests); ``webhook`` adds the
    sandbox's webhook secret to the extras; ``extra`` adds more extras.
    """
    extras: dict[str, object] = {"webhook_secret": sandbox.webhook_secret} if webhook else {}
    return json.dumps({
        "conn_type": "tronenergy", "host": sandbox.url, "login": sandbox.api_key,
        "password": secret or sandbox.api_secret, "extra": {**extras, **extra},
    })


def default_connection(monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer,
                       **options: Any) -> str:
    """Make ``tronenergy_default`` a connection to ``sandbox`` (see :func:`connection_json`)."""
    monkeypatch.setenv("AIRFLOW_CONN_TRONENERGY_DEFAULT", connection_json(sandbox, **options))
    return "tronenergy_default"


def node_extra(**extra: object) -> dict[str, object]:
    """A ``tron_node`` connection's extras for a sandbox: a ``custom`` chain, its genesis and
    USDT named (the provider refuses any other network there); ``extra`` adds more."""
    return {"network": "custom", "genesis_block_id": SANDBOX_GENESIS,
            "usdt_contract": SANDBOX_USDT, **extra}


def node_connection_json(sandbox: SandboxServer | str, **extra: object) -> str:
    """An Airflow ``tron_node`` connection (``AIRFLOW_CONN_*`` JSON) to ``sandbox`` (a server,
    or its root URL) as the custom chain it is (:func:`node_extra`)."""
    root = sandbox if isinstance(sandbox, str) else sandbox.root_url
    return json.dumps({"conn_type": "tron_node", "host": root, "extra": node_extra(**extra)})


def _control_root(sandbox: SandboxServer | str) -> str:
    return (sandbox if isinstance(sandbox, str) else sandbox.root_url) + "/sandbox"


def create_token(sandbox: SandboxServer | str, *, symbol: str | None, decimals: int | None,
                 **figures: Any) -> str:
    """Deploy a TRC-20 token of the sandbox's own; its contract address (T...).

    ``decimals`` 0 to 255 (the provider accepts 0 to 36), ``symbol`` text: either None for a
    contract whose call reverts; ``figures``:
    ``name``, ``contract``, ``holder_energy``, ``new_holder_energy``, ``energy_factor``
    (``POST /sandbox/chain/tokens``, docs/sandbox.md).
    """
    body = {"symbol": symbol, "decimals": decimals, **figures}
    answer = requests.post(f"{_control_root(sandbox)}/chain/tokens", json=body, timeout=10)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["data"]["contract"])


def set_token_units(sandbox: SandboxServer | str, contract: str, address: str,
                    units: int) -> None:
    """``address`` holds exactly ``units`` of the token at ``contract`` (USDT too)."""
    answer = requests.post(f"{_control_root(sandbox)}/chain/tokens/{contract}/holdings",
                           json={"address": address, "units": str(units)}, timeout=10)
    assert answer.status_code == 200, answer.text


def token_units(sandbox: SandboxServer | str, contract: str, address: str) -> int:
    """What ``address`` holds of the token at ``contract`` (the chain's head state)."""
    answer = requests.get(f"{_control_root(sandbox)}/chain/tokens/{contract}/holdings/{address}",
                          timeout=10)
    assert answer.status_code == 200, answer.text
    return int(answer.json()["data"]["units"])
