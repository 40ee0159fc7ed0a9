"""A faithful local emulator of the energy-rental and monitoring service.

Start it with ``tronenergy-sandbox`` (or ``python -m airflow_provider_tronenergy.sandbox``),
or in-process with :class:`SandboxServer`. It shares only protocol code with the
client: signing, the address codec and the error-code table.
"""

from __future__ import annotations

from airflow_provider_tronenergy.sandbox.server import SandboxServer
from airflow_provider_tronenergy.sandbox.state import SandboxConfig

__all__ = ["SandboxConfig", "SandboxServer"]
