"""Every entry point the two pyproject.toml files declare (console scripts, the provider's
registration, the plugins; the sandbox's command) names a module and an attribute of its
package as it is in the source tree:
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
SANDBOX = tomllib.loads((ROOT / "sandbox" / "pyproject.toml").read_text(encoding="utf-8"))
TARGETS |= {f"sandbox scripts: {name}": target
            for name, target in SANDBOX["project"]["scripts"].items()}


def test_the_commands_are_declared():
    assert {"scripts: tronenergy-purchases", "scripts: tronenergy-payouts",
            "scripts: tronenergy-deposits", "scripts: tronenergy-receiver",
            "scripts: tronenergy-doctor",
            "sandbox scripts: tronenergy-sandbox"} <= set(TARGETS)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_each_entry_point_names_what_the_package_holds(name: str):
    module, _, attribute = TARGETS[name].partition(":")
    package = "tronenergy_sandbox" if name.startswith("sandbox") else "airflow_provider_tronenergy"
    assert module.startswith(package), TARGETS[name]
    loaded = importlib.import_module(module)
    for part in filter(None, attribute.split(".")):
        loaded = getattr(loaded, part)
    assert loaded is not None
