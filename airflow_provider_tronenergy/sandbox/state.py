"""Configuration and the live objects one sandbox process holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from airflow_provider_tronenergy.sandbox.faults import FaultRegistry
from airflow_provider_tronenergy.sandbox.world import Credentials, World

if TYPE_CHECKING:
    from airflow_provider_tronenergy.sandbox.dispatcher import Dispatcher


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

    @classmethod
    def build(cls, config: SandboxConfig) -> SandboxState:
        from airflow_provider_tronenergy.sandbox.pricing import trx_to_sun

        world = World(config.state, balance_sun=trx_to_sun(config.balance),
                      time_scale=config.time_scale)
        credentials = world.credentials(
            api_key=config.api_key,
            api_secret=config.api_secret,
            webhook_secret=config.webhook_secret,
            signature_scheme=config.signature_scheme,
            webhook_url=config.webhook_url,
        )
        return cls(config=config, world=world, credentials=credentials,
                   faults=FaultRegistry(config.seed))
