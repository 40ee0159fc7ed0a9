"""Airflow hook for the TRON energy service: a connection turned into a client.

Connection fields: host = base URL including ``/v1``; login = API key;
password = API secret; extras ``webhook_secret``, ``signature_scheme``
(``v1`` or ``ts.body``), ``timeout`` (seconds, or ``[connect, read]``),
``max_retries`` (resends of idempotent calls), ``order_poll_budget`` (requests per
second that a triggerer's order waits of this connection make together), ``explorer_url``
(the block explorer the operators' links point to), and optionally
``price_rent_times`` / ``purchase_rent_times`` (lists of hours) to follow a
service whose accepted durations differ from the spec.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from decimal import Decimal
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.connection import get_async_connection
from airflow.providers.common.compat.sdk import BaseHook

from airflow_provider_tronenergy.client import (
    DEFAULT_TIMEOUT,
    RetryPolicy,
    Timeout,
    TronEnergyClient,
    TronEnergyError,
    ValidationRules,
)
from airflow_provider_tronenergy.client.bounded import DEFAULT_MAX_ANSWER_BYTES, check_limit
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.hooks import forms, lookup
from airflow_provider_tronenergy.orders.wait import (
    Log,
    OrderWatch,
    await_order,
    wait_for_order,
)
from tronenergy_protocol.explorer import Explorer, ExplorerError, explorer_of
from tronenergy_protocol.numbers import parse_decimal, parse_int
from tronenergy_protocol.signing import SCHEMES

if TYPE_CHECKING:
    from airflow.sdk import Connection

    from airflow_provider_tronenergy.client import TronEnergyAsyncClient

SERVICE_NEEDED = ("energy purchases, activations, address monitoring and order waits call the "
                  "service with this connection's URL and API key; nothing is bought without it")
"""What needs the service's connection, for the error of an id that names none."""

DEFAULT_ORDER_POLL_BUDGET = Decimal(10)
"""Requests per second per connection and triggerer process when the connection names none."""

EXTRA_SHAPE = '{"name": value, ...}'
"""How a connection's Extra is written, for the error of one that is not."""


class TronEnergyConnectionError(NotRetryable, ValueError):
    """The Airflow connection is missing a field or holds a malformed extra: bad input that
    only a person fixes, so a task fails once (not retried); the message names the
    connection, the field or extra and what it must be."""


def connection_extras(conn: Connection,
                      error: type[TronEnergyConnectionError] = TronEnergyConnectionError,
                      ) -> dict[str, Any]:
    """The connection's Extra as a JSON object, else ``error`` naming the connection and the
    fix. Airflow's ``extra_dejson`` logs an Extra that is not JSON and reads it as empty,
    which would turn each setting in it (a network, a secret, a timeout) to its default."""
    if not conn.extra:
        return {}
    try:
        parsed = json.loads(conn.extra)
    except (TypeError, ValueError) as exc:  # the position only: the text may hold a secret
        where = (f" ({exc.msg}, line {exc.lineno} column {exc.colno})"
                 if isinstance(exc, json.JSONDecodeError) else "")
        raise error(f"connection {conn.conn_id!r}: its Extra is not valid JSON{where}; "
                    f"fix it to a JSON object of extras, {EXTRA_SHAPE}") from None
    if not isinstance(parsed, dict):
        raise error(f"connection {conn.conn_id!r}: its Extra is a JSON "
                    f"{type(parsed).__name__}, not an object; fix it to a JSON object of "
                    f"extras, {EXTRA_SHAPE}")
    extras: dict[str, Any] = conn.extra_dejson  # Airflow's reading: it masks the secrets
    return extras


def _mask(*values: object) -> None:
    """Register secrets with Airflow's masker so no log line can show them."""
    from airflow.providers.common.compat.sdk import mask_secret

    for value in values:
        if isinstance(value, str) and value:
            mask_secret(value)


def _rent_times(
    extras: dict[str, Any], name: str, default: frozenset[Decimal]
) -> frozenset[Decimal]:
    raw = extras.get(name)
    if raw in (None, ""):
        return default
    if isinstance(raw, str):
        raw = [part for part in raw.replace(",", " ").split() if part]
    if not isinstance(raw, list) or not raw:
        raise TronEnergyConnectionError(f"extra {name} must be a list of hours, e.g. [0.25, 1, 24]")
    try:
        return frozenset(parse_decimal(value, name) for value in raw)
    except ValueError:
        raise TronEnergyConnectionError(
            f"extra {name} must hold numbers of hours in ASCII digits") from None


