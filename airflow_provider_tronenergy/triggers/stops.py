"""A watcher stopped by what only a person fixes: one rule for every AssetWatcher trigger.

The triggerer starts an AssetWatcher's trigger again at once when it raises or ends. On a
cause no retry changes (a ``NotRetryable``: a node on another chain than its connection
says, a connection that names nothing or is malformed, a store on one host's SQLite file
while the executor runs tasks on several hosts) that is a restart loop: a run failed per
start, or, for a trigger that only logs, a watcher that watches nothing and says so to
nobody. So a watcher that meets one (:func:`until_fixed`):

* fires one ``error`` event (:func:`stopped`), which the run it wakes fails on, not
  retried (:func:`stops_in`: read by the keeper operator and the deposits example);
* fires no second event for the same cause while it has not read again since;
* reads again every ``recheck_after`` seconds, and goes on as before once it reads.

Its memory is the trigger's: a restarted triggerer tells a cause still there once more.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from airflow_provider_tronenergy.errors import NotRetryable

T = TypeVar("T")


class Log(Protocol):
    """What the rule logs through: a trigger's logger, or a module's."""

    def error(self, msg: str, /, *args: Any) -> Any: ...


def stopped(message: str, **names: str) -> dict[str, Any]:
    """The event of a watcher that cannot watch until a person fixes ``message``'s cause;
    ``names`` say whose watcher it is (``keeper=...``, ``consumer=...``)."""
    return {**names, "status": "error", "retryable": False, "message": message}


def stops_in(payloads: Iterable[Any], **names: str) -> list[str]:
    """The messages of the :func:`stopped` events among a run's payloads whose ``names``
    match (a watcher's own payloads carry no ``"status": "error"``)."""
    return [str(p.get("message")) for p in payloads if isinstance(p, Mapping)
            and p.get("status") == "error" and all(p.get(k) == v for k, v in names.items())]


def watcher_payloads(context: Mapping[str, Any]) -> list[Any]:
    """The watchers' payloads in the Asset events that triggered a run (none for a
    scheduled or manual run): an AssetWatcher's event keeps its trigger's under ``payload``."""
    triggering = context.get("triggering_asset_events") or {}
    return [(getattr(event, "extra", None) or {}).get("payload")
            for events in triggering.values() for event in events]


@dataclass(frozen=True)
class Stopped:
    """A shared stream's item for a stop (a producer's, whose subscribers fire the event)."""

    message: str


@dataclass
class Stops:
    """A watcher's memory of the cause it told: told once, until it reads again."""

    told: str | None = None

    def resumed(self) -> None:
        """It read again: a later stop is told again, even for the same words."""
        self.told = None

    def tell(self, message: str) -> bool:
        """Whether ``message`` is a cause not told yet (and remember it)."""
        if message == self.told:
            return False
        self.told = message
        return True


async def until_fixed(watch: Callable[[Stops], AsyncGenerator[T, None]],
                      told: Callable[[str], T], *, recheck_after: float, log: Log, what: str
                      ) -> AsyncIterator[T]:
    """``watch``'s items for ever; where it raises ``NotRetryable``, ``told(message)`` once
    per cause, and ``watch`` again after ``recheck_after`` seconds (the module's rules).
    ``watch`` calls :meth:`Stops.resumed` once it has read; anything else it raises passes."""
    stops = Stops()
    while True:
        try:
            async with contextlib.aclosing(watch(stops)) as items:
                async for item in items:
                    yield item
        except NotRetryable as exc:
            log.error("%s stopped: %s; reading again in %g s", what, exc, recheck_after)
            if stops.tell(str(exc)):
                yield told(str(exc))
        await asyncio.sleep(recheck_after)
