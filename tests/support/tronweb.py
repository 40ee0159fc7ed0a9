"""TronWeb from the npm registry, pinned by tests/sandbox/tronweb's package-lock.json.

The first test session that needs it runs ``npm ci`` there once; later sessions reuse
``node_modules`` while the lock file is unchanged (a stamp holds the lock's hash). A
file lock keeps pytest-xdist workers from installing twice at once. Without Node.js
and npm the TronWeb tests skip, saying so.
"""


from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1] / "sandbox" / "tronweb"
STAMP = HERE / "node_modules" / ".installed-lock-sha256"


def _lock_hash() -> str:
    return hashlib.sha256((HERE / "package-lock.json").read_bytes()).hexdigest()


def _installed(wanted: str) -> bool:
    """The stamp matches the lock and TronWeb's own package is there at the pinned version
    (a stamp alone survives a half-deleted ``node_modules``)."""
    installed = HERE / "node_modules" / "tronweb" / "package.json"
    if not STAMP.exists() or STAMP.read_text() != wanted or not installed.exists():
        return False
    pinned = json.loads((HERE / "package.json").read_text())["dependencies"]["tronweb"]
    return bool(json.loads(installed.read_text()).get("version") == pinned)


def tronweb_node_path() -> str:
    """The ``node`` executable, with TronWeb installed beside the checks script."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js and npm are not installed: the TronWeb client tests need them")
    with open(HERE / ".npm-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wanted = _lock_hash()
        if not _installed(wanted):
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--prefix", str(HERE)],
                capture_output=True, text=True, timeout=600, check=False)
            if done.returncode != 0:
                pytest.fail(f"npm ci (tests/sandbox/tronweb) failed:\n{done.stdout}\n{done.stderr}")
            STAMP.write_text(wanted)
    return node
