"""Blocking work from a trigger, off the triggerer's event loop, where Airflow can still be
asked.

A hook's first read of its connection, or of a connection's ``extra_dejson``, asks the
triggerer's supervisor (Airflow masks the secrets it finds). From a thread of
``asyncio.to_thread`` that request runs on an event loop of its own, and on Airflow 3.1 its
answer is read out of order with the triggerer's own and the triggerer stops. asgiref's
``sync_to_async`` (Airflow's own way) routes such a request back to the triggerer's loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import sync_to_async

T = TypeVar("T")


async def off_loop(call: Callable[..., T], *args: Any) -> T:
    """``call(*args)`` in a worker thread, the event loop free meanwhile."""
    return await sync_to_async(call, thread_sensitive=False)(*args)
