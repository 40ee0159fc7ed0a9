"""The refusal every part of the sandbox raises; the app turns it into an error envelope."""

from __future__ import annotations

from airflow_provider_tronenergy.protocol.codes import ErrorCode


class WorldError(Exception):
    """A request the service refuses; carries the envelope code and message."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
