"""The sandbox as its own distribution (sandbox/, ``tronenergy-sandbox``): it builds, its
wheel holds the emulator and its console script, and it goes with the provider's release,
sharing its code (``tronenergy-protocol``), never requiring the provider.

The provider's wheel holds no sandbox (test_distribution.py); the tests, benches and main
job install this one beside it (scripts/bootstrap.sh); installed alone it brings no Airflow
(test_sandbox_without_airflow.py).
"""

from __future__ import annotations

import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement

from airflow_provider_tronenergy import __version__
from support.dist import build

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "sandbox"
PROJECT = tomllib.loads((SANDBOX / "pyproject.toml").read_text(encoding="utf-8"))["project"]
DIST_INFO = f"tronenergy_sandbox-{__version__}.dist-info"


def test_it_is_the_providers_release():
    """The sandbox imports the code it shares with the provider: one version for both, and
    it asks for exactly the shared code of its own release, and for nothing of the provider
    (which would bring Airflow)."""
    assert PROJECT["name"] == "tronenergy-sandbox"
    assert PROJECT["version"] == __version__
    names = [Requirement(line).name for line in PROJECT["dependencies"]]
    assert "airflow-provider-tronenergy" not in names
    assert not [name for name in names if "airflow" in name]
    [shared] = [Requirement(line) for line in PROJECT["dependencies"]
                if Requirement(line).name == "tronenergy-protocol"]
    assert str(shared.specifier) == f"=={__version__}"


def test_its_script_is_its_own():
    assert PROJECT["scripts"] == {"tronenergy-sandbox": "tronenergy_sandbox.cli:main"}
    provider = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert [name for name in provider["scripts"] if "sandbox" in name] == []


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sandbox-dist")
    result = build(SANDBOX, out)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [built] = out.glob("*.whl")
    return built


@pytest.mark.slow
def test_its_wheel_holds_the_sandbox(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = Parser().parsestr(archive.read(f"{DIST_INFO}/METADATA").decode())
        scripts = archive.read(f"{DIST_INFO}/entry_points.txt").decode()
    assert {name.split("/")[0] for name in names} == {"tronenergy_sandbox", DIST_INFO}
    modules = {name for name in names if name.endswith(".py")}
    source = {str(path.relative_to(SANDBOX)) for path in (SANDBOX / "tronenergy_sandbox")
              .rglob("*.py")}
    assert modules == source
    assert {"tronenergy_sandbox/server.py", "tronenergy_sandbox/chain/wire.py"} <= modules
    # Nothing of the provider or of the shared code is copied into it: it requires the
    # shared code instead.
    assert not [name for name in names
                if name.startswith(("airflow_provider_tronenergy", "tronenergy_protocol"))]
    assert metadata["Name"] == "tronenergy-sandbox"
    assert metadata["Version"] == __version__
    requires = metadata.get_all("Requires-Dist")
    assert f"tronenergy-protocol=={__version__}" in requires
    assert not [line for line in requires if "airflow" in line]
    assert "tronenergy-sandbox = tronenergy_sandbox.cli:main" in scripts
