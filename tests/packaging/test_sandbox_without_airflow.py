"""``pip install tronenergy-sandbox`` into a clean environment installs no Airflow: the
sandbox's wheel, and the wheels of this repository's distributions it requires, into a
fresh venv, the rest from the package index (the sandbox's own ranges, never the locks);
there no ``airflow`` is importable, no ``apache-airflow*`` distribution is installed, and
the console script starts and answers over HTTP.

Slow (two wheels built, a venv resolved): uv and its cache where at hand, pip otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = "tronenergy-sandbox"


def local_distributions() -> dict[str, Path]:
    """This repository's distributions, by name: each folder with a pyproject.toml."""
    found = {}
    for folder in sorted({ROOT, *(path.parent for path in ROOT.glob("*/pyproject.toml"))}):
        name = tomllib.loads((folder / "pyproject.toml").read_text("utf-8"))["project"]["name"]
        found[canonicalize_name(name)] = folder
    return found


def requires(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [name for name in archive.namelist()
                      if name.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
    return [Requirement(line) for line in Parser().parsestr(text).get_all("Requires-Dist") or []]


def uv() -> str | None:
    """uv (the scripts' own, or on PATH), else None: pip then makes the environment."""
    found = os.environ.get("TRONENERGY_UV") or shutil.which("uv")
    tools = ROOT / ".venv-tools" / "bin" / "uv"
    return found or (str(tools) if tools.is_file() else None)


def run(command: list[str], **kwargs) -> str:
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, **kwargs)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def build(folder: Path, out: Path, installer: str | None) -> Path:
    """One wheel, built as a package index's user gets it (isolated build)."""
    command = ([installer, "build", "--quiet", "--wheel", "--out-dir", str(out), str(folder)]
               if installer else
               [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(folder)])
    run(command)
    name = tomllib.loads((folder / "pyproject.toml").read_text("utf-8"))["project"]["name"]
    [wheel] = out.glob(f"{name.replace('-', '_')}-*.whl")
    return wheel


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the sandbox's wheel and the local wheels it requires, at any depth."""
    out, home = tmp_path_factory.mktemp("wheels"), tmp_path_factory.mktemp("sandbox-venv")
    local, installer = local_distributions(), uv()
    wheels, wanted = {}, [canonicalize_name(SANDBOX)]
    while wanted:
        name = wanted.pop()
        if name not in wheels:
            wheels[name] = build(local[name], out, installer)
            wanted += [canonicalize_name(r.name) for r in requires(wheels[name])
                       if canonicalize_name(r.name) in local]
    python = home / "bin" / "python"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AIRFLOW", "VIRTUAL_ENV", "PYTHONPATH"))}
    if installer:
        run([installer, "venv", "--quiet", "--python", sys.executable, str(home)], env=env)
        run([installer, "pip", "install", "--quiet", "--python", str(python),
             *map(str, wheels.values())], env=env)
    else:
        run([sys.executable, "-m", "venv", str(home)], env=env)
        run([str(python), "-m", "pip", "install", "-q", *map(str, wheels.values())], env=env)
    return home


def test_it_installs_no_airflow(venv):
    check = ("import importlib.metadata as m, importlib.util as u, json; "
             "print(json.dumps({'airflow': u.find_spec('airflow') is not None, "
             "'dists': sorted(d.metadata['Name'] for d in m.distributions())}))")
    found = json.loads(run([str(venv / "bin" / "python"), "-c", check], cwd=venv))
    airflow = [name for name in found["dists"]
               if canonicalize_name(name).startswith(("apache-airflow", "airflow-provider"))]
    assert airflow == [], f"the sandbox pulls in Airflow: {airflow}"
    assert found["airflow"] is False
    assert SANDBOX in found["dists"]


def test_its_console_script_answers_over_http(venv):
    script = venv / "bin" / "tronenergy-sandbox"
    assert "--time-scale" in run([str(script), "--help"], cwd=venv)
    process = subprocess.Popen([str(script), "--port", "0", "--log-level", "warning"],
                               stdout=subprocess.PIPE, text=True, cwd=venv)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("tronenergy sandbox listening on "), first
        root = first.split()[-1].removesuffix("/v1")  # the service's base URL, printed
        with urllib.request.urlopen(f"{root}/sandbox/health", timeout=30) as answer:
            assert json.loads(answer.read())["data"] == {"status": "ok"}
    finally:
        process.terminate()
        process.wait(timeout=30)
