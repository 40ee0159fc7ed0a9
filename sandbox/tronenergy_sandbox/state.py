"""Configuration and the live objects one sandbox process holds."""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from tronenergy_sandbox.credentials import Credentials
from tronenergy_sandbox.faults import FaultRegistry
from tronenergy_sandbox.world import World

if TYPE_CHECKING:
    from tronenergy_sandbox.chain.producer import BlockProducer
    from tronenergy_sandbox.dispatcher import Dispatcher

log = logging.getLogger(__name__)

STATE_FILE_MODE = 0o600
"""The state file holds the API key, the API secret and the webhook secret: owner only."""


@dataclass(frozen=True)
class SandboxConfig:
    host: str = "127.0.0.1"
    port: int = 8900
    api_key: str | None = None
    api_secret: str | None = None
    webhook_secret: str | None = None
    balance: Decimal = Decimal("1000")
    time_scale: float = 1.0
    state: str | None = None
    signature_scheme: str | None = None
    webhook_url: str | None = None
    allow_remote_control: bool = False
    callback_timeout: float = 5.0
    seed: int | None = None
    forwarded_allow_ips: str | None = None
    """Proxies whose X-Forwarded-For is believed; None (default): nobody's."""
    usdt_contract: str = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
    """The USDT contract the node API answers for (mainnet's address by default)."""
    node_estimate_energy: bool = True
    """Whether the node API offers ``wallet/estimateenergy`` (many nodes do not)."""
    resource_recovery: bool = True
    """Whether energy and bandwidth usage recover over java-tron's 24 h window. Off: usage only
    grows (the sandbox before issue 37), for benches that compare the two."""

    def __repr__(self) -> str:  # never show the secrets
        return (f"SandboxConfig(host={self.host!r}, port={self.port}, state={self.state!r}, "
                f"time_scale={self.time_scale})")


@dataclass
class SandboxState:
    config: SandboxConfig
    world: World
    credentials: Credentials
    faults: FaultRegistry
    dispatcher: Dispatcher | None = field(default=None)
    producer: BlockProducer | None = field(default=None)

    @classmethod
    def build(cls, config: SandboxConfig) -> SandboxState:
        from tronenergy_sandbox.pricing import trx_to_sun

        if config.state:
            protect_state_file(config.state)
        world = World(config.state, balance_sun=trx_to_sun(config.balance),
                      time_scale=config.time_scale)
        world.usdt_contract = config.usdt_contract
        world.recovers = config.resource_recovery
        credentials = world.credentials(
            api_key=config.api_key,
            api_secret=config.api_secret,
            webhook_secret=config.webhook_secret,
            signature_scheme=config.signature_scheme,
            webhook_url=config.webhook_url,
        )
        return cls(config=config, world=world, credentials=credentials,
                   faults=FaultRegistry(config.seed))


def protect_state_file(path: str) -> None:
    """Create the state file owner-only (0600) before SQLite opens it, or tighten an old one.

    SQLite creates a missing file with the process's umask (usually 0644: readable
    by every local user) and gives its ``-wal`` and ``-shm`` files the database
    file's mode; those hold the same pages. Created here first with 0600 (never
    wider, whatever the umask), all three stay owner-only. A file an older
    release left 0644 is tightened, with a warning.
    """
    if path == ":memory:" or path.startswith("file:"):
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, STATE_FILE_MODE)
    os.close(fd)
    for name in (path, f"{path}-wal", f"{path}-shm", f"{path}-journal"):
        try:
            mode = os.stat(name).st_mode & 0o777
        except FileNotFoundError:
            continue
        if mode & ~STATE_FILE_MODE:
            with contextlib.suppress(PermissionError):
                os.chmod(name, STATE_FILE_MODE)
                log.warning("sandbox state file %s was readable by others (mode %o): "
                            "now %o", name, mode, STATE_FILE_MODE)
