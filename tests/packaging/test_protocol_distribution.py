"""The code the provider and the sandbox share, a distribution of its own (protocol/,
``tronenergy-protocol``): one release with both, which require exactly it; the standard
library only; its wheel holds the package and nothing else.

The sandbox installed alone therefore brings no Airflow (test_sandbox_without_airflow.py);
the layering test holds it to the bottom floor (it imports neither the provider nor the
sandbox).
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
SHARED = ROOT / "protocol"
NAME = "tronenergy-protocol"
DIST_INFO = f"tronenergy_protocol-{__version__}.dist-info"


def project(folder: Path) -> dict:
    return tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_three_distributions_are_one_release():
    """The provider and the sandbox each require exactly the shared code of their version."""
    shared = project(SHARED)
    assert shared["name"] == NAME
    assert shared["version"] == __version__ == project(ROOT / "sandbox")["version"]
    for folder in (ROOT, ROOT / "sandbox"):
        [requirement] = [Requirement(line) for line in project(folder)["dependencies"]
                         if Requirement(line).name == NAME]
        assert str(requirement.specifier) == f"=={__version__}", folder


def test_it_needs_the_standard_library_only():
    """Nothing that could bring a framework to the sandbox, nor a console script."""
    shared = project(SHARED)
    assert shared["dependencies"] == []
    assert "scripts" not in shared and "optional-dependencies" not in shared


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("protocol-dist")
    result = build(SHARED, out, wheel_only=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [built] = out.glob("*.whl")
    return built


@pytest.mark.slow
def test_its_wheel_holds_the_shared_package_only(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = Parser().parsestr(archive.read(f"{DIST_INFO}/METADATA").decode())
    assert {name.split("/")[0] for name in names} == {"tronenergy_protocol", DIST_INFO}
    source = {str(path.relative_to(SHARED)) for path in (SHARED / "tronenergy_protocol")
              .rglob("*.py")}
    assert {name for name in names if name.endswith(".py")} == source
    assert {"tronenergy_protocol/errors.py", "tronenergy_protocol/serving.py",
            "tronenergy_protocol/signing.py", "tronenergy_protocol/py.typed"} <= set(names)
    assert metadata["Name"] == NAME
    assert metadata["Version"] == __version__
    assert metadata.get_all("Requires-Dist") is None
