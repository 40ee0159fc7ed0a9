"""The sync and async clients cannot drift: same methods, parameters, docstrings and types.

Both bind the endpoint methods declared once in ``client/base.py``; these tests
fail as soon as someone writes a method into one client and not the other, or
gives the two a different signature, contract or kind (plain vs coroutine).
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_tronenergy.client import TronEnergyAsyncClient, TronEnergyClient
from airflow_provider_tronenergy.client.base import ClientBase

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


def test_every_endpoint_method_is_declared_once_and_bound_to_both() -> None:
    declared = {name for name, value in vars(ClientBase).items()
                if type(value).__module__ == ClientBase.__module__
                and not isinstance(value, property) and not callable(value)}
    assert "buy_energy" in declared and "request" in declared
    for name in declared:
        sync_method, async_method = vars(TronEnergyClient)[name], vars(TronEnergyAsyncClient)[name]
        assert sync_method.__qualname__ == f"TronEnergyClient.{name}"
        assert async_method.__qualname__ == f"TronEnergyAsyncClient.{name}"
        assert inspect.getdoc(sync_method) == inspect.getdoc(vars(ClientBase)[name])
    assert inspect.signature(vars(TronEnergyClient)["get_order"]).return_annotation == "Order"
    assert inspect.signature(vars(TronEnergyAsyncClient)["get_order"]).return_annotation == "Order"
    assert inspect.isasyncgenfunction(TronEnergyAsyncClient._walk)
    assert inspect.isgeneratorfunction(TronEnergyClient._walk)


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
        def _run(self, call: Any) -> Any:
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
