"""The node's errors, apart from the service's: a chain read that fails says nothing about
the service. Its own module, so that the client and the transport it builds both raise it
without importing each other."""

from __future__ import annotations

from airflow_provider_tronenergy.errors import Retryable, TronEnergyProviderError


class NodeError(TronEnergyProviderError):
    """A node call failed, or its answer could not be read. Never carries a URL or a key.

    The root of the node's errors, apart from the service's ``TronEnergyError``: a
    chain read that fails says nothing about the service. ``status`` is the node's
    HTTP status when it answered, ``path`` the call (``wallet/getaccount``).
    """

    def __init__(self, message: str, *, status: int | None = None,
                 path: str | None = None) -> None:
        super().__init__(message if status is None else f"{message} (HTTP {status})")
        self.status = status
        self.path = path


class UnreliableNode(NodeError, Retryable):
    """A node answered what the chain cannot hold together: a block ahead of this worker's
    clock, one older than a block already seen, a header its own block-by-number read
    contradicts, or a receipt its block does not hold. Nothing is signed or judged on it;
    retryable (the next try may meet a node that tells the truth)."""
