"""The two clients say what ``Endpoints`` says: same methods, parameters, docstrings and types.

Each client writes out one short method per :class:`Endpoints` definition; these
tests fail as soon as a method is missing on either client, takes other
parameters or defaults than its definition, forwards them wrongly, loses its
docstring, or is of the wrong kind (plain vs coroutine).
"""

from __future__ import annotations

import asyncio
import inspect
import textwrap
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import pytest

from airflow_provider_tronenergy.client import (
    MonitoredAddress,
    TronEnergyAsyncClient,
    TronEnergyClient,
)
from airflow_provider_tronenergy.client.core import Call
from airflow_provider_tronenergy.client.endpoints import Endpoints, PageWalk

# Names that differ on purpose: asyncio's own spelling of close.
ASYNC_NAME = {"close": "aclose"}
# Methods that return an iterator: an async iterator on the async client (not awaited).
ITERATORS = {"iter_monitored_addresses"}


def public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def drift(sync_cls: type, async_cls: type) -> list[str]:
    """Every difference between the two clients' public surfaces, as readable lines."""
    problems: list[str] = []
    expected = {ASYNC_NAME.get(name, name) for name in public(sync_cls)}
    for name in sorted(expected ^ public(async_cls)):
        problems.append(f"{name}: only on one client")
    for name in sorted(public(sync_cls)):
        async_name = ASYNC_NAME.get(name, name)
        mine, theirs = getattr(sync_cls, name, None), getattr(async_cls, async_name, None)
        if theirs is None:
            continue
        problems.extend(f"{name}: {problem}" for problem in _pair(name, mine, theirs))
    return problems


def _pair(name: str, mine: Any, theirs: Any) -> Iterator[str]:
    if isinstance(mine, property) or isinstance(theirs, property):
        if not (isinstance(mine, property) and isinstance(theirs, property)):
            yield "a property on one client only"
        elif inspect.getdoc(mine) != inspect.getdoc(theirs):
            yield "property docstrings differ"
        return
    if not inspect.getdoc(mine):
        yield "no docstring (the method's contract)"
    if inspect.getdoc(mine) != inspect.getdoc(theirs):
        yield "docstrings differ"
    if inspect.iscoroutinefunction(mine):
        yield "the sync method is a coroutine function"
    if name in ITERATORS:
        if inspect.iscoroutinefunction(theirs):
            yield "the async iterator method must not be awaited"
    elif not inspect.iscoroutinefunction(theirs):
        yield "the async method is not a coroutine function"
    sync_sig, async_sig = inspect.signature(mine), inspect.signature(theirs)
    sync_params = [(p.name, p.kind, p.default, p.annotation)
                   for p in sync_sig.parameters.values()]
    async_params = [(p.name, p.kind, p.default, p.annotation)
                    for p in async_sig.parameters.values()]
    if sync_params != async_params:
        yield f"parameters differ: {sync_sig} vs {async_sig}"
    returns = str(sync_sig.return_annotation)
    if name in ITERATORS:
        returns = returns.replace("Iterator[", "AsyncIterator[", 1)
    if name in ASYNC_NAME:
        returns = str(async_sig.return_annotation)  # close/aclose: both None
    if returns != str(async_sig.return_annotation):
        yield f"return types differ: {sync_sig.return_annotation} vs {async_sig.return_annotation}"


def test_sync_and_async_clients_have_not_drifted() -> None:
    assert drift(TronEnergyClient, TronEnergyAsyncClient) == []


ENDPOINTS = sorted(name for name, value in vars(Endpoints).items()
                   if not name.startswith("_") and inspect.isfunction(value))


def returns_of(endpoint: str, asynchronous: bool) -> Any:
    """What the client method returns: the model the endpoint's ``Call`` parses, or the walk."""
    annotation = get_type_hints(getattr(Endpoints, endpoint))["return"]
    if annotation is PageWalk:
        return (AsyncIterator if asynchronous else Iterator)[MonitoredAddress]
    assert get_origin(annotation) is Call, f"{endpoint}: returns {annotation}, not a Call"
    (parsed,) = get_args(annotation)
    return parsed


