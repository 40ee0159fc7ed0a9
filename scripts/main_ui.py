"""Look at the main job's money in the Airflow UI: an API server on the job's own data.

Run through ``bash scripts/ui.sh`` after ``bash scripts/main.sh``. It serves Airflow's UI
from the main job's Airflow home and stores (``.main-job/``) on 127.0.0.1 only, until
Ctrl-C: the **Energy** page in the navigation, and the payout runs, whose tasks link to
their transactions (each task's Details tab). The sandbox has stopped by then; the page
reads only the stores.

Every visitor is an admin (the simple auth manager's all-admins mode): a local look at a
demo's data, never a deployment's setting. A deployment signs people in and grants the
page's permission (docs/energy-page.md).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
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


def main(argv: list[str] | None = None) -> int:
    """Check the job ran, say where to look, then run the API server until it stops."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8080, help="default 8080")
    parser.add_argument("--work", type=Path, default=WORK, help=argparse.SUPPRESS)
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
    command = [*AIRFLOW, "api-server", "--host", "127.0.0.1", "--port", str(args.port)]
    server = subprocess.Popen(command, env=ui_env(args.work))
    try:
        return server.wait()
    except KeyboardInterrupt:  # the server got the same Ctrl-C: let it stop
        return server.wait()


if __name__ == "__main__":
    sys.exit(main())
