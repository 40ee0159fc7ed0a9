"""Run the sandbox CLI as a child process: for demos, the main job, restarts and kills."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

import requests


def stop_process(process: subprocess.Popen[Any], grace: float = 10) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds: a child never outlives its owner."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(grace)


@dataclass
class SandboxProcess:
    process: subprocess.Popen[str]
    url: str
    api_key: str
    api_secret: str
    webhook_secret: str

    def __repr__(self) -> str:  # the credentials stay out of reprs
        return f"SandboxProcess(url={self.url!r}, pid={self.process.pid})"

    @property
    def root_url(self) -> str:
        return self.url[: -len("/v1")]

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as when a machine dies."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        """Stop the sandbox (SIGTERM, SIGKILL if it lingers)."""
        stop_process(self.process)


def start_sandbox(*args: str, log_level: str = "warning",
                  log_file: str | None = None) -> SandboxProcess:
    """Start ``python -m tronenergy_sandbox --port 0 ARGS`` and wait for it."""
    stderr = open(log_file, "a") if log_file else subprocess.DEVNULL  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", "tronenergy_sandbox", "--port", "0",
         "--log-level", log_level, *args],
        stdout=subprocess.PIPE, stderr=stderr, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    banner = [process.stdout.readline() for _ in range(4)]
    match = re.search(r"listening on (\S+)", banner[0])
    if match is None:
        process.kill()
        raise RuntimeError(f"sandbox did not start: {banner[0]!r}")
    fields = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip() for line in banner[1:]}
    sandbox = SandboxProcess(process, match.group(1), fields["api key"], fields["api secret"],
                             fields["webhook secret"])
    _wait_ready(sandbox.root_url)
    return sandbox


def _wait_ready(root_url: str) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{root_url}/sandbox/health", timeout=1).ok:
                return
        except (requests.ConnectionError, requests.Timeout):  # not up yet, or a busy machine
            time.sleep(0.05)
    raise RuntimeError("sandbox did not become ready")
