"""Which tests need no Airflow: those of the framework-free rooms, file by file.

A framework-free room (the client, the wire protocol, the sandbox, the node client, ...)
runs the same code whatever Airflow is installed, so the lowest Airflow's CI run
(``.ci/run``) leaves its tests out (``-m "not framework_free"``): ``tests/conftest.py``
marks them. ``tests/packaging/test_framework_free.py`` holds the rooms to it: none imports
Airflow, in the package or in the tests marked, which it imports in a fresh interpreter.
Read with ``ast``, never imported here.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
SUPPORT = TESTS / "support"
PACKAGE = "airflow_provider_tronenergy"

ROOMS = frozenset({"protocol", "client", "node", "signer", "sandbox", "fanout"})
"""The rooms whose code never imports Airflow (each a folder or a top-level module)."""
SANDBOX = "tronenergy_sandbox"
"""The room "sandbox" is a distribution of its own (sandbox/), its package this one."""
SHARED = "tronenergy_protocol"
"""So is the room "protocol" (protocol/), the code the provider and the sandbox share."""
SOURCES = {"sandbox": ROOT / "sandbox" / SANDBOX, "protocol": ROOT / "protocol" / SHARED}
"""Where a room's code lives when not in the package."""
PACKAGES = {SANDBOX: "sandbox", SHARED: "protocol"}
ALWAYS_FREE = frozenset({"errors", "__init__"})
"""What every room may import (docs/architecture.md's Layers): free of Airflow too."""


def imported(path: Path) -> Iterator[str]:
    """Every absolute module name ``path`` imports, anywhere in its body."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def package_room(module: str) -> str | None:
    """``airflow_provider_tronenergy.client.aio`` -> ``client``; ``tronenergy_sandbox...``
    -> ``sandbox``, ``tronenergy_protocol...`` -> ``protocol``; None for another package;
    ``__init__`` for the package itself and a name it holds (``__version__``)."""
    for package, name in PACKAGES.items():
        if module == package or module.startswith(package + "."):
            return name
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    name = [*module.split("."), "__init__"][1]
    source = ROOT / PACKAGE
    return name if (source / name).is_dir() or (source / f"{name}.py").is_file() else "__init__"


def room_paths(name: str) -> list[Path]:
    """The modules of a room: a folder's (the sandbox's in its own distribution), or one."""
    folder = SOURCES.get(name, ROOT / PACKAGE / name)
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [ROOT / PACKAGE / f"{name}.py"]


def module_of(path: Path) -> str:
    """The dotted name ``path`` is imported as (``tronenergy_sandbox.chain.wire``)."""
    base = next((home.parent for home in SOURCES.values() if path.is_relative_to(home)), ROOT)
    return ".".join(path.relative_to(base).with_suffix("").parts).removesuffix(".__init__")


def is_airflow(module: str) -> bool:
    return module == "airflow" or module.startswith("airflow.")


def helpers(path: Path) -> set[str]:
    """The ``support`` modules ``path`` imports, by name."""
    return {module.split(".")[1] for module in imported(path)
            if module.startswith("support.") and (SUPPORT / f"{module.split('.')[1]}.py").is_file()}


def imports_nothing_of_airflow(path: Path) -> bool:
    """No ``airflow`` import, and of the package only framework-free rooms."""
    for module in imported(path):
        room = package_room(module)
        if is_airflow(module) or (room is not None and room not in ROOMS | ALWAYS_FREE):
            return False
    return True


@functools.cache
def free_helpers() -> frozenset[str]:
    """The ``support`` modules free of Airflow at any depth (a loop between them is fine)."""
    paths = {path.stem: path for path in SUPPORT.glob("*.py")}
    free = {name for name, path in paths.items() if imports_nothing_of_airflow(path)}
    while True:
        still = {name for name in free if helpers(paths[name]) <= free}
        if still == free:
            return frozenset(free)
        free = still


def file_is_free(path: Path) -> bool:
    """What ``path`` imports is free of Airflow: no ``airflow``, only framework-free rooms
    of the package, and only ``support`` modules that are free themselves."""
    return imports_nothing_of_airflow(path) and helpers(path) <= free_helpers()


def in_a_free_room(path: Path) -> bool:
    """A test file of a framework-free room: ``tests/<room>/...`` or ``tests/test_<room>*``."""
    relative = path.resolve().relative_to(TESTS)
    if len(relative.parts) > 1:
        return relative.parts[0] in ROOMS
    return any(relative.stem == f"test_{room}" or relative.stem.startswith(f"test_{room}_")
               for room in ROOMS)


@functools.cache
def is_framework_free(path: Path) -> bool:
    """A test file the lowest Airflow's run may leave out: a free room's, importing no
    Airflow (a hook's test in ``tests/client`` still runs there)."""
    try:
        return path.suffix == ".py" and in_a_free_room(path) and file_is_free(path)
    except ValueError:  # outside tests/
        return False
