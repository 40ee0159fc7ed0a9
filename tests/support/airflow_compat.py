"""Test-harness shims for older Airflow releases (never product code)."""

from __future__ import annotations

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