def against_endpoints(cls: type, asynchronous: bool) -> list[str]:
    """Every way ``cls``'s endpoint methods differ from their :class:`Endpoints` definitions."""
    problems: list[str] = []
    written = {name for name, value in vars(cls).items()
               if not name.startswith("_") and inspect.isfunction(value)}
    others = {"aclose", "run"} if asynchronous else {"close", "run"}
    for name in sorted((written - others) ^ set(ENDPOINTS)):
        problems.append(f"{name}: {'no endpoint' if name in written else 'not written out'}")
    for name in sorted(written & set(ENDPOINTS)):
        method, endpoint = vars(cls)[name], getattr(Endpoints, name)
        mine = list(inspect.signature(method).parameters.values())
        theirs = list(inspect.signature(endpoint).parameters.values())
        if [(p.name, p.kind, p.default, p.annotation) for p in mine] != \
                [(p.name, p.kind, p.default, p.annotation) for p in theirs]:
            problems.append(f"{name}: parameters differ from the endpoint's")
        hints, defined = get_type_hints(method), get_type_hints(endpoint)
        if {k: v for k, v in hints.items() if k != "return"} != \
                {k: v for k, v in defined.items() if k != "return"}:
            problems.append(f"{name}: parameter types differ from the endpoint's")
        returns = hints["return"]
        if returns != returns_of(name, asynchronous):
            problems.append(f"{name}: returns {returns}")
        if inspect.getdoc(method) != inspect.getdoc(endpoint).splitlines()[0]:
            problems.append(f"{name}: docstring is not the endpoint's first line")
    return problems


def test_both_clients_write_out_every_endpoint_with_its_signature() -> None:
    assert "buy_energy" in ENDPOINTS and "request" in ENDPOINTS and len(ENDPOINTS) == 15
    assert against_endpoints(TronEnergyClient, asynchronous=False) == []
    assert against_endpoints(TronEnergyAsyncClient, asynchronous=True) == []
    assert inspect.isasyncgenfunction(TronEnergyAsyncClient._walk)
    assert inspect.isgeneratorfunction(TronEnergyClient._walk)


def test_the_endpoint_check_catches_a_wrong_method() -> None:
    class Wrong(TronEnergyClient):
        def get_order(self, order_id: str, page: int = 1) -> Any:
            """Another contract."""

        def get_price(self, rent_time: Any = 2) -> Any:  # type: ignore[override]
            return None

    problems = against_endpoints(Wrong, asynchronous=False)
    assert "get_order: parameters differ from the endpoint's" in problems
    assert "get_order: docstring is not the endpoint's first line" in problems
    assert "get_order: returns typing.Any" in problems
    assert "get_price: parameters differ from the endpoint's" in problems
    assert "buy_energy: not written out" in problems


class Recorder:
    """Stands in for ``Endpoints``: each call is answered with what it was called with."""

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
            return name, args, kwargs
        return record


class Echo(TronEnergyClient):
    def run(self, call: Any) -> Any:  # type: ignore[override]
        return call

    def _walk(self, walk: Any) -> Any:  # type: ignore[override]
        return walk


class AsyncEcho(TronEnergyAsyncClient):
    async def run(self, call: Any) -> Any:  # type: ignore[override]
        return call

    def _walk(self, walk: Any) -> Any:  # type: ignore[override]
        return walk


