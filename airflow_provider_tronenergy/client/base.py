"""What both clients share: set-up, settings, and every public endpoint method, declared once.

Each public endpoint method is declared here from its definition in
:mod:`.endpoints`, whose signature, defaults and docstring are the contract.
When a transport subclasses :class:`ClientBase` and defines ``_run``, each
declaration becomes a real method of that class: a plain function when ``_run``
is plain, a coroutine function when it is ``async``. Type checkers see the same
through the declarations' overloaded ``__get__`` (``Purchase`` on the sync
client, an awaitable of ``Purchase`` on the async one), so the two clients
cannot drift and neither is written by hand.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload

from airflow_provider_tronenergy.client.bounded import DEFAULT_MAX_ANSWER_BYTES, check_limit
from airflow_provider_tronenergy.client.core import (
    DEFAULT_POOL_SIZE,
    DEFAULT_TIMEOUT,
    Call,
    RequestCore,
    Timeout,
)
from airflow_provider_tronenergy.client.endpoints import Endpoints, PageWalk
from airflow_provider_tronenergy.client.errors import ValidationError
from airflow_provider_tronenergy.client.models import MonitoredAddress
from airflow_provider_tronenergy.client.retry import RetryPolicy
from airflow_provider_tronenergy.client.validation import ValidationRules

P = ParamSpec("P")
T = TypeVar("T")
_CALL_OF = re.compile(r"Call\[(.*)\]")


class SyncTransport(Protocol):
    """A client whose ``_run`` answers at once."""

    def _run(self, call: Call[T], /) -> T: ...

    def _walk(self, walk: PageWalk, /) -> Iterator[MonitoredAddress]: ...


class AsyncTransport(Protocol):
    """A client whose ``_run`` is awaited."""

    def _run(self, call: Call[T], /) -> Coroutine[Any, Any, T]: ...

    def _walk(self, walk: PageWalk, /) -> AsyncIterator[MonitoredAddress]: ...


class _Declared:
    """One public method, declared from its endpoint definition; transports bind it."""

    name = ""

    def __init__(self, build: Callable[..., Any]) -> None:
        self.build = build
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    def method(self, asynchronous: bool) -> Callable[..., Any]:
        raise NotImplementedError

    def _unbound(self, obj: object) -> Any:
        """Class access gives the declaration; a transport's instance never gets here."""
        if obj is None:
            return self
        raise TypeError(f"{type(obj).__name__} is no transport: it defines no _run")

    def _as_method(self, method: Callable[..., Any], returns: str) -> Callable[..., Any]:
        """``method`` with the definition's name, docstring and signature, returning ``returns``."""
        signature = inspect.signature(self.build).replace(return_annotation=returns)
        method.__name__ = self.name
        method.__doc__ = self.build.__doc__
        method.__signature__ = signature  # type: ignore[attr-defined]
        method.__annotations__ = {
            **{p.name: p.annotation for p in signature.parameters.values()
               if p.annotation is not p.empty},
            "return": returns,
        }
        return method


class endpoint(_Declared, Generic[P, T]):  # lower case, like property
    """A method that runs one call: ``T`` on the sync client, awaited on the async one."""

    def __init__(self, build: Callable[Concatenate[Endpoints, P], Call[T]]) -> None:
        super().__init__(build)

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> endpoint[P, T]: ...

    @overload
    def __get__(
        self, obj: AsyncTransport, owner: type[Any]
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    @overload
    def __get__(self, obj: SyncTransport, owner: type[Any]) -> Callable[P, T]: ...

    def __get__(self, obj: Any, owner: type[Any]) -> Any:
        return self._unbound(obj)

    def method(self, asynchronous: bool) -> Callable[..., Any]:
        build = self.build
        returned = inspect.signature(build).return_annotation
        match = _CALL_OF.fullmatch(str(returned))
        returns = match.group(1) if match else "Any"

        async def awaited(self: Any, /, *args: Any, **kwargs: Any) -> Any:
            return await self._run(build(self._api, *args, **kwargs))

        def direct(self: Any, /, *args: Any, **kwargs: Any) -> Any:
            return self._run(build(self._api, *args, **kwargs))

        return self._as_method(awaited if asynchronous else direct, returns)


class walk(_Declared, Generic[P]):  # lower case, like property
    """A method that walks every page: an iterator, or an async iterator on the async client."""

    def __init__(self, build: Callable[Concatenate[Endpoints, P], PageWalk]) -> None:
        super().__init__(build)

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> walk[P]: ...

    @overload
    def __get__(
        self, obj: AsyncTransport, owner: type[Any]
    ) -> Callable[P, AsyncIterator[MonitoredAddress]]: ...

    @overload
    def __get__(
        self, obj: SyncTransport, owner: type[Any]
    ) -> Callable[P, Iterator[MonitoredAddress]]: ...

    def __get__(self, obj: Any, owner: type[Any]) -> Any:
        return self._unbound(obj)

    def method(self, asynchronous: bool) -> Callable[..., Any]:
        build = self.build

        def walking(self: Any, /, *args: Any, **kwargs: Any) -> Any:
            return self._walk(build(self._api, *args, **kwargs))

        iterator = "AsyncIterator" if asynchronous else "Iterator"
        return self._as_method(walking, f"{iterator}[MonitoredAddress]")


class ClientBase:
    """Settings and endpoint methods of both clients.

    A transport adds ``_connect``, ``_run`` and ``_walk``. ``base_url`` includes
    the version prefix (``https://host/v1``). Every attempt ends within
    ``timeout.overall`` seconds and reads at most ``max_answer_bytes`` of answer
    (decompressed); past either, a money-moving call's outcome is unknown.
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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Bind every declared endpoint method to a transport, sync or async as its ``_run``."""
        super().__init_subclass__(**kwargs)
        if "_run" not in vars(cls):
            return
        asynchronous = inspect.iscoroutinefunction(vars(cls)["_run"])
        for name, declared in vars(ClientBase).items():
            if isinstance(declared, _Declared) and name not in vars(cls):
                method = declared.method(asynchronous)
                method.__qualname__ = f"{cls.__qualname__}.{name}"
                method.__module__ = cls.__module__
                setattr(cls, name, method)

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

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(base_url={self.base_url!r}, "
                f"signature_scheme={self.signature_scheme!r})")

    # -- energy ---------------------------------------------------------------------
    get_account = endpoint(Endpoints.get_account)
    get_price = endpoint(Endpoints.get_price)
    buy_energy = endpoint(Endpoints.buy_energy)
    auto_buy_energy = endpoint(Endpoints.auto_buy_energy)
    buy_energy_by_count = endpoint(Endpoints.buy_energy_by_count)
    smart_buy_energy = endpoint(Endpoints.smart_buy_energy)
    check_address = endpoint(Endpoints.check_address)
    activate_address = endpoint(Endpoints.activate_address)
    get_order = endpoint(Endpoints.get_order)
    # -- monitoring -----------------------------------------------------------------
    get_monitor_stats = endpoint(Endpoints.get_monitor_stats)
    list_monitored_addresses = endpoint(Endpoints.list_monitored_addresses)
    iter_monitored_addresses = walk(Endpoints.iter_monitored_addresses)
    add_monitored_address = endpoint(Endpoints.add_monitored_address)
    remove_monitored_address = endpoint(Endpoints.remove_monitored_address)
    # -- anything else ----------------------------------------------------------------
    request = endpoint(Endpoints.request)