def _timeout(extras: dict[str, Any], default: Timeout = DEFAULT_TIMEOUT) -> Timeout:
    """Extra ``timeout``: seconds, ``[connect, read]`` or ``[connect, read, total]``."""
    raw = extras.get("timeout")
    if raw in (None, ""):
        return default
    try:
        if isinstance(raw, list) and len(raw) in (2, 3):
            return Timeout.of(tuple(float(parse_decimal(part, "timeout"))  # seconds, not money
                                    for part in raw))
        return Timeout.of(float(parse_decimal(raw, "timeout")))  # ASCII digits only
    except (TypeError, ValueError) as exc:
        raise TronEnergyConnectionError(f"extra timeout is invalid: {exc}") from None


def _max_answer_bytes(extras: dict[str, Any], default: int) -> int:
    """Extra ``max_answer_bytes``: the largest answer a call reads, decompressed."""
    raw = extras.get("max_answer_bytes")
    if raw in (None, ""):
        return default
    try:
        return check_limit(parse_int(raw, "max_answer_bytes"))
    except (TypeError, ValueError):
        raise TronEnergyConnectionError(
            "extra max_answer_bytes must be a positive whole number of bytes") from None


def _webhook_secret(conn: Connection, extras: dict[str, Any]) -> str | None:
    """Extra ``webhook_secret``: text, or None when absent or empty."""
    secret = extras.get("webhook_secret")
    if secret in (None, ""):
        return None
    if not isinstance(secret, str):
        raise TronEnergyConnectionError(
            f"connection {conn.conn_id!r}: extra webhook_secret must be text (the secret, or "
            f"\"new,old\" while rotating), not {type(secret).__name__}")
    return secret


def connection_explorer(conn: Connection,
                        error: type[TronEnergyConnectionError]) -> Explorer:
    """A connection's ``explorer_url`` extra, checked; ``error`` names the connection."""
    extras = connection_extras(conn, error)
    try:
        return explorer_of(extras.get("explorer_url"))
    except ExplorerError as exc:
        raise error(f"connection {conn.conn_id!r}: extra {exc}") from None


@dataclass(frozen=True, kw_only=True)
class ClientSettings(Mapping[str, Any]):
    """A client's keyword arguments, read from a connection: ``TronEnergyClient(**settings)``.

    A mapping, so it splats into either client; the API key and secret are left out of its
    repr, and so out of ``str()``, f-strings, log lines and exception messages that show it.
    """

    base_url: str
    api_key: str = field(repr=False)
    api_secret: str = field(repr=False)
    signature_scheme: str
    timeout: Timeout
    retry: RetryPolicy
    rules: ValidationRules
    max_answer_bytes: int

    def __getitem__(self, key: str) -> Any:
        if key not in self._names():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def _names(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self))


