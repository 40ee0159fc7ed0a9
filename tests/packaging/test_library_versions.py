"""The receiver's limits and the client's overall deadline on the lowest and highest
versions of uvicorn, urllib3 and requests that pyproject.toml admits.

Both use parts of those libraries that are not public (docs/decisions.md, "Private
parts of libraries"), which is why their ranges are bounded; this test is what the
bounds stand on. Each end gets a throwaway venv made by uv: the three libraries at
that end (uv resolves ``lowest-direct`` or newest within the ranges, from PyPI), and
everything else from the project's venv behind them (a ``.pth`` line), so that only
these three change. The limits' and the deadline's own tests then run there, in both
venvs at once.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = ("uvicorn", "urllib3", "requests")
TESTS = ["tests/callbacks/test_limits.py", "tests/client/test_hostile_service.py"]
# The limits on both HTTP implementations, and the sync client's drips (the async client
# is httpx's and has no private parts).
RESOLUTIONS = ("lowest-direct", "highest")
"""uv's resolutions: the lowest versions the ranges admit, and the newest."""
SELECTION = ("431 or idle_and_slow or keep_alive_requests or after_413 or trickling "
             "or (dripped and not async)")


def admitted() -> dict[str, str]:
    """Each library's requirement, as pyproject.toml writes it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found = {}
    for requirement in project["dependencies"]:
        name = re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0]
        if name in LIBRARIES:
            found[name] = requirement
    assert sorted(found) == sorted(LIBRARIES), found
    return found


def find_uv() -> str:
    if os.environ.get("TRONENERGY_NO_UV"):
        pytest.skip("TRONENERGY_NO_UV is set: the venvs at both ends are made with uv")
    result = subprocess.run(["bash", "-c", "source scripts/uv.sh && find_uv"], cwd=ROOT,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"uv could not be found or installed: {result.stderr}"
    return result.stdout.strip().splitlines()[-1]


def make_venv(uv: str, where: Path, resolution: str) -> dict[str, str]:
    """A venv with the three libraries at one end of their ranges; their versions."""
    subprocess.run([uv, "venv", "-q", str(where), "--python", sys.executable], check=True)
    python = str(where / "bin" / "python")
    subprocess.run([uv, "pip", "install", "-q", "--python", python, "--no-deps",
                    "--resolution", resolution, *admitted().values()], check=True)
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip()
    # The project's venv (Airflow, pytest, the provider itself) after the venv's own.
    project = sysconfig.get_paths()["purelib"]
    Path(purelib, "zz_project.pth").write_text(f"import site; site.addsitedir({project!r})\n")
    shown = subprocess.run(
        [python, "-c", "import importlib, sys\n"
         "for name in sys.argv[1:]:\n"
         "    module = importlib.import_module(name)\n"
         "    assert module.__file__.startswith(sys.prefix), module.__file__\n"
         "    print(name, module.__version__)", *LIBRARIES],
        capture_output=True, text=True, check=True).stdout
    return dict(line.split() for line in shown.splitlines())


@pytest.mark.slow
def test_limits_and_deadline_hold_at_both_ends_of_the_ranges(tmp_path: Path) -> None:
    """Both ends at once: their tests mostly wait on sockets (drips, deadlines), so two
    interpreters side by side take the time of one."""
    uv = find_uv()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    runs: dict[str, tuple[dict[str, str], subprocess.Popen[str]]] = {}
    failed = []
    try:
        for resolution in RESOLUTIONS:
            versions = make_venv(uv, tmp_path / resolution, resolution)
            process = subprocess.Popen(
                [str(tmp_path / resolution / "bin" / "python"), "-m", "pytest", "-q",
                 "-p", "no:randomly", "-p", "no:cacheprovider", "-n", "0", "-k", SELECTION,
                 *TESTS], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True)
            runs[resolution] = (versions, process)
        for resolution, (versions, process) in runs.items():
            stdout, stderr = process.communicate(timeout=280)
            tail = "\n".join(stdout.splitlines()[-30:])
            if process.returncode != 0 or not re.search(r"\b\d+ passed\b", tail):
                failed.append(f"{resolution} {versions}:\n{tail}\n{stderr[-2000:]}")
    finally:
        for _, process in runs.values():
            if process.poll() is None:
                process.kill()
                process.communicate()
    assert failed == [], "\n\n".join(failed)
    lowest, highest = (runs[r][0] for r in RESOLUTIONS)
    assert lowest != highest, lowest  # two ends, not one environment twice
