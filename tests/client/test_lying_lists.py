"""A service whose lists lie: pages that repeat (or never end) and addresses that are not
addresses. The sandbox's ``tamper`` fault rewrites the real answer, list items included."""

from __future__ import annotations

import asyncio
import json

import pytest

from airflow_provider_tronenergy.client import UnexpectedResponseError
from airflow_provider_tronenergy.client import endpoints as endpoints_module
from support.clients import make_async_client
from tronenergy_protocol.address import random_address
from tronenergy_sandbox.faults import rewrite

BAD_ADDRESS = "TXYZnotanaddressatallxxxxxxxxxxxxx"


def test_a_tamper_patch_reaches_into_lists():
    body = b'{"data": {"items": [{"a": 1}, {"a": 2}], "n": 2}}'
    assert json.loads(rewrite(body, {"data.items.1.a": "5", "data.n": '"x"'})) == {
        "data": {"items": [{"a": 1}, {"a": 5}], "n": "x"}}
    assert json.loads(rewrite(b'{"data": [1, 2, 3]}', {"data.0": "null"})) == {
        "data": [None, 2, 3]}


@pytest.fixture
def watched(client, control):
    """Three watched addresses and the fault that makes every page answer them again."""
    addresses = [random_address() for _ in range(3)]
    for address in addresses:
        client.add_monitored_address(address, "https://example.com/hook")
    entries = [item.to_dict() for item in client.iter_monitored_addresses()
               if item.address in addresses]
    entries = [{**e, "tokens": list(e["tokens"])} for e in entries]
    return addresses, json.dumps(entries, default=str)


def test_pages_that_repeat_forever_stop_the_walk_with_an_error(client, control, watched,
                                                                monkeypatch):
    """Each page answers the same full page and a total of a million. Before, the walk
    listed the same addresses again and again and never ended."""
    monkeypatch.setattr(endpoints_module, "ITER_PAGE_SIZE", 3)
    _, page = watched
    control.fault(kind="tamper", path="/tron-monitor/addresses", method="GET",
                  patch={"data.addresses": page, "data.total": "1000000"})
    seen: list[str] = []
    with pytest.raises(UnexpectedResponseError, match="was already listed"):
        for item in client.iter_monitored_addresses():
            seen.append(item.address)
            assert len(seen) < 100, "the walk did not stop"
    assert len(seen) == 3
    [fault] = control.faults()
    assert fault["fired"] == 2


def test_pages_that_repeat_stop_the_async_walk_too(sandbox, control, watched, monkeypatch):
    monkeypatch.setattr(endpoints_module, "ITER_PAGE_SIZE", 3)
    _, page = watched
    control.fault(kind="tamper", path="/tron-monitor/addresses", method="GET",
                  patch={"data.addresses": page, "data.total": "1000000"})

    async def walk() -> list[str]:
        seen: list[str] = []
        async with make_async_client(sandbox) as client:
            async for item in client.iter_monitored_addresses():
                seen.append(item.address)
                assert len(seen) < 100, "the walk did not stop"
        return seen

    with pytest.raises(UnexpectedResponseError, match="was already listed"):
        asyncio.run(walk())


def test_a_listed_address_that_is_no_address_is_refused(client, control, watched):
    control.fault(kind="tamper", path="/tron-monitor/addresses", method="GET",
                  patch={"data.addresses.0.address": json.dumps(BAD_ADDRESS)})
    with pytest.raises(UnexpectedResponseError, match="address: is not a TRON address"):
        client.list_monitored_addresses()


@pytest.mark.parametrize("path, method, patch, call", [
    ("/energy/check-address", "POST", {"data.address": json.dumps(BAD_ADDRESS)},
     lambda c, a: c.check_address(a)),
    ("/energy/check-address", "POST", {"data.address": "null"},
     lambda c, a: c.check_address(a)),
], ids=["check-bad", "check-null"])
def test_an_answer_naming_no_address_is_refused(client, control, path, method, patch, call):
    control.fault(kind="tamper", path=path, method=method, patch=patch)
    with pytest.raises(UnexpectedResponseError, match="address"):
        call(client, random_address())


@pytest.mark.parametrize("field", ["target_address", "to_address"])
def test_an_order_naming_no_address_is_refused(client, control, field):
    control.balance("5000")
    order = client.buy_energy(control.activated(), 65_000)
    control.fault(kind="tamper", path=f"/energy/order/{order.order_id}", method="GET",
                  patch={f"data.{field}": json.dumps(BAD_ADDRESS)})
    with pytest.raises(UnexpectedResponseError, match=f"order.{field}: is not a TRON"):
        client.get_order(order.order_id)
    control.clear_faults()
    assert client.get_order(order.order_id).order_id == order.order_id
    # Fields the spec does not show: empty reads as not given (a service may send "").
    control.fault(kind="tamper", path=f"/energy/order/{order.order_id}", method="GET",
                  patch={f"data.{field}": '""'})
    assert getattr(client.get_order(order.order_id), field) == ""
