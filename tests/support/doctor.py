"""The doctor's tests: a deployment's settings as environment variables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.sandbox import node_connection_json


def node_connection(node_root: str, **extra: Any) -> str:
    """A ``tron_node`` connection (``AIRFLOW_CONN_*`` JSON) to the sandbox's custom chain."""
    return node_connection_json(node_root, **extra)


def signer_connection(key_hex: str) -> str:
    return json.dumps({"conn_type": "tron_signer", "password": key_hex})


def store_env(folder: Path) -> dict[str, str]:
    """The four stores as SQLite files in ``folder`` (three databases), a local executor."""
    return {"TRONENERGY_PURCHASE_JOURNAL": f"sqlite:///{folder / 'journal.db'}",
            "TRONENERGY_CALLBACK_STORE": f"sqlite:///{folder / 'callbacks.db'}",
            "TRONENERGY_DEPOSITS_DB": f"sqlite:///{folder / 'deposits.db'}",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor"}


def failing(report: dict[str, Any]) -> set[str]:
    """The names of the failing lines of a ``--json`` report."""
    return {c["name"] for c in report["checks"] if c["status"] == "FAIL"}
