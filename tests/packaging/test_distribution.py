"""The sdist and the wheel as a package index gets them: contents, Project-URLs, description.

Builds both in isolation (the build backend comes from PyPI, as on any build machine:
``support.dist.build``), once for the module; then installs the wheel into a plain
Airflow, as a user does.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

import pytest

from airflow_provider_tronenergy import __version__
from airflow_provider_tronenergy.get_provider_info import REPOSITORY_URL, get_provider_info
from support.dist import build, installer

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# What the sdist holds at its top level: the package, the example DAGs and the docs the README
# links to, and what a build needs. No tests: they need this repository's harness.
SDIST_TOP_LEVEL = {"airflow_provider_tronenergy", "example_dags", "docs", "README.md",
                   "CHANGELOG.md", "SECURITY.md", "pyproject.toml", "hatch_build.py",
                   ".gitignore", "PKG-INFO"}
LINK_TARGET = re.compile(r"\]\(([^()\s]+)\)")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    result = build(ROOT, out)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def shared_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The code the provider shares with the sandbox (protocol/), which it requires exactly:
    a distribution of this repository, on no index until released."""
    out = tmp_path_factory.mktemp("shared-dist")
    result = build(ROOT / "protocol", out, wheel_only=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [wheel] = out.glob("*.whl")
    return wheel


def sdist_names(dist: Path) -> list[str]:
    [sdist] = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    prefix = f"airflow_provider_tronenergy-{__version__}/"
    assert all(name.startswith(prefix) or name + "/" == prefix for name in names)
    return [name.removeprefix(prefix) for name in names if name + "/" != prefix]


def wheel_metadata(dist: Path) -> Message:
    [wheel] = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return Parser().parsestr(archive.read(
            f"airflow_provider_tronenergy-{__version__}.dist-info/METADATA").decode())


def test_sdist_holds_no_tests(dist):
    names = sdist_names(dist)
    assert {name.split("/")[0] for name in names} == SDIST_TOP_LEVEL
    assert not [name for name in names if name.startswith("tests") or "/test_" in name]
    assert "example_dags/batch_payout_preparation.py" in names


def test_wheel_holds_the_package_only(dist):
    [wheel] = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        scripts = archive.read(
            f"airflow_provider_tronenergy-{__version__}.dist-info/entry_points.txt").decode()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"airflow_provider_tronenergy",
                    f"airflow_provider_tronenergy-{__version__}.dist-info"}
    # No emulator on every Airflow component: the sandbox is its own distribution
    # (test_sandbox_distribution.py).
    assert [name for name in names if "sandbox" in name] == []
    assert "tronenergy-receiver" in scripts
    assert "sandbox" not in scripts


def test_project_urls(dist):
    metadata = wheel_metadata(dist)
    urls = dict(entry.split(", ", 1) for entry in metadata.get_all("Project-URL"))
    assert urls == {
        "Homepage": REPOSITORY_URL,
        "Documentation": f"{REPOSITORY_URL}/tree/main/docs",
        "Source": REPOSITORY_URL,
        "Issues": f"{REPOSITORY_URL}/issues",
        "Changelog": f"{REPOSITORY_URL}/blob/main/CHANGELOG.md",
    }
    # Airflow's provider docs link and the package's point at the same place.
    [integration] = get_provider_info()["integrations"]
    assert integration["external-doc-url"] == urls["Documentation"]


def test_long_description_links_are_absolute(dist):
    metadata = wheel_metadata(dist)
    assert metadata["Description-Content-Type"] == "text/markdown"
    description = metadata.get_payload()
    targets = LINK_TARGET.findall(description)
    assert targets, "the README has links"
    assert [t for t in targets if not t.startswith(("https://", "http://"))] == []
    assert "](docs/" not in description
    assert f"]({REPOSITORY_URL}/blob/main/docs/connection.md)" in description
    assert f"]({REPOSITORY_URL}#the-example-dag)" in description
    # The sdist's PKG-INFO carries the same description.
    [sdist] = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        member = archive.extractfile(f"airflow_provider_tronenergy-{__version__}/PKG-INFO")
        assert member is not None
        assert Parser().parsestr(member.read().decode()).get_payload() == description
    # In the repository, the README keeps its relative links (they work there).
    assert "](docs/connection.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    # Code blocks are unchanged.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count("```") == description.count("```")


@pytest.mark.parametrize("airflow", ["apache-airflow==3.1.8", "apache-airflow"],
                         ids=["lowest-admitted", "newest"])
def test_the_wheel_installs_into_a_plain_airflow(dist, shared_wheel, tmp_path, airflow):
    """A user's install: the wheel and Airflow, resolved from the wheel's own ranges (never
    this repository's locks, requirements/), then Airflow finds the provider."""
    [wheel] = dist.glob("*.whl")
    requires = wheel_metadata(dist).get_all("Requires-Dist")
    pinned = [r for r in requires or [] if "==" in r.split(";")[0]]
    # Ranges, never pins, but for the shared code of the same release (this repository's).
    assert requires and pinned == [f"tronenergy-protocol=={__version__}"], pinned
    venv, uv = tmp_path / "venv", installer()
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AIRFLOW", "VIRTUAL_ENV", "PYTHONPATH"))}
    env["AIRFLOW_HOME"] = str(tmp_path / "airflow-home")
    if uv:
        steps = [[*uv, "venv", "--quiet", "--python", sys.executable, str(venv)],
                 [*uv, "pip", "install", "--quiet", "--python", str(python), str(wheel),
                  str(shared_wheel), airflow]]
    else:
        steps = [[sys.executable, "-m", "venv", str(venv)],
                 [str(python), "-m", "pip", "install", "-q", str(wheel), str(shared_wheel),
                  airflow]]
    for command in steps:
        result = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    check = ("from airflow.providers_manager import ProvidersManager; "
             "import airflow, airflow_provider_tronenergy.operators.energy; "
             "info = ProvidersManager().providers['airflow-provider-tronenergy']; "
             "print(airflow.__version__, info.version)")
    result = subprocess.run([str(python), "-c", check], capture_output=True, text=True,
                            timeout=300, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    airflow_version, provider_version = result.stdout.split()[-2:]
    assert provider_version == __version__
    if "==" in airflow:
        assert airflow_version == airflow.split("==")[1]
