"""Drive the sandbox's orders from tests: a manual world clock, its fixtures, a director.

The sandbox's world clock is replaced by a :class:`ManualClock`: an order stays
``pending`` until the test advances the clock (1 s -> processing, 3 s -> success)
or fails / cancels it through the control API (support.control). No test depends
on timing. A test module takes the fixtures by assigning them::

    sandbox, conn = orders.sandbox, orders.conn
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from support.control import Control
from support.sandbox import default_connection, running_sandbox
from support.waiting import wait_until
from tronenergy_sandbox import SandboxServer

# The order tests' connection: max_retries 0, so every transient failure reaches the
# sensor / trigger itself (``connection_json(sandbox, secret=..., **CONN_OPTIONS)``).
CONN_OPTIONS: dict[str, Any] = {"webhook": False, "max_retries": 0}


class ManualClock:
    """The sandbox world's clock: stands still until advanced."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    """A sandbox whose orders move only when a test advances ``control.clock``."""
    with running_sandbox(time_scale=1.0, clock=ManualClock()) as server:
        yield server


@pytest.fixture
def conn(sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch) -> str:
    return default_connection(monkeypatch, sandbox, **CONN_OPTIONS)


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
            wait_until(lambda: self.control.polls(self.order_id) >= self.after_polls, 30,
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
