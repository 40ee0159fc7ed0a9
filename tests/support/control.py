"""The sandbox's control API (``/sandbox``, no auth) from tests: the one ``Control``.

Seeds chain state, injects faults, reads orders and ends them. Numbers come back
exact (``Decimal``), never as floats.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import requests

from airflow_provider_tronenergy.client import TronEnergyClient
from tronenergy_protocol.address import random_address
from tronenergy_sandbox import SandboxServer

if TYPE_CHECKING:
    from support.orders import ManualClock


class Control:
    """One sandbox's control API, plus a purchase through the real sync client."""

    def __init__(self, sandbox: SandboxServer) -> None:
        self.sandbox = sandbox
        self.root = f"{sandbox.root_url}/sandbox"
        self.session = requests.Session()
        # One connection per call: a DAG test leaves this session idle for about the
        # sandbox's 5 s keep-alive, and a call sent as the server closed the idle
        # connection was reset (a teardown's clear_faults, once, in CI).
        self.session.headers["Connection"] = "close"

    @property
    def clock(self) -> ManualClock:
        """The sandbox world's clock: a ManualClock in the order tests (support.orders)."""
        clock: ManualClock = self.sandbox.state.world.clock
        return clock

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """One control request that must answer 200; returns its ``data``."""
        response = self.session.request(method, self.root + path, json=body, timeout=10)
        assert response.status_code == 200, response.text
        return json.loads(response.text, parse_float=Decimal)["data"]

    def post(self, path: str, body: Any = None) -> Any:
        return self.call("POST", path, body)

    # -- chain state and account ----------------------------------------------------------

    def activated(self, address: str | None = None, *, holder: bool = False) -> str:
        """A (fresh) activated address; with ``holder``, one that already holds USDT."""
        address = address or random_address()
        self.post(f"/addresses/{address}/activate")
        if holder:
            self.holder(address)
        return address

    def holder(self, address: str, token: str = "USDT") -> None:
        self.post(f"/addresses/{address}/holder", {"token": token})

    def balance(self, trx: str) -> None:
        self.post("/balance", {"balance": trx})

    def settle(self, timeout: float = 15.0) -> None:
        """Wait until no order is in flight: one that succeeds later spends its frozen cost
        from whatever balance a test set meanwhile (orders of earlier tests on a shared
        sandbox)."""
        deadline = time.monotonic() + timeout
        while any(o["status"] in ("pending", "processing") for o in self.orders()):
            assert time.monotonic() < deadline, "orders still in flight"
            time.sleep(0.1)

    def wallet(self, address: str | None = None, *, trx: str | None = None,
               usdt: str | None = None, staked: int | None = None) -> str:
        """A (fresh) address with on-chain TRX / USDT balances and staked energy."""
        address = address or random_address()
        balances = {k: v for k, v in (("trx", trx), ("usdt", usdt)) if v is not None}
        if balances:
            self.post(f"/addresses/{address}/balances", balances)
        if staked is not None:
            self.post(f"/addresses/{address}/energy", {"staked": staked})
        return address

    def withhold_delegations(self, count: int) -> None:
        """The next ``count`` orders succeed at the service; nothing reaches the chain."""
        self.post("/orders/outcome", {"status": "success", "withhold_delegation": True,
                                      "count": count})

    # -- faults ---------------------------------------------------------------------------

    def fault(self, **spec: Any) -> dict[str, Any]:
        return dict(self.post("/faults", spec))

    def faults(self) -> list[dict[str, Any]]:
        return list(self.call("GET", "/faults"))

    def clear_faults(self) -> None:
        self.call("DELETE", "/faults")

    def rate_limit(self, requests_per_second: int | str, **options: Any) -> dict[str, Any]:
        """The node answers as TronGrid over ``requests_per_second`` per key (``burst``,
        ``retry_after``, ``status``); the counts start again."""
        return dict(self.post("/rate-limit", {"requests_per_second": requests_per_second,
                                              **options}))

    def node_counts(self) -> dict[str, Any]:
        """The node requests and 429s the sandbox counted, per wall-clock second."""
        return dict(self.call("GET", "/rate-limit"))

    def count_polls(self, order_id: str) -> None:
        """Count GETs of this order (a no-op latency fault that never runs out).

        The sandbox fires only the first matching fault: add error faults before this.
        """
        self.fault(kind="latency", path=f"/energy/order/{order_id}", method="GET",
                   latency_ms=0)

    def polls(self, order_id: str) -> int:
        path = f"/energy/order/{order_id}"
        return sum(f["fired"] for f in self.faults()
                   if f["kind"] == "latency" and f["path"] == path)

    # -- orders ---------------------------------------------------------------------------

    def orders(self, target: str | None = None) -> list[dict[str, Any]]:
        """Every order the sandbox took, or those for ``target`` only."""
        orders: list[dict[str, Any]] = self.call("GET", "/orders")
        return [o for o in orders if target is None or o["target_address"] == target]

    def buy(self, target: str | None = None, energy: int = 65_000, rent_time: str = "1") -> str:
        """A pending order for ``target`` (default: a freshly activated address); its id."""
        target = target or self.activated()
        with TronEnergyClient(self.sandbox.url, self.sandbox.api_key,
                              self.sandbox.api_secret) as client:
            return client.buy_energy(target, energy, Decimal(rent_time)).order_id

    def status(self, order_id: str) -> str:
        orders = {o["order_id"]: o for o in self.orders()}
        return str(orders[order_id]["status"])

    def succeed(self, order_id: str) -> None:
        """Move the manual clock past the order's success (1 s processing, 3 s success)."""
        self.clock.advance(3.5)
        assert self.status(order_id) == "success"

    def fail(self, order_id: str) -> None:
        self.post(f"/orders/{order_id}/fail")

    def cancel(self, order_id: str) -> None:
        self.post(f"/orders/{order_id}/cancel")

    def fail_next_orders(self, count: int) -> None:
        self.post("/orders/outcome", {"status": "failed", "count": count})
