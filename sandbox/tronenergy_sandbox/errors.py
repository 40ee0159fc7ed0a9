"""The refusals the sandbox raises: the app turns each into an error answer."""

from __future__ import annotations

from tronenergy_protocol.codes import ErrorCode
from tronenergy_protocol.errors import TronEnergyProviderError


class SandboxError(TronEnergyProviderError):
    """Base of the emulated service's refusals."""


class WorldError(SandboxError):
    """A request the service refuses; carries the envelope code and message."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