class TronEnergyHook(BaseHook):
    """Signed, typed, retry-safe access to the service from Airflow tasks and triggers.

    Like ``HttpHook`` / ``HttpAsyncHook``, the hook hands out clients rather than
    repeating their methods: :meth:`get_conn` gives the hook's one
    :class:`TronEnergyClient` (``hook.get_conn().get_order(...)``), :meth:`aget_client`
    a :class:`TronEnergyAsyncClient` for triggers. What the hook adds of its own is
    waiting for an order, the webhook secret and the UI's connection test.

    :param tronenergy_conn_id: an Airflow connection of type ``tronenergy``; one that names
        no connection is a :class:`~..errors.ConnectionMissing` (never retried) at the
        first use, naming ``setting`` and ``needs`` (``hooks.lookup``).
    """

    conn_name_attr = "tronenergy_conn_id"
    default_conn_name = "tronenergy_default"
    conn_type = "tronenergy"
    hook_name = "TRON Energy"

    def __init__(self, tronenergy_conn_id: str = default_conn_name, *,
                 needs: str = SERVICE_NEEDED, setting: str = conn_name_attr,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tronenergy_conn_id = tronenergy_conn_id
        self._needs, self._setting = needs, setting  # what a missing connection's error says

    def __repr__(self) -> str:
        return f"TronEnergyHook(tronenergy_conn_id={self.tronenergy_conn_id!r})"

    # -- connection ---------------------------------------------------------------------

    @classmethod
    def client_settings(cls, conn: Connection) -> ClientSettings:
        """Keyword arguments for a client, read and checked from a connection."""
        extras = connection_extras(conn)
        name = conn.conn_id
        base_url = (conn.host or "").rstrip("/")
        if not base_url.startswith(("http://", "https://")):
            raise TronEnergyConnectionError(
                f"connection {conn.conn_id!r}: host must be the service's base URL with "
                "its scheme and /v1, e.g. https://api.example.com/v1"
            )
        if not conn.login or not conn.password:
            raise TronEnergyConnectionError(
                f"connection {conn.conn_id!r}: login (API key) and password (API secret) "
                "are required"
            )
        _mask(conn.login, conn.password, _webhook_secret(conn, extras))
        scheme = extras.get("signature_scheme") or "v1"
        if not isinstance(scheme, str) or scheme not in SCHEMES:
            raise TronEnergyConnectionError(
                f"connection {name!r}: extra signature_scheme must be one of "
                f"{', '.join(SCHEMES)}"
            )
        raw_retries = extras.get("max_retries")
        try:
            max_retries = 3 if raw_retries in (None, "") else parse_int(raw_retries, "max_retries")
        except (TypeError, ValueError):
            raise TronEnergyConnectionError(
                f"connection {name!r}: extra max_retries must be an integer") from None
        if max_retries < 0:
            raise TronEnergyConnectionError(
                f"connection {name!r}: extra max_retries must not be negative")
        defaults = ValidationRules()
        try:
            purchase = _rent_times(extras, "purchase_rent_times", defaults.buy_rent_times)
            rules = ValidationRules(
                price_rent_times=_rent_times(extras, "price_rent_times",
                                             defaults.price_rent_times),
                buy_rent_times=purchase,
                auto_buy_rent_times=purchase,
                buy_count_rent_times=purchase,
                smart_buy_rent_times=purchase,
            )
            timeout = _timeout(extras)
            limit = _max_answer_bytes(extras, DEFAULT_MAX_ANSWER_BYTES)
        except TronEnergyConnectionError as exc:
            raise TronEnergyConnectionError(f"connection {name!r}: {exc}") from None
        cls.order_poll_budget(conn)  # a bad one fails every task now, not a wait after buying
        cls.explorer(conn)  # likewise: not a link missing after the money moved
        return ClientSettings(
            base_url=base_url,
            api_key=conn.login,
            api_secret=conn.password,
            signature_scheme=scheme,
            timeout=timeout,
            retry=RetryPolicy(max_attempts=max_retries + 1),
            rules=rules,
            max_answer_bytes=limit,
        )

    @classmethod
    def order_poll_budget(cls, conn: Connection) -> float:
        """Extra ``order_poll_budget``: requests per second for the triggerer's order waits.

        Shared by every deferred wait of the connection in one triggerer process
        (:mod:`~airflow_provider_tronenergy.orders.poll`); default 10.
        """
        raw = connection_extras(conn).get("order_poll_budget")
        try:
            budget = DEFAULT_ORDER_POLL_BUDGET if raw in (None, "") else parse_decimal(
                raw, "order_poll_budget")
        except (TypeError, ValueError):
            raise TronEnergyConnectionError(
                f"connection {conn.conn_id!r}: extra order_poll_budget must be a number of "
                "requests per second in ASCII digits") from None
        if not budget.is_finite() or budget <= 0:
            raise TronEnergyConnectionError(
                f"connection {conn.conn_id!r}: extra order_poll_budget must be positive")
        return float(budget)  # a rate, not money

    @classmethod
    def explorer(cls, conn: Connection) -> Explorer:
        """Extra ``explorer_url``: the block explorer of the chain the service sends on
        (the operators' links to its delegations and activations); default mainnet TronScan."""
        return connection_explorer(conn, TronEnergyConnectionError)

    def connection(self) -> Connection:
        """This hook's connection; an id that names none is a
        :class:`~..errors.ConnectionMissing` (``hooks.lookup``), never retried."""
        return lookup.existing(self.get_connection, self.tronenergy_conn_id,
                               setting=self._setting, needs=self._needs)

    async def aconnection(self) -> Connection:
        """:meth:`connection` for triggers (Airflow's async lookup)."""
        return await lookup.aexisting(
            lambda conn_id: get_async_connection(conn_id, hook=self), self.tronenergy_conn_id,
            setting=self._setting, needs=self._needs)

    def get_explorer(self) -> Explorer:
        """The explorer of this hook's connection (:meth:`explorer`)."""
        return self.explorer(self.connection())

    def get_conn(self) -> TronEnergyClient:
        """One client per hook instance, reused: one connection pool for all calls."""
        return self._client

    @cached_property
    def _client(self) -> TronEnergyClient:
        conn = self.connection()
        return TronEnergyClient(**self.client_settings(conn))

    async def aget_client(self) -> TronEnergyAsyncClient:
        """An async client for triggers; the caller closes it (``async with``)."""
        from airflow_provider_tronenergy.client.aio import TronEnergyAsyncClient

        conn = await self.aconnection()
        return TronEnergyAsyncClient(**self.client_settings(conn))

    async def apoll_client(self) -> tuple[TronEnergyAsyncClient, float]:
        """The client of the connection's shared order poller, and its budget (requests/s).

        The wait reads again on its own schedule: a resend inside the client would be a
        request the budget never saw, so this client makes one attempt per call.
        """
        from airflow_provider_tronenergy.client.aio import TronEnergyAsyncClient

        conn = await self.aconnection()
        per_second = self.order_poll_budget(conn)
        settings = replace(self.client_settings(conn), retry=RetryPolicy(max_attempts=1))
        return TronEnergyAsyncClient(**settings), per_second

    def get_webhook_secret(self) -> str | None:
        """The key-level webhook secret from the connection's extras (masked in logs)."""
        conn = self.connection()
        secret = _webhook_secret(conn, connection_extras(conn))
        _mask(secret)
        return secret

    # -- waiting for an order (the one implementation tasks, sensors and triggers use) ----

    def wait_for_order(self, order_id: str, *, poll_interval: float, timeout: float,
                       log: Log | None = None,
                       ) -> dict[str, Any]:
        """Block until the order ends or ``timeout`` seconds pass; the outcome as an event.

        The event is :func:`~airflow_provider_tronenergy.orders.wait.order_event`'s
        shape (``success``, ``failed``, ``cancelled``, ``timeout`` or ``error``), the same
        the deferred wait (:meth:`await_order`) fires.
        """
        watch = OrderWatch(order_id, poll_interval=poll_interval, end_time=time.time() + timeout,
                           log=log or self.log, conn_id=self.tronenergy_conn_id)
        return wait_for_order(self.get_conn().get_order, watch)

    async def await_order(self, order_id: str, *, poll_interval: float, end_time: float,
                          log: Log | None = None,
                          ) -> dict[str, Any]:
        """The async wait (for triggers) until epoch ``end_time``.

        Reads go through the connection's shared
        :class:`~airflow_provider_tronenergy.orders.poll.OrderPoller`: one client,
        one request budget and one 429 pause for every wait of the connection in
        this triggerer.
        """
        from airflow_provider_tronenergy.orders.poll import shared_poller

        watch = OrderWatch(order_id, poll_interval=poll_interval, end_time=end_time,
                           log=log or self.log, conn_id=self.tronenergy_conn_id)
        async with shared_poller(self.tronenergy_conn_id, self.apoll_client) as poller:
            return await await_order(poller.get_order, watch)

    def close(self) -> None:
        """Close the hook's client (its connection pool); the next call opens a new one."""
        if "_client" in self.__dict__:
            self.__dict__.pop("_client").close()

    def test_connection(self) -> tuple[bool, str]:
        """The UI's Test button: one signed GET of the account."""
        try:
            account = self.get_conn().get_account()
        except (TronEnergyError, TronEnergyConnectionError, ValueError) as exc:
            return False, str(exc)
        return True, (
            f"Connected as {account.username}: available balance "
            f"{account.available_balance} TRX"
        )

    # -- connection form ----------------------------------------------------------------

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """Form layout for Airflow releases that read it from the hook (< 3.2): the form
        provider info gives 3.2+ (``hooks.forms``), the extras in the Extra JSON placeholder."""
        return forms.SERVICE.legacy_behaviour()
