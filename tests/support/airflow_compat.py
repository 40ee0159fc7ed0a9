"""Test-harness shims for older Airflow releases (never product code)."""

from __future__ import annotations

from typing import Any

import pytest


def json_bodies_for_airflow_3_0(monkeypatch: pytest.MonkeyPatch) -> None:
    """Test-harness fix for Airflow 3.0's dag.test() with a current FastAPI (not our code).

    The 3.0 Task SDK's in-process Execution API client sends JSON bodies without a
    Content-Type; FastAPI's ``strict_content_type`` (on by default in recent
    releases) then answers 422 before any task runs. Airflow >= 3.1 sends it.
    """
    from airflow.sdk.execution_time import supervisor

    original = supervisor.InProcessTestSupervisor._api_client

    def with_json_content_type(dag: Any = None) -> Any:
        api_client = original(dag)
        api_client.headers["content-type"] = "application/json"
        return api_client

    monkeypatch.setattr(supervisor.InProcessTestSupervisor, "_api_client",
                        staticmethod(with_json_content_type))


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
    except ImportError:  # Airflow < 3.1
        from airflow.utils.module_loading import import_string
    return import_string
