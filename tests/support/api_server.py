"""A real Airflow API server in a child process (``support/airflow_api_server.py``).

``running_api_server(env)`` migrates the metadata database the environment names, starts
the server on a free port, waits until ``/api/v2/version`` answers, and stops it on exit.
The callback receiver's plugin test and the Energy page's server (``page_server``) both
start theirs here, each with its own environment.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from support.waiting import wait_until

SERVER_SCRIPT = Path(__file__).with_name("airflow_api_server.py")


def status(url: str) -> int | None:
    """The HTTP status of a GET, or None when nothing answers."""
    try:
        return httpx.get(url, timeout=2, trust_env=False).status_code
    except httpx.HTTPError:
        return None


@contextmanager
def running_api_server(env: dict[str, str], *, migrate_timeout: float = 240
                       ) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``(process, root_url)`` of an API server started with ``env``; stopped on exit."""
    airflow = str(Path(sys.executable).with_name("airflow"))
    migrated = subprocess.run([airflow, "db", "migrate"], env=env, capture_output=True,
                              text=True, timeout=migrate_timeout)
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - the child's, closed below
    process = subprocess.Popen([sys.executable, str(SERVER_SCRIPT)], env=env,
                               stdout=subprocess.PIPE, stderr=log, text=True)
    assert process.stdout is not None
    match, line = None, ""
    for line in iter(process.stdout.readline, ""):  # Airflow may print warnings first
        match = re.search(r"^listening on (\d+)", line)
        if match:
            break
    try:
        if match is None:
            log.seek(0)
            raise RuntimeError(f"API server did not start: {line!r} {log.read()[-3000:]}")
        root_url = f"http://127.0.0.1:{match.group(1)}"
        wait_until(lambda: status(f"{root_url}/api/v2/version") == 200, 60, "the API server")
        yield process, root_url
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