@pytest.mark.parametrize("name", ENDPOINTS)
def test_each_method_hands_its_arguments_to_its_endpoint_unchanged(name: str) -> None:
    """Positional arguments land on the endpoint's same parameters (no swapped forwarding)."""
    sync_client: Any = Echo("http://127.0.0.1:1/v1", "key", "secret")
    async_client: Any = AsyncEcho("http://127.0.0.1:1/v1", "key", "secret")
    sync_client._api = async_client._api = Recorder()
    params = list(inspect.signature(getattr(Endpoints, name)).parameters)[1:]
    sentinels = [object() for _ in params]
    answered = [getattr(sync_client, name)(*sentinels)]
    result = getattr(async_client, name)(*sentinels)
    answered.append(asyncio.run(result) if inspect.iscoroutine(result) else result)
    for endpoint, args, kwargs in answered:
        bound = inspect.signature(getattr(Endpoints, name)).bind(None, *args, **kwargs)
        assert endpoint == name
        assert [bound.arguments[p] for p in params] == sentinels
    sync_client.close()
    asyncio.run(async_client.aclose())


def test_the_drift_check_catches_drift() -> None:
    """A hand-written method that differs from its twin is reported, in every way it differs."""

    class Drifted(TronEnergyAsyncClient):
        async def get_order(self, order_id: str, extra: int = 0) -> Any:
            """Another contract."""

        def get_price(self, rent_time: Any = 1) -> Any:
            return None

        async def only_here(self) -> None:
            """Not on the sync client."""

    problems = drift(TronEnergyClient, Drifted)
    assert "only_here: only on one client" in problems
    assert "get_order: docstrings differ" in problems
    assert any(p.startswith("get_order: parameters differ") for p in problems)
    assert "get_price: the async method is not a coroutine function" in problems
    assert any(p.startswith("get_price: return types differ") for p in problems)
    assert drift(TronEnergyClient, TronEnergyAsyncClient) == []


def test_a_subclass_keeps_its_own_override() -> None:
    class Custom(TronEnergyClient):
        def run(self, call: Any) -> Any:
            return ("ran", call.path)

        def get_account(self) -> Any:
            return "mine"

    client: Any = Custom("http://127.0.0.1:1/v1", "key", "secret")
    assert client.get_account() == "mine"
    assert client.get_order("abc") == ("ran", "/energy/order/abc")
    client.close()


def test_type_checkers_see_models_on_sync_and_awaitables_on_async(tmp_path: Path) -> None:
    """mypy reads the declared types: ``Order`` on one client, an awaitable of it on the other."""
    api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "usage.py"
    snippet.write_text(textwrap.dedent("""
        from collections.abc import AsyncIterator, Coroutine, Iterator
        from typing import Any

        from typing_extensions import assert_type

        from airflow_provider_tronenergy.client import (
            TronEnergyAsyncClient, MonitoredAddress, Order, Purchase, TronEnergyClient,
        )

        def sync_use(client: TronEnergyClient) -> None:
            assert_type(client.get_order("x"), Order)
            assert_type(client.buy_energy("T", energy_amount=65000, rent_time=1), Purchase)
            assert_type(client.iter_monitored_addresses(status=None), Iterator[MonitoredAddress])
            assert_type(client.remove_monitored_address("T"), None)

        async def async_use(client: TronEnergyAsyncClient) -> None:
            pending = assert_type(client.get_order("x"), Coroutine[Any, Any, Order])
            assert_type(await pending, Order)
            assert_type(await client.buy_energy("T", 65000), Purchase)
            assert_type(client.iter_monitored_addresses(), AsyncIterator[MonitoredAddress])

        def wrong(client: TronEnergyClient, aclient: TronEnergyAsyncClient) -> None:
            client.buy_energy("T", energy_amount="many")  # E: arg-type
            client.get_order(order_id="x", page=2)  # E: call-arg

        async def forgot_await(client: TronEnergyAsyncClient) -> None:
            client.get_order("x")  # E: unused-coroutine
    """))
    out, _, status = api.run([
        "--strict", "--no-error-summary", "--show-error-codes", "--follow-imports=silent",
        "--cache-dir", str(tmp_path / "cache"), str(snippet),
    ])
    errors = [line.rsplit("[", 1)[-1].rstrip("]") for line in out.splitlines()
              if ": error:" in line]
    assert errors == ["arg-type", "call-arg", "unused-coroutine"], out
    assert status == 1
