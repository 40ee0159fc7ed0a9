"""Every entry point pyproject.toml declares (console scripts, the provider's registration,
the plugins) names a module and an attribute of the package as it is in the source tree:
a module moved without its entry point would install a command that cannot start."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
TARGETS = {**{f"scripts: {name}": target for name, target in PROJECT["scripts"].items()},
           **{f"{group}: {name}": target
              for group, points in PROJECT["entry-points"].items()
              for name, target in points.items()}}


def test_the_commands_are_declared():
    assert "scripts: tronenergy-purchases" in TARGETS and len(PROJECT["scripts"]) >= 5


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_each_entry_point_names_what_the_package_holds(name: str):
    module, _, attribute = TARGETS[name].partition(":")
    assert module.startswith("airflow_provider_tronenergy"), TARGETS[name]
    loaded = importlib.import_module(module)
    for part in filter(None, attribute.split(".")):
        loaded = getattr(loaded, part)
    assert loaded is not None
