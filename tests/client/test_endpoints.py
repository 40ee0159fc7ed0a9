"""Every client method, sync and async, against the sandbox over HTTP."""

from __future__ import annotations

import json
import time
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest

from airflow_provider_tronenergy.client import (
    Account,
    Activation,
    AddressCheck,
    AuthenticationError,
    MonitoredAddress,
    MonitoredAddressPage,
    MonitorRegistration,
    MonitorStats,
    Order,
    OrderStatus,
    Price,
    Purchase,
    SmartPurchase,
    TronEnergyClient,
)
from airflow_provider_tronenergy.client import endpoints as endpoints_module
from support.clients import both_clients, make_client, start_sandbox
from support.control import Control
from tronenergy_protocol.address import random_address


def by_id(control: Control, order_id: str) -> dict[str, Any]:
    return next(order for order in control.orders() if order["order_id"] == order_id)


def wait_terminal(api: Any, order_id: str) -> Order:
    deadline = time.monotonic() + 10
    while True:
        order: Order = api.get_order(order_id)
        if order.status.is_terminal() or time.monotonic() > deadline:
            return order
        time.sleep(0.02)


def test_get_account(api: Any, control: Control) -> None:
    control.settle()  # an earlier test's order would spend from the balance set here
    control.balance("5000")
    account = api.get_account()
    assert isinstance(account, Account)
    assert account.balance == Decimal("5000")
    assert account.available_balance + account.frozen_amount == account.balance
    assert account.username == "sandbox@example.com"
    assert isinstance(account.user_id, int)
    assert account.recharge_address.startswith("T")
    control.balance("1000000")


@pytest.mark.parametrize(("rent_time", "per_10k"), [(0.08, "0.3"), ("0.17", "0.33"), (1, "0.45")])
def test_get_price(api: Any, rent_time: Any, per_10k: str) -> None:
    price = api.get_price(rent_time)
    assert isinstance(price, Price)
    assert price.rent_time == Decimal(str(rent_time))
    assert price.price_per_10k == Decimal(per_10k)
    assert price.price_65k_1hour == Decimal("2.925")
    assert (price.min_energy, price.max_energy) == (32000, 5_000_000)
    assert price.energy_per_transfer == 65000


def test_buy_energy_and_follow_the_order(api: Any, control: Control) -> None:
    target = control.activated()
    purchase = api.buy_energy(target, 40000, 0.25)
    assert isinstance(purchase, Purchase)
    assert purchase.cost == Decimal("1.44")  # 40,000 energy at 0.36 TRX per 10k
    recorded = by_id(control, purchase.order_id)
    assert (recorded["kind"], recorded["target_address"]) == ("buy", target)
    assert (recorded["energy_amount"], recorded["rent_time"]) == (40000, 0.25)
    order = wait_terminal(api, purchase.order_id)
    assert order.status is OrderStatus.SUCCESS
    assert len(order.tx_hash) == 64
    assert order.cost == Decimal("1.44")
    assert order.rent_time == Decimal("0.25")
    assert (order.target_address, order.kind, order.energy_amount) == (target, "buy", 40000)
    assert isinstance(order.created_at, datetime) and order.created_at.tzinfo is not None


def test_buy_energy_defaults(api: Any, control: Control) -> None:
    purchase = api.buy_energy(control.activated())
    recorded = by_id(control, purchase.order_id)
    assert (recorded["energy_amount"], recorded["rent_time"]) == (65000, 1)
    assert purchase.cost == Decimal("2.925")


def test_order_states_failed_and_cancelled() -> None:
    server = start_sandbox(time_scale=1000)  # orders stay pending long enough to cancel
    try:
        control = Control(server)
        with both_clients(server) as clients:
            for api in clients:
                first = api.buy_energy(control.activated())
                second = api.buy_energy(control.activated())
                assert api.get_order(first.order_id).status is OrderStatus.PENDING
                assert not OrderStatus.PENDING.is_terminal()
                control.post(f"/orders/{first.order_id}/cancel")
                control.post(f"/orders/{second.order_id}/fail")
                cancelled = api.get_order(first.order_id)
                failed = api.get_order(second.order_id)
                assert cancelled.status is OrderStatus.CANCELLED
                assert cancelled.status.is_terminal()
                assert failed.status is OrderStatus.FAILED and failed.tx_hash == ""
    finally:
        server.stop()


