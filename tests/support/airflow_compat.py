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
