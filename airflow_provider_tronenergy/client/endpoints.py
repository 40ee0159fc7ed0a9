"""Each endpoint once: its contract, argument checks, what goes on the wire, how the answer is read.

Each public client method is one method here: its signature, defaults and
docstring are the method's contract, and it returns the validated :class:`Call`.
Both clients write out a one-line method per endpoint that runs this call (plain on
:class:`TronEnergyClient`, awaited on :class:`TronEnergyAsyncClient`), with the same
signature and the docstring's first line; ``tests/client/test_client_parity.py``
holds them to it, so the two cannot disagree about an endpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, TypeVar

from airflow_provider_tronenergy.client import validation as check
from airflow_provider_tronenergy.client.core import Call, RentTime
from airflow_provider_tronenergy.client.errors import UnexpectedResponseError, ValidationError
from airflow_provider_tronenergy.client.models import (
    Account,
    Activation,
    AddressCheck,
    MonitoredAddress,
    MonitoredAddressPage,
    MonitorRegistration,
    MonitorStats,
    Order,
    Price,
    Purchase,
    SmartPurchase,
)
from airflow_provider_tronenergy.client.retry import Safety
from airflow_provider_tronenergy.client.validation import ValidationRules
from airflow_provider_tronenergy.client.wire import path_segment, query_items, relative_path

T = TypeVar("T")
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
ITER_PAGE_SIZE = 100
_TARGET_KEYS = ("target_address", "receiver_address", "from_address", "address", "to_address")


def _none(data: Any) -> None:
    del data


def _identity(data: Any) -> Any:
    return data


def _hours(value: Decimal) -> str:
    return format(value, "f")


class Endpoints:
    """Turns method arguments into validated calls, under one set of validation rules.

    The docstrings speak of what the client method returns: the parsed model of
    the answer. Every argument is checked before any byte is sent
    (:class:`ValidationError`); a money-moving call that may have reached the
    service and then failed raises :class:`AmbiguousPurchaseError`: look for the
    order before buying again.
    """

    def __init__(self, rules: ValidationRules | None = None) -> None:
        self.rules = rules or ValidationRules()

    @staticmethod
    def _purchase(
        path: str, parse: Callable[[Any], T], body: dict[str, Any], target: str,
        rent_time: RentTime, allowed: frozenset[Decimal],
    ) -> Call[T]:
        """A money-moving POST for ``target``; ``rent_time`` checked last, sent last."""
        body["rent_time"] = check.rent_time(rent_time, allowed)
        return Call("POST", path, parse, Safety.MONEY, body=body, target=target)

    # -- energy ---------------------------------------------------------------------

    def get_account(self) -> Call[Account]:
        """The account: balances, frozen amount, pending orders, recharge address."""
        return Call("GET", "/energy/account", Account.from_data)

    def get_price(self, rent_time: RentTime = 1) -> Call[Price]:
        """Energy prices for ``rent_time`` hours (one of ``rules.price_rent_times``)."""
        hours = check.rent_time(rent_time, self.rules.price_rent_times)
        return Call("GET", "/energy/price", Price.from_data, query=(("rent_time", _hours(hours)),))

    def buy_energy(
        self, target_address: str, energy_amount: int = 65000, rent_time: RentTime = 1
    ) -> Call[Purchase]:
        """Rent ``energy_amount`` energy to ``target_address`` for ``rent_time`` hours.

        Moves money: an unclear outcome raises :class:`AmbiguousPurchaseError`, not a resend.
        """
        target = check.address(target_address, "target_address")
        body = {"target_address": target,
                "energy_amount": check.energy_amount(energy_amount, self.rules)}
        return self._purchase("/energy/buy", Purchase.from_data, body, target,
                              rent_time, self.rules.buy_rent_times)

    def auto_buy_energy(
        self, from_address: str, to_address: str, rent_time: RentTime = 1
    ) -> Call[Purchase]:
        """Rent what one transfer from ``from_address`` to ``to_address`` needs.

        The service estimates the energy (more for a first transfer to that
        recipient); ``from_address`` receives it.
        Moves money: an unclear outcome raises :class:`AmbiguousPurchaseError`, not a resend.
        """
        sender = check.address(from_address, "from_address")
        body = {"from_address": sender, "to_address": check.address(to_address, "to_address")}
        return self._purchase("/energy/auto-buy", Purchase.from_data, body, sender,
                              rent_time, self.rules.auto_buy_rent_times)

    def buy_energy_by_count(
        self, target_address: str, count: int = 1, rent_time: RentTime = 1
    ) -> Call[Purchase]:
        """Rent ``count`` times ``energy_per_transfer`` energy to ``target_address``.

        ``energy_per_transfer`` is the service's figure (:attr:`Price.energy_per_transfer`).
        Moves money: an unclear outcome raises :class:`AmbiguousPurchaseError`, not a resend.
        """
        target = check.address(target_address, "target_address")
        body = {"target_address": target, "count": check.count(count, self.rules)}
        return self._purchase("/energy/buy-count", Purchase.from_data, body, target,
                              rent_time, self.rules.buy_count_rent_times)

    def smart_buy_energy(
        self,
        receiver_address: str,
        to_address: str,
        from_address: str | None = None,
        rent_time: RentTime = 1,
    ) -> Call[SmartPurchase]:
        """Check ``to_address``, activate it if needed, and rent energy to ``receiver_address``.

        ``from_address`` is the simulated transfer's sender (the service defaults
        it to ``receiver_address``). An activation is charged even if the energy
        order then fails.
        Moves money: an unclear outcome raises :class:`AmbiguousPurchaseError`, not a resend.
        """
        receiver = check.address(receiver_address, "receiver_address")
        body: dict[str, Any] = {
            "receiver_address": receiver,
            "to_address": check.address(to_address, "to_address"),
        }
        sender = check.optional_address(from_address, "from_address")
        if sender is not None:
            body["from_address"] = sender
        return self._purchase("/energy/smart-buy", SmartPurchase.from_data, body, receiver,
                              rent_time, self.rules.smart_buy_rent_times)

    def check_address(self, address: str) -> Call[AddressCheck]:
        """Whether ``address`` is activated on chain and how many transfers it has seen."""
        body = {"address": check.address(address, "address")}
        return Call("POST", "/energy/check-address", AddressCheck.from_data, body=body)

    def activate_address(self, address: str) -> Call[Activation]:
        """Activate ``address`` on chain (the service pays the fee and charges it).

        Moves money: an unclear outcome raises :class:`AmbiguousPurchaseError`, not a resend.
        """
        target = check.address(address, "address")
        return Call("POST", "/energy/activate", Activation.from_data, Safety.MONEY,
                    body={"address": target}, target=target, flat=True)

    def get_order(self, order_id: str) -> Call[Order]:
        """One order; poll until ``status.is_terminal()``."""
        path = f"/energy/order/{path_segment(check.order_id(order_id))}"
        return Call("GET", path, Order.from_data)

    # -- monitoring -----------------------------------------------------------------

    def get_monitor_stats(self) -> Call[MonitorStats]:
        """Counts of monitored addresses and of callbacks sent, succeeded and failed."""
        return Call("GET", "/tron-monitor/stats", MonitorStats.from_data)

    def list_monitored_addresses(
        self, page: int = 1, page_size: int = 20, status: str | None = None
    ) -> Call[MonitoredAddressPage]:
        """One page of monitored addresses, optionally only ``"active"`` or ``"inactive"``."""
        number = check.page(page)
        size = check.page_size(page_size, self.rules)
        state = check.monitor_status(status)
        query = [("page", str(number)), ("page_size", str(size))]
        if state is not None:
            query.append(("status", state))

        def parse(data: Any) -> MonitoredAddressPage:
            return MonitoredAddressPage.from_data(data, page=number, page_size=size)

        return Call("GET", "/tron-monitor/addresses", parse, query=tuple(query))

    def iter_monitored_addresses(self, status: str | None = None) -> PageWalk:
        """Every monitored address, page by page (``async for`` on the async client).

        The arguments are checked at once, before the first page is fetched.
        """
        first = self.list_monitored_addresses(1, ITER_PAGE_SIZE, status)
        return PageWalk(first, lambda page: self.list_monitored_addresses(
            page, ITER_PAGE_SIZE, status))

    def add_monitored_address(
        self,
        address: str,
        webhook_url: str | None = None,
        label: str | None = None,
        tokens: list[str] | None = None,
    ) -> Call[MonitorRegistration]:
        """Watch ``address`` for incoming transfers, with callbacks to ``webhook_url``.

        Changes state: resent only when it provably never reached the service.
        """
        target = check.address(address, "address")
        body: dict[str, Any] = {"address": target}
        optional = {
            "webhook_url": check.webhook_url(webhook_url),
            "label": check.label(label),
            "tokens": check.tokens(tokens),
        }
        body.update({key: value for key, value in optional.items() if value is not None})
        return Call("POST", "/tron-monitor/addresses", MonitorRegistration.from_data,
                    Safety.UNSAFE, body=body, target=target)

    def remove_monitored_address(self, address: str) -> Call[None]:
        """Stop watching ``address``; a 404 on a resend after an unclear attempt counts as done."""
        target = check.address(address, "address")
        return Call("DELETE", f"/tron-monitor/addresses/{target}", _none, target=target,
                    gone_means_done=True)

    # -- anything else ----------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        idempotent: bool | None = None,
    ) -> Call[Any]:
        """Signed call to ``path`` below the base URL; returns the answer's ``data``.

        For the endpoints the spec names without a shape. Unless
        ``idempotent=True``, anything but a read is treated as moving money:
        never resent once it may have reached the service.
        """
        if not isinstance(method, str) or not method.isalpha():
            raise ValidationError("method", "must be an HTTP method such as GET or POST")
        verb = method.upper()
        if idempotent is None:
            idempotent = verb in READ_METHODS
        target = None
        if isinstance(json, Mapping):
            target = next(
                (json[key] for key in _TARGET_KEYS if isinstance(json.get(key), str)), None
            )
        return Call(
            verb, relative_path(path), _identity,
            Safety.IDEMPOTENT if idempotent else Safety.MONEY,
            query=query_items(params), body=json, target=target, flat=None,
        )


class PageWalk:
    """One walk over every page of monitored addresses: the first call, then each next one."""

    def __init__(
        self,
        first: Call[MonitoredAddressPage],
        follow: Callable[[int], Call[MonitoredAddressPage]],
    ) -> None:
        self.first = first
        self._follow = follow
        self._seen: set[str] = set()

    def take(self, page: MonitoredAddressPage) -> tuple[MonitoredAddress, ...]:
        """The page's addresses, once each: an address the walk already listed means the
        service's pages overlap (or repeat forever), and the walk stops with an error
        rather than count an address twice or never end."""
        for item in page.addresses:
            if item.address in self._seen:
                raise UnexpectedResponseError(
                    f"monitored address page {page.page}: {item.address} was already listed "
                    f"(after {len(self._seen)} addresses); the service's pages are "
                    "inconsistent")
            self._seen.add(item.address)
        return page.addresses

    def after(self, page: MonitoredAddressPage) -> Call[MonitoredAddressPage] | None:
        """The call for the page after ``page`` (taken), or None when the walk is done."""
        following = next_page(page, len(self._seen))
        return None if following is None else self._follow(following)


def next_page(page: MonitoredAddressPage, seen: int) -> int | None:
    """The page to fetch after ``page`` (``seen`` items so far), or None when done."""
    if not page.addresses or len(page.addresses) < page.page_size or seen >= page.total:
        return None
    return page.page + 1