def test_auto_buy_energy_first_and_repeat_transfer(api: Any, control: Control) -> None:
    sender, newcomer, holder = control.activated(), random_address(), control.activated()
    control.holder(holder)
    first = api.auto_buy_energy(sender, newcomer)
    repeat = api.auto_buy_energy(sender, holder, 24)
    assert isinstance(first, Purchase)
    assert (first.energy_amount, repeat.energy_amount) == (131000, 65000)
    recorded = by_id(control, repeat.order_id)
    assert (recorded["kind"], recorded["target_address"]) == ("auto_buy", sender)
    assert recorded["to_address"] == holder and recorded["rent_time"] == 24


def test_buy_energy_by_count(api: Any, control: Control) -> None:
    target = control.activated()
    purchase = api.buy_energy_by_count(target, 3, 1)
    assert purchase.energy_amount == 195000
    assert purchase.cost == Decimal("8.775")
    assert by_id(control, purchase.order_id)["kind"] == "buy_count"


def test_smart_buy_energy_activates_the_recipient(api: Any, control: Control) -> None:
    receiver, recipient = control.activated(), random_address()
    purchase = api.smart_buy_energy(receiver, recipient, rent_time=0.25)
    assert isinstance(purchase, SmartPurchase)
    assert purchase.activated is True and purchase.energy_amount == 131000
    assert api.check_address(recipient).is_activated is True
    again = api.smart_buy_energy(receiver, recipient, from_address=receiver)
    assert again.activated is False
    recorded = by_id(control, again.order_id)
    assert (recorded["kind"], recorded["target_address"]) == ("smart_buy", receiver)


def test_check_and_activate_address(api: Any, control: Control) -> None:
    address = random_address()
    check = api.check_address(address)
    assert isinstance(check, AddressCheck)
    assert (check.address, check.is_activated, check.need_activate) == (address, False, True)
    assert check.transfer_count == 2
    activation = api.activate_address(address)
    assert isinstance(activation, Activation)
    assert activation.cost == Decimal("1.1")
    assert address in activation.message and len(activation.tx_hash) == 64
    assert by_id(control, activation.order_id)["kind"] == "activate"
    assert api.check_address(address).is_activated is True


def test_monitoring_add_list_stats_remove(api: Any) -> None:
    address = random_address()
    before = api.get_monitor_stats()
    assert isinstance(before, MonitorStats)
    added = api.add_monitored_address(address, "https://example.com/hook", "payouts",
                                      ["TRX", "usdt"])
    assert isinstance(added, MonitorRegistration)
    assert (added.address, added.status) == (address, "active")
    assert added.webhook_url == "https://example.com/hook"
    after = api.get_monitor_stats()
    assert after.active_addresses == before.active_addresses + 1
    assert after.total_addresses == before.total_addresses + 1
    watched = {item.address: item for item in api.iter_monitored_addresses(status="active")}
    item = watched[address]
    assert isinstance(item, MonitoredAddress)
    assert (item.label, item.tokens, item.is_active) == ("payouts", ("TRX", "USDT"), True)
    assert item.created_at is not None and item.created_at.tzinfo is not None
    assert api.remove_monitored_address(address) is None
    assert api.get_monitor_stats().active_addresses == before.active_addresses
    gone = {item.address: item for item in api.iter_monitored_addresses(status="inactive")}
    assert gone[address].is_active is False


