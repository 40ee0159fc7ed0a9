"""The tests mirror the package, so a newcomer finds a module's tests where the module is.

A folder of tests is named after a room of the package (``tests/hooks`` for
``airflow_provider_tronenergy/hooks``; ``tests/sandbox`` for the sandbox's distribution,
``sandbox/tronenergy_sandbox``, ``tests/protocol`` for the shared code's,
``protocol/tronenergy_protocol``) or a top-level module with many tests
(``tests/<module>/``), or is one of the few groups that test no single room (end-to-end
deployments, the example DAGs, the main job, the distribution). A test file at the top
of ``tests/`` names a top-level module (``tests/test_errors.py``).
Helpers live in one place, ``tests/support``; a folder's conftest.py holds fixtures only.
Read from the files, never imported, so a broken test module cannot hide a misplaced one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
PACKAGE = ROOT / "airflow_provider_tronenergy"
# The sandbox and the shared code, distributions of their own, are tested as rooms:
# tests/sandbox, tests/protocol.
DISTRIBUTIONS = {"sandbox": ROOT / "sandbox" / "tronenergy_sandbox",
                 "protocol": ROOT / "protocol" / "tronenergy_protocol"}

# Folders that test no single room: what each holds.
GROUPS = {
    "dags": "DAG files the dag.test() tests run (the session's dags folder)",
    "e2e": "real deployments: scheduler, triggerer, workers, people in the loop",
    "example_dags": "the example DAGs users copy",
    "main_job": "the README's main-job command",
    "packaging": "the distribution, the provider's registration, rules on the code and tests",
    "support": "helpers and shared fixtures: the one home of test helpers",
}


def _rooms() -> set[str]:
    rooms = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}
    return rooms | {name for name, home in DISTRIBUTIONS.items()
                    if (home / "__init__.py").is_file()}


def _top_level_modules() -> set[str]:
    return {path.stem for path in PACKAGE.glob("*.py") if path.stem != "__init__"}


def _folders() -> list[Path]:
    return sorted(path for path in TESTS.iterdir()
                  if path.is_dir() and any(path.rglob("*.py")))


def test_every_test_folder_is_a_room_of_the_package_or_a_known_group():
    rooms, modules = _rooms(), _top_level_modules()
    assert rooms and modules, PACKAGE  # found: an empty set would let anything pass
    stray = [folder.name for folder in _folders()
             if folder.name not in rooms | modules | set(GROUPS)]
    assert stray == [], f"tests/{stray} name no room of the package; rooms: {sorted(rooms)}"


def test_a_test_file_at_the_top_names_a_top_level_module():
    modules = _top_level_modules()
    stray = [path.name for path in sorted(TESTS.glob("test_*.py"))
             if not any(path.stem == f"test_{m}" or path.stem.startswith(f"test_{m}_")
                        for m in modules)]
    assert stray == [], f"{stray} at the top of tests/ name no module of {sorted(modules)}"


@pytest.mark.parametrize("folder", [f for f in _folders() if f.name in _rooms()],
                         ids=lambda folder: folder.name)
def test_a_room_folder_holds_tests_and_fixtures_only(folder: Path):
    """Helpers go to tests/support, where every test folder can import them."""
    allowed = {"__init__.py", "conftest.py"}
    others = [str(path.relative_to(TESTS)) for path in sorted(folder.rglob("*.py"))
              if path.name not in allowed and not path.name.startswith("test_")]
    assert others == [], f"helpers outside tests/support: {others}"


def test_no_helper_module_outside_support():
    helpers = [str(path.relative_to(TESTS)) for path in sorted(TESTS.rglob("*helpers*.py"))
               if path.relative_to(TESTS).parts[0] != "support"]
    assert helpers == []


def _is_fixture(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return isinstance(target, ast.Attribute) and target.attr == "fixture"


@pytest.mark.parametrize("conftest", sorted(TESTS.rglob("conftest.py")),
                         ids=lambda path: str(path.parent.relative_to(ROOT)))
def test_a_conftest_holds_fixtures_only(conftest: Path):
    """No classes, no plain functions: those are helpers, and tests cannot import a conftest."""
    tree = ast.parse(conftest.read_text(), str(conftest))
    helpers = [node.name for node in tree.body
               if isinstance(node, ast.ClassDef)
               or (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and not node.name.startswith("pytest_")
                   and not any(_is_fixture(d) for d in node.decorator_list))]
    assert helpers == [], f"{conftest.relative_to(ROOT)}: move {helpers} to tests/support"


@pytest.mark.parametrize("folder", [f for f in _folders() if f.name in _rooms()],
                         ids=lambda folder: folder.name)
def test_a_room_folder_is_a_package(folder: Path):
    """Without ``__init__.py`` two rooms' ``test_order.py`` collide in pytest's namespace."""
    assert (folder / "__init__.py").is_file(), f"tests/{folder.name} has no __init__.py"
