"""``airflow dags test`` again and again in one process: the main job's DAG runner.

Each ``airflow dags test`` command costs some 13 s of CPU before its first task runs, most
of it Airflow importing itself and building its in-process Execution API. The main job
makes six runs on two metadata databases; one runner per database pays that once, while
the job sets up the sandbox, and then runs its DAGs one after the other as they are asked.

Requests come one a line on stdin, as JSON: ``{"dag_id", "conf", "env"}``; ``env`` is set
for that run only (the send runs' signer connection travels so: never a command line, an
output or a file). A run's output (stdout and stderr, one pipe) ends with a line
``END <exit code>``.
"""

from __future__ import annotations

import atexit
import functools
import gc
import json
import os
import sys
import traceback

END = "@@tronenergy-dag-test-end"


def cache_the_execution_api() -> None:
    """Airflow 3.1 builds an in-process Execution API per task; 3.2+ caches it (as the
    test suite's tests/support/execution_api.py does for 3.1)."""
    from airflow.sdk.execution_time import supervisor

    if not hasattr(supervisor.in_process_api_server, "cache_info"):
        supervisor.in_process_api_server = functools.lru_cache(maxsize=1)(
            supervisor.in_process_api_server)


def main() -> int:
    # The interpreter's last garbage collection over Airflow's heap collects nothing a
    # run needs: frozen by the first exit handler registered, so the last to run.
    atexit.register(gc.freeze)
    from airflow import configuration
    from airflow.cli import cli_parser

    configuration.write_default_airflow_configuration_if_needed()
    parser = cli_parser.get_parser()
    cache_the_execution_api()
    print(f"{END} ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        extra: dict[str, str] = request.get("env") or {}
        os.environ.update(extra)
        code = 0
        try:
            args = parser.parse_args(["dags", "test", request["dag_id"],
                                      "-c", json.dumps(request.get("conf") or {})])
            args.func(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except Exception:
            traceback.print_exc()
            code = 1
        finally:
            for name in extra:
                os.environ.pop(name, None)
        sys.stderr.flush()
        print(f"{END} {code}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