def test_list_pages_and_iter_walks_every_page(monkeypatch: pytest.MonkeyPatch) -> None:
    server = start_sandbox()
    try:
        with make_client(server) as seeder:
            addresses = [random_address() for _ in range(23)]
            for address in addresses:
                seeder.add_monitored_address(address, "https://example.com/hook")
            for address in addresses[:4]:
                seeder.remove_monitored_address(address)
        client = make_client(server)
        page = client.list_monitored_addresses(2, 10)
        assert isinstance(page, MonitoredAddressPage)
        assert (page.total, page.page, page.page_size) == (23, 2, 10)
        assert [item.address for item in page.addresses] == addresses[10:20]
        assert client.list_monitored_addresses(3, 10).addresses[-1].address == addresses[-1]
        inactive = client.list_monitored_addresses(status="inactive")
        assert [item.address for item in inactive.addresses] == addresses[:4]
        # Small pages so the walk needs several requests.
        monkeypatch.setattr(endpoints_module, "ITER_PAGE_SIZE", 5)
        assert [item.address for item in client.iter_monitored_addresses()] == addresses
        active = [item.address for item in client.iter_monitored_addresses("active")]
        assert active == addresses[4:]
        client.close()
    finally:
        server.stop()


def test_iter_walks_every_page_async_too(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from support.clients import make_async_client

    server = start_sandbox()
    try:
        with make_client(server) as seeder:
            addresses = [random_address() for _ in range(12)]
            for address in addresses:
                seeder.add_monitored_address(address, "https://example.com/hook")
        monkeypatch.setattr(endpoints_module, "ITER_PAGE_SIZE", 5)

        async def walk() -> list[str]:
            async with make_async_client(server) as client:
                return [item.address async for item in client.iter_monitored_addresses()]

        assert asyncio.run(walk()) == addresses
    finally:
        server.stop()


def test_generic_request_rent_and_reads(api: Any, control: Control) -> None:
    target = control.activated()
    data = api.request("POST", "/energy/rent", json={"target_address": target,
                                                     "energy_amount": 32000})
    assert data["energy_amount"] == 32000 and isinstance(data["cost"], Decimal)
    assert by_id(control, data["order_id"])["kind"] == "rent"
    price = api.request("GET", "energy/price", params={"rent_time": Decimal("0.17")})
    assert price["rent_time"] == Decimal("0.17")
    flat = api.request("POST", "/energy/activate", json={"address": random_address()})
    assert set(flat) >= {"order_id", "tx_hash", "cost", "message"}
    assert api.request("GET", "/tron-monitor/tron-monitor/stats")["total_addresses"] >= 0


def test_odd_order_id_is_encoded_and_signed_exactly(api: Any) -> None:
    from airflow_provider_tronenergy.client import NotFoundError

    # If the signed path differed from the sent one this would be an AuthenticationError.
    with pytest.raises(NotFoundError):
        api.get_order("a b'()!*~/x?y=1#z%41")


def test_ts_body_signature_scheme() -> None:
    server = start_sandbox(signature_scheme="ts.body")
    try:
        with make_client(server, signature_scheme="ts.body") as client:
            assert client.check_address(random_address()).is_activated is False
            assert client.get_account().balance > 0
        with make_client(server) as wrong_scheme, pytest.raises(AuthenticationError) as info:
            wrong_scheme.get_account()
        assert info.value.code == 40002
    finally:
        server.stop()


def test_results_serialise_to_json(api: Any, control: Control) -> None:
    target = control.activated()
    results = [
        api.get_account(), api.get_price(), api.buy_energy(target),
        api.smart_buy_energy(target, random_address()), api.check_address(target),
        api.get_monitor_stats(), api.list_monitored_addresses(),
    ]
    order = api.get_order(results[2].order_id)
    for result in [*results, order]:
        encoded = json.loads(json.dumps(result.to_dict()))
        assert encoded == result.to_dict()
    assert results[2].to_dict()["cost"] == "2.925"
    assert order.to_dict()["status"] in {"pending", "processing", "success"}


def test_client_is_thread_safe_under_concurrent_use(client: TronEnergyClient,
                                                     control: Control) -> None:
    from concurrent.futures import ThreadPoolExecutor

    targets = [control.activated() for _ in range(24)]
    with ThreadPoolExecutor(8) as pool:
        purchases = list(pool.map(lambda t: client.buy_energy(t, 32000, 1), targets))
    assert len({p.order_id for p in purchases}) == 24
    recorded = {o["order_id"]: o["target_address"] for o in control.orders()}
    assert [recorded[p.order_id] for p in purchases] == targets
