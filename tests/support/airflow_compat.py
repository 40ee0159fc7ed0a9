"""Test-harness shims for older Airflow releases (never product code)."""

from __future__ import annotations

import functools
import json
import os
from typing import Any

import pytest


def airflow_version() -> tuple[int, int]:
    from airflow import __version__

    major, minor = __version__.split(".")[:2]
    return int(major), int(minor)


def requires_airflow(major: int, minor: int, why: str) -> pytest.MarkDecorator:
    """Skip, saying why, on Airflow releases older than the feature under test."""
    return pytest.mark.skipif(airflow_version() < (major, minor),
                              reason=f"needs Airflow >= {major}.{minor}: {why}")


def triggerer_import_string() -> Any:
    """The function the triggerer resolves a stored trigger classpath with, on this release."""
    try:
        from airflow._shared.module_loading import import_string
    except ImportError:  # Airflow 3.1
        from airflow.utils.module_loading import import_string
    return import_string


def asset_watcher_table() -> str:
    """The metadata table joining an asset to its watchers' triggers (``asset_id``,
    ``trigger_id``): ``asset_watcher`` since Airflow 3.2, ``asset_trigger`` before."""
    return "asset_watcher" if airflow_version() >= (3, 2) else "asset_trigger"


def shared_streams() -> bool:
    """Whether the triggerer has ack-mode shared streams (Airflow 3.3+), which tell a
    watcher's trigger that its event was persisted."""
    try:
        from airflow.triggers.shared_stream import SharedStreamProducer  # noqa: F401
    except ImportError:
        return False
    return True


UNREADABLE: str = "is set, but Airflow could not read a connection from it"
"""What the provider says of a connection Airflow 3.1 dropped as unreadable (hooks.lookup)."""


@functools.cache
def reads_unreadable_extras() -> bool:
    """Whether this Airflow hands a connection whose Extra is not a JSON object to the hook
    (3.3 does; 3.1 drops it from the environment as if it were not defined)."""
    from airflow.providers.common.compat.sdk import AirflowNotFoundException, BaseHook

    name = "te_probe_unreadable_extra"
    variable = f"AIRFLOW_CONN_{name.upper()}"
    os.environ[variable] = json.dumps({"conn_type": "generic", "extra": "{,"})
    try:
        BaseHook.get_connection(name)
        return True
    except AirflowNotFoundException:
        return False
    finally:
        del os.environ[variable]


def malformed_says(says: str) -> str:
    """What a task says of a connection whose Extra is not a JSON object: the hook's
    ``says``, or, where Airflow drops such a connection before a hook sees it, the lookup's
    word for a variable it could not read. Either way the task fails once."""
    return says if reads_unreadable_extras() else UNREADABLE


def hands_malformed_extras() -> pytest.MarkDecorator:
    """Skip a hook-level test where Airflow never hands the hook such a connection."""
    return pytest.mark.skipif(
        not reads_unreadable_extras(),
        reason="this Airflow drops a connection whose Extra is not a JSON object before a "
               "hook reads it: the task-level tests prove it fails once (hooks.lookup)")
