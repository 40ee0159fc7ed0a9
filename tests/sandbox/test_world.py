"""The world is split by job behind one entry point; the sandbox shares only protocol code."""

from __future__ import annotations

import ast
from decimal import Decimal
from pathlib import Path

import pytest

import tronenergy_sandbox as sandbox_pkg
from tronenergy_sandbox import (
    account,
    credentials,
    database,
    deliveries,
    errors,
    orders,
    world,
)

SANDBOX_DIR = Path(sandbox_pkg.__file__).parent


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("World", world),
        ("WorldError", errors),
        ("Credentials", credentials),
        ("DueDelivery", deliveries),
        ("RETRY_DELAYS", deliveries),
        ("PROCESSING_AFTER", orders),
        ("SUCCESS_AFTER", orders),
        ("IN_FLIGHT", account),
        ("SCHEMA", database),
        ("iso", database),
    ],
)
def test_sandbox_world_still_exports(name: str, home: object) -> None:
    assert getattr(world, name) is getattr(home, name)


def test_world_offers_every_operation_the_http_layer_calls() -> None:
    for method in (
        "credentials", "account", "price", "set_balance", "available_sun", "advance",
        "buy", "buy_count", "auto_buy", "smart_buy", "activate", "check_address", "order",
        "all_orders", "fail_next_orders", "end_order", "is_activated", "holds",
        "set_activated", "set_holder", "transfer_energy", "monitor_add", "monitor_delete",
        "monitor_list", "monitor_stats", "webhook_secret_for", "transfer", "due_deliveries",
        "next_due_at", "record_attempt", "delivery_for_resend", "delivery", "all_deliveries",
        "close",
    ):
        assert callable(getattr(world.World, method)), method


def test_world_clock_set_on_the_instance_drives_every_part() -> None:
    w = world.World()
    w.clock = lambda: 1_700_000_000.0
    w.set_activated("TTarget")
    order = w.buy("TTarget", 65_000, Decimal("1"))
    assert order["created_at"] == "2023-11-14T22:13:20Z"
    w.close()


def _package_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("airflow_provider_tronenergy")}


@pytest.mark.parametrize("path", sorted(SANDBOX_DIR.rglob("*.py")),
                         ids=lambda p: str(p.relative_to(SANDBOX_DIR)))
def test_sandbox_shares_only_protocol_with_the_client(path: Path) -> None:
    """What it shares with the client is tronenergy_protocol (protocol/, which the provider
    requires too): nothing of the provider, which would bring Airflow with it."""
    assert _package_imports(path) == set()
