"""A faithful local emulator of the energy-rental and monitoring service.

Start it with ``tronenergy-sandbox`` (or ``python -m tronenergy_sandbox``),
or in-process with :class:`SandboxServer`. It shares only protocol code with the
client: signing, the address codec and the error-code table.

What lives here:

- ``world``: :class:`World`, the emulated service's state, one entry point joining
  ``database`` (SQLite connection, schema, transactions, meta values),
  ``credentials``, ``chain/`` (the TRON chain: accounts, blocks, signed
  transactions and their charging, its node routes and control API), ``account``
  (balance and frozen cost), ``orders``, ``monitoring`` and ``deliveries``
  (callback queue and retries); ``errors`` holds the refusal they raise;
- ``pricing``: the price list and energy rules; ``params``: request-field parsing;
- ``api`` (/v1), ``control`` (/sandbox), ``node`` (the node's account and contract
  reads), ``schemas`` (OpenAPI models), ``jsonout``
  (exact-decimal JSON), ``faults`` (fault injection), ``dispatcher`` (callback
  delivery), ``app`` (the ASGI app), ``state`` (config and live objects);
- ``server`` (in-process), ``process`` (subprocess), ``cli`` and ``__main__``.
"""

from __future__ import annotations

from tronenergy_sandbox.server import SandboxServer
from tronenergy_sandbox.state import SandboxConfig

__all__ = ["SandboxConfig", "SandboxServer"]
