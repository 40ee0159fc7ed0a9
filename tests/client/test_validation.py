"""Client-side validation: bad arguments raise ValidationError before any byte is sent."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from airflow_provider_tronenergy.client import (
    InvalidRequestError,
    TronEnergyClient,
    ValidationError,
    ValidationRules,
    validation,
)
from airflow_provider_tronenergy.client.core import RequestCore
from support.clients import BlockingFacade, make_async_client, make_client
from support.control import Control
from tronenergy_protocol.address import random_address
from tronenergy_sandbox import SandboxServer

GOOD = random_address()
BAD_CHECKSUM = GOOD[:-1] + ("1" if GOOD[-1] != "1" else "2")

# (method, args, kwargs, field named in the error)
CASES: list[tuple[str, tuple[Any, ...], dict[str, Any], str]] = [
    ("buy_energy", (BAD_CHECKSUM,), {}, "target_address"),
    ("buy_energy", ("T" + "1" * 33,), {}, "target_address"),
    ("buy_energy", (GOOD.lower(),), {}, "target_address"),
    ("buy_energy", (None,), {}, "target_address"),
    ("buy_energy", (GOOD, 31999), {}, "energy_amount"),
    ("buy_energy", (GOOD, 5_000_001), {}, "energy_amount"),
    ("buy_energy", (GOOD, 65000.0), {}, "energy_amount"),
    ("buy_energy", (GOOD, True), {}, "energy_amount"),
    ("buy_energy", (GOOD,), {"rent_time": 0.08}, "rent_time"),
    ("buy_energy", (GOOD,), {"rent_time": 2}, "rent_time"),
    ("buy_energy", (GOOD,), {"rent_time": "soon"}, "rent_time"),
    ("buy_energy", (GOOD,), {"rent_time": float("nan")}, "rent_time"),
    ("auto_buy_energy", (GOOD, BAD_CHECKSUM), {}, "to_address"),
    ("auto_buy_energy", ("", GOOD), {}, "from_address"),
    ("auto_buy_energy", (GOOD, GOOD), {"rent_time": 0.17}, "rent_time"),
    ("buy_energy_by_count", (GOOD, 0), {}, "count"),
    ("buy_energy_by_count", (GOOD, "3"), {}, "count"),
    ("buy_energy_by_count", (GOOD, 2**70), {}, "count"),  # issue 22: once reached the service
    ("buy_energy_by_count", (GOOD, 77), {}, "count"),  # 77 x 65,000 > max_energy
    ("buy_energy_by_count", (GOOD, 2), {"rent_time": Decimal("0.5")}, "rent_time"),
    ("smart_buy_energy", (GOOD, GOOD), {"rent_time": 1.5}, "rent_time"),
    ("smart_buy_energy", (GOOD, GOOD), {"from_address": BAD_CHECKSUM}, "from_address"),
    ("smart_buy_energy", (BAD_CHECKSUM, GOOD), {}, "receiver_address"),
    ("activate_address", (BAD_CHECKSUM,), {}, "address"),
    ("check_address", (12345,), {}, "address"),
    ("get_price", (0.25,), {}, "rent_time"),
    ("get_price", (24,), {}, "rent_time"),
    ("get_order", ("",), {}, "order_id"),
    ("get_order", (None,), {}, "order_id"),
    ("list_monitored_addresses", (0,), {}, "page"),
    ("list_monitored_addresses", (1, 0), {}, "page_size"),
    ("list_monitored_addresses", (1, 101), {}, "page_size"),
    ("list_monitored_addresses", (1, 20, "paused"), {}, "status"),
    ("iter_monitored_addresses", ("paused",), {}, "status"),
    ("add_monitored_address", (BAD_CHECKSUM,), {}, "address"),
    ("add_monitored_address", (GOOD, "ftp://example.com"), {}, "webhook_url"),
    ("add_monitored_address", (GOOD, None, 7), {}, "label"),
    ("add_monitored_address", (GOOD, None, None, "TRX"), {}, "tokens"),
    ("add_monitored_address", (GOOD, None, None, []), {}, "tokens"),
    ("remove_monitored_address", (BAD_CHECKSUM,), {}, "address"),
    ("request", ("POST", "https://elsewhere.example/steal"), {}, "path"),
    ("request", ("POST", "//elsewhere.example/steal"), {}, "path"),
    ("request", ("GET", "/energy/price?rent_time=1"), {}, "path"),
    ("request", ("GET", "/energy/../sandbox/orders"), {}, "path"),
    ("request", ("PO ST", "/energy/rent"), {}, "method"),
    ("request", ("POST", "/energy/rent"), {"json": {"amount": Decimal("NaN")}}, "json"),
    ("request", ("POST", "/energy/rent"), {"json": {"amount": object()}}, "json"),
    ("request", ("GET", "/energy/price"), {"params": {"rent_time": object()}}, "params.rent_time"),
]


class SendSpy:
    """Counts transport calls; any call at all fails the test."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        raise AssertionError("a request was sent")


