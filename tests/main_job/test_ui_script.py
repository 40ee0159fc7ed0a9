"""``bash scripts/ui.sh`` stops its API server with it, whatever stops it: a supervisor's or
``timeout``'s SIGTERM, a closed terminal's SIGHUP, Ctrl-C. The server here is a stand-in
that only sleeps (the script's hidden ``--server``): what is tested is the script's
signals and children, not Airflow."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


def _gone(pid: int) -> bool:
    """No such process, or a zombie (exited, waiting for a parent's reap)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_the_server_stops_with_the_script(tmp_path, signum):
    (tmp_path / "airflow-home").mkdir()
    (tmp_path / "airflow-home" / "airflow.db").touch()  # "the main job ran"
    pid_file = tmp_path / "server.pid"
    stand_in = (f"{sys.executable} -c 'import os, pathlib, time; "
                f"pathlib.Path(\"{pid_file}\").write_text(str(os.getpid())); "
                "time.sleep(600)'")
    script = subprocess.Popen(
        ["bash", "scripts/ui.sh", "--work", str(tmp_path), "--server", stand_in],
        cwd=ROOT, stdout=subprocess.DEVNULL, start_new_session=True)
    server = None
    try:
        wait_until(lambda: pid_file.is_file() and pid_file.read_text(), timeout=30,
                   message="the stand-in server")
        server = int(pid_file.read_text())
        script.send_signal(signum)  # to the script alone, as a supervisor sends it
        script.wait(30)
        wait_until(lambda: _gone(server), timeout=30, message=f"server {server} to stop")
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)
            script.wait()
        if server is not None and not _gone(server):
            os.kill(server, signal.SIGKILL)
