"""Each endpoint once: argument checks, what goes on the wire, how the answer is read.

The sync and async clients only run these :class:`Call` objects, so the two
cannot disagree about an endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from airflow_provider_tronenergy.client import validation as check
from airflow_provider_tronenergy.client.core import (
    Call,
    path_segment,
    query_items,
    relative_path,
)
from airflow_provider_tronenergy.client.errors import ValidationError
from airflow_provider_tronenergy.client.models import (
    Account,
    Activation,
    AddressCheck,
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
    """Turns method arguments into validated calls, under one set of validation rules."""

    def __init__(self, rules: ValidationRules | None = None) -> None:
        self.rules = rules or ValidationRules()

    def get_account(self) -> Call[Account]:
        return Call("GET", "/energy/account", Account.from_data)

    def get_price(self, rent_time: Any) -> Call[Price]:
        hours = check.rent_time(rent_time, self.rules.price_rent_times)
        return Call("GET", "/energy/price", Price.from_data, query=(("rent_time", _hours(hours)),))

    def buy_energy(self, target_address: Any, energy_amount: Any, rent_time: Any) -> Call[Purchase]:
        target = check.address(target_address, "target_address")
        body = {
            "target_address": target,
            "energy_amount": check.energy_amount(energy_amount, self.rules),
            "rent_time": check.rent_time(rent_time, self.rules.buy_rent_times),
        }
        return Call("POST", "/energy/buy", Purchase.from_data, Safety.MONEY, body=body,
                    target=target)

    def auto_buy_energy(self, from_address: Any, to_address: Any, rent_time: Any) -> Call[Purchase]:
        sender = check.address(from_address, "from_address")
        body = {
            "from_address": sender,
            "to_address": check.address(to_address, "to_address"),
            "rent_time": check.rent_time(rent_time, self.rules.auto_buy_rent_times),
        }
        return Call("POST", "/energy/auto-buy", Purchase.from_data, Safety.MONEY, body=body,
                    target=sender)

    def buy_energy_by_count(
        self, target_address: Any, count: Any, rent_time: Any
    ) -> Call[Purchase]:
        target = check.address(target_address, "target_address")
        body = {
            "target_address": target,
            "count": check.count(count),
            "rent_time": check.rent_time(rent_time, self.rules.buy_count_rent_times),
        }
        return Call("POST", "/energy/buy-count", Purchase.from_data, Safety.MONEY, body=body,
                    target=target)

    def smart_buy_energy(
        self, receiver_address: Any, to_address: Any, from_address: Any, rent_time: Any
    ) -> Call[SmartPurchase]:
        receiver = check.address(receiver_address, "receiver_address")
        body: dict[str, Any] = {
            "receiver_address": receiver,
            "to_address": check.address(to_address, "to_address"),
        }
        sender = check.optional_address(from_address, "from_address")
        if sender is not None:
            body["from_address"] = sender
        body["rent_time"] = check.rent_time(rent_time, self.rules.smart_buy_rent_times)
        return Call("POST", "/energy/smart-buy", SmartPurchase.from_data, Safety.MONEY,
                    body=body, target=receiver)

    def check_address(self, address: Any) -> Call[AddressCheck]:
        body = {"address": check.address(address, "address")}
        return Call("POST", "/energy/check-address", AddressCheck.from_data, body=body)

    def activate_address(self, address: Any) -> Call[Activation]:
        target = check.address(address, "address")
        return Call("POST", "/energy/activate", Activation.from_data, Safety.MONEY,
                    body={"address": target}, target=target, flat=True)

    def get_order(self, order_id: Any) -> Call[Order]:
        path = f"/energy/order/{path_segment(check.order_id(order_id))}"
        return Call("GET", path, Order.from_data)

    def get_monitor_stats(self) -> Call[MonitorStats]:
        return Call("GET", "/tron-monitor/stats", MonitorStats.from_data)

    def list_monitored_addresses(
        self, page: Any, page_size: Any, status: Any
    ) -> Call[MonitoredAddressPage]:
        number = check.page(page)
        size = check.page_size(page_size, self.rules)
        state = check.monitor_status(status)
        query = [("page", str(number)), ("page_size", str(size))]
        if state is not None:
            query.append(("status", state))

        def parse(data: Any) -> MonitoredAddressPage:
            return MonitoredAddressPage.from_data(data, page=number, page_size=size)

        return Call("GET", "/tron-monitor/addresses", parse, query=tuple(query))

    def add_monitored_address(
        self, address: Any, webhook_url: Any, label: Any, tokens: Any
    ) -> Call[MonitorRegistration]:
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

    def remove_monitored_address(self, address: Any) -> Call[None]:
        target = check.address(address, "address")
        return Call("DELETE", f"/tron-monitor/addresses/{target}", _none, target=target,
                    gone_means_done=True)

    def request(
        self,
        method: Any,
        path: Any,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        idempotent: bool | None = None,
    ) -> Call[Any]:
        """A signed call to an endpoint the spec names without a shape.

        Unless the caller says otherwise, anything but a read is treated as
        moving money: never resent once it may have reached the server.
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


def next_page(page: MonitoredAddressPage, seen: int) -> int | None:
    """The page to fetch after ``page`` (``seen`` items so far), or None when done."""
    if not page.addresses or len(page.addresses) < page.page_size or seen >= page.total:
        return None
    return page.page + 1
