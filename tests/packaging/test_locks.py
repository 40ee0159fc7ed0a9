"""The locked environments (requirements/airflow-X.txt, made by scripts/lock.sh) fit
pyproject.toml: every dependency and dev tool pinned, in its range, for each Airflow
release CI runs. A dependency added to pyproject.toml without `bash scripts/lock.sh`
fails here, before a fresh clone installs it unpinned."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# The sandbox, this repository's second distribution (sandbox/): its dependencies are locked
# too; the third, the code both share (protocol/), has none. No distribution of the
# repository is locked (scripts/bootstrap.sh installs the three from the checkout).
SANDBOX = tomllib.loads((ROOT / "sandbox" / "pyproject.toml").read_text(encoding="utf-8"))
SHARED = tomllib.loads((ROOT / "protocol" / "pyproject.toml").read_text(encoding="utf-8"))
LOCAL = {canonicalize_name(PYPROJECT["project"]["name"]),
         canonicalize_name(SANDBOX["project"]["name"]),
         canonicalize_name(SHARED["project"]["name"])}
VERSIONS = re.search(r'^LOCKED_AIRFLOW_VERSIONS="([^"]+)"$',
                     (ROOT / "scripts" / "uv.sh").read_text(encoding="utf-8"), re.MULTILINE)
LOCKED = VERSIONS[1].split() if VERSIONS else []
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==(?P<version>\S+?)"
                 r"(?:\s*;\s*(?P<marker>.+))?$")
# Where CI runs (.ci/run): the markers of a platform-dependent pin are read for it.
LINUX_311 = {"python_version": "3.11", "python_full_version": "3.11.7", "sys_platform": "linux",
             "platform_system": "Linux", "os_name": "posix", "platform_machine": "x86_64",
             "implementation_name": "cpython", "platform_python_implementation": "CPython"}


def pins(version: str) -> dict[str, Version]:
    """The lock's pins that apply on Linux / CPython 3.11, by canonical name."""
    found = {}
    text = (ROOT / "requirements" / f"airflow-{version}.txt").read_text(encoding="utf-8")
    for line in text.splitlines():
        if not (line := line.split(" #", 1)[0].strip()) or line.startswith("#"):
            continue
        pin = PIN.match(line)
        assert pin, f"not an exact pin in airflow-{version}.txt: {line!r}"
        if pin["marker"] and not Marker(pin["marker"]).evaluate(LINUX_311):
            continue
        found[canonicalize_name(pin["name"])] = Version(pin["version"])
    return found


def test_both_releases_ci_runs_are_locked():
    assert LOCKED == ["3.3.2", "3.1.8"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "AIRFLOW_VERSION=3.1.8" in ci
    assert 'AIRFLOW_VERSION="${AIRFLOW_VERSION:-3.3.2}"' in (
        ROOT / "scripts" / "bootstrap.sh").read_text(encoding="utf-8")


@pytest.mark.parametrize("version", LOCKED)
def test_a_lock_pins_every_requirement_in_its_range(version):
    locked = pins(version)
    assert locked[canonicalize_name("apache-airflow")] == Version(version)
    wanted = [*PYPROJECT["project"]["dependencies"],
              *PYPROJECT["project"]["optional-dependencies"]["dev"],
              *SANDBOX["project"]["dependencies"], *SHARED["project"]["dependencies"]]
    assert LOCAL & set(locked) == set()  # this checkout, installed editable
    wrong = []
    for line in wanted:
        requirement = Requirement(line)
        if canonicalize_name(requirement.name) in LOCAL:
            continue
        pinned = locked.get(canonicalize_name(requirement.name))
        if pinned is None or pinned not in requirement.specifier:
            wrong.append(f"{line}: locked {pinned}")
    assert wrong == [], f"run `bash scripts/lock.sh`: {wrong}"


def test_the_package_itself_keeps_ranges():
    """The locks bind this repository's environments only: a user's Airflow resolves the
    package's own ranges (test_distribution.py installs the wheel so). The one pin is the
    shared code of the same release, a distribution of this repository."""
    pinned = [line for line in PYPROJECT["project"]["dependencies"] if "==" in line]
    assert [canonicalize_name(Requirement(line).name) for line in pinned] == [
        canonicalize_name(SHARED["project"]["name"])]
