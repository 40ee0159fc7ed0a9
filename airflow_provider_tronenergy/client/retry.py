"""When a failed call may be sent again, and how long to wait first.

The rule that protects money: a call that moves money is resent only when the
request provably never reached the server. Anything else (a timeout while
waiting for the answer, a connection dropped after sending, a 5xx) may have
bought energy already, so it ends in :class:`AmbiguousPurchaseError` instead.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from airflow_provider_tronenergy.client.errors import (
    RateLimitedError,
    ServerError,
    ServiceUnreachableError,
    TransportError,
    TronEnergyError,
    UnexpectedResponseError,
    ValidationError,
)
from tronenergy_protocol.codes import lookup


class Safety(Enum):
    """What resending a call could do."""

    IDEMPOTENT = "idempotent"  # reads, check-address, monitor delete: resend freely
    UNSAFE = "unsafe"  # changes state but moves no money (add monitored address)
    MONEY = "money"  # the four buys, activate, non-idempotent generic requests


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts and waits for resending; ``max_attempts=1`` turns resending off.

    Waits grow exponentially from ``initial_wait`` with jitter, capped at
    ``max_wait``. A 429 waits at least its ``Retry-After``; when that is longer
    than ``max_wait`` the :class:`RateLimitedError` is raised at once instead.
    """

    max_attempts: int = 4
    initial_wait: float = 0.5
    max_wait: float = 10.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("RetryPolicy: max_attempts must be at least 1")
        if self.initial_wait < 0 or self.max_wait < 0:
            raise ValueError("RetryPolicy: waits must not be negative")

    def should_retry(self, safety: Safety, error: BaseException) -> bool:
        if isinstance(error, ServiceUnreachableError):
            return True
        if safety is not Safety.IDEMPOTENT:
            return False
        if isinstance(error, RateLimitedError):
            return error.retry_after is None or error.retry_after <= self.max_wait
        return isinstance(error, (TransportError, ServerError))

    def wait_seconds(self, error: BaseException | None, attempt_number: int) -> float:
        """Pause before the next attempt (``attempt_number`` = attempts made so far)."""
        ceiling = min(self.max_wait, self.initial_wait * 2.0 ** max(attempt_number - 1, 0))
        wait = ceiling / 2 + random.uniform(0, ceiling / 2)
        if isinstance(error, RateLimitedError) and error.retry_after is not None:
            wait = max(wait, error.retry_after)
        return wait

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome is not None else None
        return self.wait_seconds(error, state.attempt_number)

    def _settings(self, safety: Safety) -> dict[str, Any]:
        """The tenacity settings, the same for the sync and the async loop."""
        return {
            "stop": stop_after_attempt(self.max_attempts),
            "wait": self._wait,
            "retry": retry_if_exception(lambda error: self.should_retry(safety, error)),
            "reraise": True,
        }

    def retrying(self, safety: Safety) -> Retrying:
        return Retrying(**self._settings(safety))

    def async_retrying(self, safety: Safety) -> AsyncRetrying:
        return AsyncRetrying(**self._settings(safety))


REFUSAL_STATUSES: Final = frozenset({400, 401, 402, 403, 404, 405, 409, 410, 411, 413, 414,
                                     415, 422, 429, 431})
"""Statuses that say the request was refused as it came. Not 408 or 499 (a proxy may have
forwarded it already), nor any 4xx this list lacks: those are unknown outcomes."""


def provably_not_processed(error: TronEnergyError) -> bool:
    """True when the service certainly did not act on the request that led to ``error``.

    The table, row by row, is in docs/money-safety.md; whatever it does not list is
    an unknown outcome.
    """
    if isinstance(error, (ServiceUnreachableError, ValidationError)):
        return True
    if isinstance(error, (TransportError, ServerError, UnexpectedResponseError)):
        return False
    status = error.status
    if status is None:
        return False
    known = lookup(error.code)
    if known is not None and int(known) >= 50000:
        return False  # a failure code under a refusal status says two things
    if status in REFUSAL_STATUSES:
        return True
    # A 2xx with ``success: false`` and a known refusal code: the envelope refuses.
    return 200 <= status < 300 and known is not None
