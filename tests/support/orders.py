"""Drive the sandbox's orders from tests: a manual world clock, control API, a director.

The sandbox's world clock is replaced by a :class:`ManualClock`: an order stays
``pending`` until the test advances the clock (1 s -> processing, 3 s -> success)
or fails / cancels it through the control API. No test depends on timing.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import requests

from airflow_provider_tronenergy.client import TronEnergyClient
from airflow_provider_tronenergy.protocol.address import random_address
from airflow_provider_tronenergy.sandbox import SandboxServer


class ManualClock:
    """The sandbox world's clock: stands still until advanced."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def wait_until(predicate: Callable[[], bool], what: str, limit: float = 30.0) -> None:
    """Wait for a condition (a bound on waiting, not a timing assertion)."""
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.01)


class Control:
    """The sandbox's control API plus a purchase through the real sync client."""

    def __init__(self, sandbox: SandboxServer, clock: ManualClock) -> None:
        self.sandbox = sandbox
        self.clock = clock
        self.root = f"{sandbox.root_url}/sandbox"
        self.session = requests.Session()

    def call(self, method: str, path: str, body: Any = None) -> Any:
        response = self.session.request(method, self.root + path, json=body, timeout=10)
        assert response.status_code == 200, response.text
        return response.json()["data"]

    def buy(self) -> str:
        """A pending order for a freshly activated address; returns its order_id."""
        target = random_address()
        self.call("POST", f"/addresses/{target}/activate")
        with TronEnergyClient(self.sandbox.url, self.sandbox.api_key,
                              self.sandbox.api_secret) as client:
            return client.buy_energy(target).order_id

    def status(self, order_id: str) -> str:
        orders = {o["order_id"]: o for o in self.call("GET", "/orders")}
        return str(orders[order_id]["status"])

    def succeed(self, order_id: str) -> None:
        self.clock.advance(3.5)
        assert self.status(order_id) == "success"

    def fail(self, order_id: str) -> None:
        self.call("POST", f"/orders/{order_id}/fail")

    def cancel(self, order_id: str) -> None:
        self.call("POST", f"/orders/{order_id}/cancel")

    def fault(self, **spec: Any) -> dict[str, Any]:
        return dict(self.call("POST", "/faults", spec))

    def faults(self) -> list[dict[str, Any]]:
        return list(self.call("GET", "/faults"))

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


class Director(threading.Thread):
    """Acts on an order once it has been polled ``after_polls`` times, beside a DAG run."""

    def __init__(self, control: Control, order_id: str, after_polls: int,
                 action: Callable[[str], None]) -> None:
        super().__init__(daemon=True)
        self.control, self.order_id = control, order_id
        self.after_polls, self.action = after_polls, action
        self.error: BaseException | None = None
        self.polls_before_action: int | None = None

    def run(self) -> None:
        try:
            wait_until(lambda: self.control.polls(self.order_id) >= self.after_polls,
                       f"{self.after_polls} polls of order {self.order_id}")
            self.polls_before_action = self.control.polls(self.order_id)
            self.action(self.order_id)
        except BaseException as exc:
            self.error = exc

    def check(self) -> None:
        self.join(30)
        assert not self.is_alive(), "director still waiting"
        if self.error is not None:
            raise self.error


def connection_json(sandbox: SandboxServer, *, secret: str | None = None) -> str:
    # max_retries 0: every transient failure reaches the sensor / trigger itself.
    return json.dumps({
        "conn_type": "tronenergy", "host": sandbox.url, "login": sandbox.api_key,
        "password": secret or sandbox.api_secret, "extra": {"max_retries": 0},
    })
