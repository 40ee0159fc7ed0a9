"""What both clients share: set-up and settings.

Each client (:mod:`.sync`, :mod:`.aio`) writes out its own endpoint methods, one
line each, over the definitions in :mod:`.endpoints`; ``tests/client/test_client_parity.py``
holds the two to the same methods and signatures as those definitions.
"""

from __future__ import annotations

from airflow_provider_tronenergy.client.bounded import DEFAULT_MAX_ANSWER_BYTES, check_limit
from airflow_provider_tronenergy.client.core import (
    DEFAULT_POOL_SIZE,
    DEFAULT_TIMEOUT,
    RequestCore,
    Timeout,
)
from airflow_provider_tronenergy.client.endpoints import Endpoints
from airflow_provider_tronenergy.client.errors import ValidationError
from airflow_provider_tronenergy.client.retry import RetryPolicy
from airflow_provider_tronenergy.client.validation import ValidationRules


class ClientBase:
    """Settings of both clients.

    A transport adds ``_connect``, ``run``, ``_walk`` and the endpoint methods.
    ``base_url`` includes the version prefix (``https://host/v1``). Every attempt
    ends within ``timeout.overall`` seconds and reads at most ``max_answer_bytes``
    of answer (decompressed); past either, a money-moving call's outcome is unknown.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        api_secret: str,
        *,
        signature_scheme: str = "v1",
        timeout: float | tuple[float, ...] | Timeout = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        rules: ValidationRules | None = None,
        pool_size: int = DEFAULT_POOL_SIZE,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
    ) -> None:
        self._core = RequestCore(base_url, api_key, api_secret, signature_scheme)
        self._api = Endpoints(rules)
        self.timeout = Timeout.of(timeout)
        try:
            self.max_answer_bytes = check_limit(max_answer_bytes)
        except ValueError as exc:
            raise ValidationError("max_answer_bytes", "must be a positive number of bytes") \
                from exc
        self.retry = retry or RetryPolicy()
        self._connect(pool_size)

    def _connect(self, pool_size: int) -> None:
        """Open the transport's connection pool."""
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        """Where calls go, version prefix included (``https://host/v1``)."""
        return self._core.base_url

    @property
    def signature_scheme(self) -> str:
        """How requests are signed: ``"v1"`` or ``"ts.body"``."""
        return self._core.signature_scheme

    @property
    def rules(self) -> ValidationRules:
        """The argument checks this client applies (callers can check early with them)."""
        return self._api.rules

    @property
    def endpoints(self) -> Endpoints:
        """The endpoint definitions under this client's rules: each returns a checked ``Call``.

        Build a call where its values enter and hand it to ``run`` later: the values
        are checked once, and what is sent is exactly what was checked.
        """
        return self._api

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(base_url={self.base_url!r}, "
                f"signature_scheme={self.signature_scheme!r})")
