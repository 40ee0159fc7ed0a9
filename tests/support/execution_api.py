"""dag.test() on Airflow 3.1 as fast as on later releases: one in-process Execution API."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator


@contextlib.contextmanager
def one_execution_api() -> Iterator[None]:
    """One in-process Execution API for every ``dag.test()`` task of the session.

    Airflow 3.1's ``dag.test()`` builds a new one (a FastAPI app, an event-loop thread
    and its database connections) for every task: some 2.5 s per task on a 2-core
    machine, most of the 3.1.8 part of CI. Later releases cache it (apache/airflow
    #65235: ``functools.lru_cache`` on ``supervisor.in_process_api_server``), so 3.3
    runs the suite that way already; this gives 3.1 the same cache, and the same speed.
    """
    from airflow.sdk.execution_time import supervisor

    build = supervisor.in_process_api_server
    if hasattr(build, "cache_info"):  # cached by Airflow itself
        yield
        return
    supervisor.in_process_api_server = functools.lru_cache(maxsize=1)(build)
    try:
        yield
    finally:
        supervisor.in_process_api_server = build
