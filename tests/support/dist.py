"""Building the distributions as a build machine does, and the installer that installs them.

An isolated build (the backend from PyPI, per ``[build-system] requires``, never this
venv's) of the sdist, then of the wheel from the sdist: ``uv build`` when uv is at hand
(the scripts' own, or on PATH), which takes about a second from its cache, else
``python -m build``, which makes two fresh build environments with pip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def installer() -> list[str] | None:
    """uv (the scripts' own, or on PATH), else None: pip then makes the environment."""
    found = os.environ.get("TRONENERGY_UV") or shutil.which("uv")
    tools = ROOT / ".venv-tools" / "bin" / "uv"
    if not found and tools.is_file():
        found = str(tools)
    return [found] if found else None


def build(source: Path, out: Path, *, wheel_only: bool = False
          ) -> subprocess.CompletedProcess[str]:
    """The sdist and the wheel of ``source`` in ``out`` (``wheel_only``: the wheel, from the
    source tree), built in isolation."""
    uv, only = installer(), ["--wheel"] if wheel_only else []
    if uv:
        command = [*uv, "build", "--quiet", *only, "--python", sys.executable,
                   "--out-dir", str(out), str(source)]
    else:
        command = [sys.executable, "-m", "build", *only, "--outdir", str(out), str(source)]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
