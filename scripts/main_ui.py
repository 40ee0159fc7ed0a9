"""Look at the main job's money in the Airflow UI: an API server on the job's own data.

Run through ``bash scripts/ui.sh`` after ``bash scripts/main.sh``. It serves Airflow's UI
from the main job's Airflow home and stores (``.main-job/``) on 127.0.0.1 only, until
Ctrl-C: the **Energy** page in the navigation, and the payout runs, whose tasks link to
their transactions (each task's Details tab). The sandbox has stopped by then; the page
reads only the stores.

Every visitor is an admin (the simple auth manager's all-admins mode): a local look at a
demo's data, never a deployment's setting. A deployment signs people in and grants the
page's permission (docs/energy-page.md).

The server stops with this process: whatever stops it (Ctrl-C, SIGTERM from a supervisor
or ``timeout``, SIGHUP from a closed terminal) is passed on to the server, and this waits
for it; on Linux the server is also told to stop if this process dies unannounced. No
server is left behind, reparented, holding the port.
"""

from __future__ import annotations

import argparse
import ctypes
import shlex
import signal
import subprocess
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

from main_airflow import AIRFLOW, ROOT, metadata_env, store_env

WORK = ROOT / ".main-job"
PAGE = "/tronenergy-ui/energy"


def page_url(root: str, today: datetime) -> str:
    """The page over the last 7 days to ``today``: the main job's runs are today's."""
    start = (today - timedelta(days=6)).date()
    return f"{root}{PAGE}?from={start.isoformat()}&to={today.date().isoformat()}"


def ui_env(work: Path) -> dict[str, str]:
    """The API server's settings: the job's home and stores, everyone an admin."""
    return {**metadata_env(work / "airflow-home"), **store_env(work),
            "AIRFLOW__CORE__AUTH_MANAGER":
                "airflow.api_fastapi.auth.managers.simple.simple_auth_manager."
                "SimpleAuthManager",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True"}


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _stop_with_parent() -> None:
    """In the server, before it runs: SIGTERM when the process that started it dies."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def serve(command: Sequence[str], env: dict[str, str]) -> int:
    """Run the server until it exits; a stop signal to this process stops it first.

    The server has a process group of its own, so a terminal's Ctrl-C reaches it once,
    from here, as every other stop signal does; each becomes the server's SIGTERM (its
    graceful stop; a SIGHUP could mean "reload" to it).
    """
    server: list[subprocess.Popen[bytes]] = []
    stopping: list[int] = []

    def stop(signum: int, _frame: object) -> None:
        stopping.append(signum)
        if server and server[0].poll() is None:
            server[0].send_signal(signal.SIGTERM)

    previous = {signum: signal.signal(signum, stop) for signum in STOP_SIGNALS}
    try:
        server.append(subprocess.Popen(  # one thread here: preexec_fn is safe
            list(command), env=env, process_group=0,
            preexec_fn=_stop_with_parent if sys.platform == "linux" else None))  # noqa: PLW1509
        if stopping:  # told to stop while it was starting
            server[0].send_signal(signal.SIGTERM)
        return server[0].wait()
    finally:
        if server and server[0].poll() is None:  # this one failed: never leave it running
            server[0].kill()
            server[0].wait()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def main(argv: list[str] | None = None) -> int:
    """Check the job ran, say where to look, then run the API server until it stops."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8080, help="default 8080")
    parser.add_argument("--work", type=Path, default=WORK, help=argparse.SUPPRESS)
    parser.add_argument("--server", help=argparse.SUPPRESS)  # tests: a stand-in command
    args = parser.parse_args(argv)
    if not (args.work / "airflow-home" / "airflow.db").is_file():
        print(f"no main job's data in {args.work}: run `bash scripts/main.sh` first",
              file=sys.stderr)
        return 2
    root = f"http://127.0.0.1:{args.port}"
    print(f"==> the Airflow UI on the main job's data: {root} (this machine only; Ctrl-C "
          "stops it)\n"
          f"    the Energy page: {page_url(root, datetime.now(timezone.utc))}\n"
          "    (Energy in the UI's navigation); a task's links to the chain: its Details tab",
          flush=True)
    command = (shlex.split(args.server) if args.server else
               [*AIRFLOW, "api-server", "--host", "127.0.0.1", "--port", str(args.port)])
    return serve(command, ui_env(args.work))


if __name__ == "__main__":
    sys.exit(main())