@pytest.mark.parametrize(("method", "args", "kwargs", "field"), CASES,
                         ids=[f"{c[0]}-{c[3]}-{i}" for i, c in enumerate(CASES)])
def test_invalid_arguments_never_reach_the_server(
    sandbox: SandboxServer, control: Control, method: str, args: tuple[Any, ...],
    kwargs: dict[str, Any], field: str,
) -> None:
    orders_before = len(control.orders())
    sync_client = make_client(sandbox)
    facade = BlockingFacade(make_async_client(sandbox))
    sync_spy, async_spy = SendSpy(), SendSpy()
    # Where each transport really sends (the sync client never calls Session.request).
    sync_client._adapter.send = sync_spy  # type: ignore[method-assign]
    facade.client._http.send = async_spy  # type: ignore[method-assign]
    try:
        for api in (sync_client, facade):
            with pytest.raises(ValidationError) as info:
                result = getattr(api, method)(*args, **kwargs)
                if method == "iter_monitored_addresses":
                    next(iter(result))
            error = info.value
            assert error.field == field, str(error)
            assert str(error).startswith(f"{field}: ")
            assert isinstance(error, ValueError) and isinstance(error, InvalidRequestError)
            assert error.code is None and error.status is None
    finally:
        sync_client.close()
        facade.close()
    assert (sync_spy.calls, async_spy.calls) == (0, 0)
    assert len(control.orders()) == orders_before


def test_constructor_arguments_are_checked() -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"base_url": "ftp://host/v1"}, "base_url"),
        ({"base_url": "http://user:pw@host/v1"}, "base_url"),
        ({"base_url": "http://host/v1?x=1"}, "base_url"),
        ({"api_key": ""}, "api_key"),
        ({"api_secret": None}, "api_secret"),
        ({"signature_scheme": "v2"}, "signature_scheme"),
    ]
    for kwargs, field in cases:
        settings: dict[str, Any] = {"base_url": "http://host/v1", "api_key": "k",
                                    "api_secret": "s", "signature_scheme": "v1"}
        settings.update(kwargs)
        with pytest.raises(ValidationError) as info:
            RequestCore(**settings)
        assert info.value.field == field
    with pytest.raises(ValidationError):
        TronEnergyClient("http://host/v1", "k", "s", timeout=0)


def test_rent_time_accepts_equal_spellings(client: TronEnergyClient, control: Control) -> None:
    target = control.activated()
    for spelling in (0.25, "0.25", Decimal("0.250")):
        purchase = client.buy_energy(target, 32000, spelling)
        recorded = next(o for o in control.orders() if o["order_id"] == purchase.order_id)
        assert recorded["rent_time"] == 0.25


def test_rules_are_configurable(sandbox: SandboxServer, control: Control) -> None:
    # Looser client rules: the request is sent, and the service's own check answers.
    loose = ValidationRules(buy_rent_times=frozenset(), min_energy=1)
    with make_client(sandbox, rules=loose) as client:
        with pytest.raises(InvalidRequestError) as info:
            client.buy_energy(control.activated(), 65000, 2)
        assert not isinstance(info.value, ValidationError) and info.value.code == 40010
        with pytest.raises(InvalidRequestError) as small:
            client.buy_energy(control.activated(), 10)
        assert small.value.code == 40010
    strict = ValidationRules(max_page_size=10, price_rent_times=frozenset({Decimal("1")}))
    with make_client(sandbox, rules=strict) as client:
        with pytest.raises(ValidationError):
            client.list_monitored_addresses(page_size=11)
        with pytest.raises(ValidationError):
            client.get_price(0.08)
    with pytest.raises(ValueError):
        ValidationRules(min_energy=10, max_energy=5)


@pytest.mark.parametrize("rules", [
    {"max_page_size": 0},
    {"min_energy": 0},
    {"min_energy": 10, "max_energy": 9},
    {"energy_per_transfer": 0},
    {"energy_per_transfer": 5_000_001},
])
def test_rules_that_cannot_hold_are_refused(rules: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="ValidationRules"):
        ValidationRules(**rules)


def test_max_count_is_what_max_energy_holds() -> None:
    assert ValidationRules().max_count == 76  # 5,000,000 // 65,000
    assert ValidationRules(max_energy=650_000, energy_per_transfer=64_285).max_count == 10


def test_a_quoted_purchase_rent_time_is_bought_and_quoted() -> None:
    """The purchase set within the price set (the keeper's rule); an empty set checks
    nothing on its side, as for every endpoint."""
    rules = ValidationRules()
    assert validation.quoted_purchase_rent_time("1.0", rules) == Decimal(1)
    for hours in ("0.08", "0.25", "24", "0"):
        with pytest.raises(ValidationError, match="rent_time: "):
            validation.quoted_purchase_rent_time(hours, rules)
    quotes_all = ValidationRules(price_rent_times=frozenset())
    assert validation.quoted_purchase_rent_time("24", quotes_all) == Decimal(24)
    disjoint = ValidationRules(price_rent_times=frozenset({Decimal("0.08")}))
    with pytest.raises(ValidationError, match="must be one of none"):
        validation.quoted_purchase_rent_time("1", disjoint)
