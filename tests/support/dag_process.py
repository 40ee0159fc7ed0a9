"""``dag.test()`` in an OS process of its own: two DAG runs at once, as two workers are.

Airflow's ``dag.test()`` runs its tasks in the calling thread and installs signal handlers
(main thread only), so two runs at once need two processes. ``start_dag_test(dag_id,
conf)`` starts ``python -m support.dag_process`` with the test session's environment
(``AIRFLOW_HOME``, its metadata database, the connections set by the test); the child
imports Airflow and the test DAGs, prints ``ready``, waits for a line on its stdin, runs
the DAG, and prints ``{"run_id": ..., "state": ...}`` as its last line. ``go()`` sends the
line: the parent decides when each run starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

TESTS = Path(__file__).resolve().parent.parent
K = TypeVar("K")


@dataclass
class DagProcess:
    """A child about to run one DAG with ``dag.test()``."""

    process: subprocess.Popen[str]

    def ready(self) -> None:
        """Wait until the child has imported Airflow and the DAGs (it printed ``ready``)."""
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if line.strip() != "ready":
            self.process.kill()
            stderr = self.process.stderr.read()[-3000:] if self.process.stderr else ""
            raise AssertionError(f"dag.test() process did not start: {line!r} {stderr}")

    def go(self) -> None:
        """Start the run now."""
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def finish(self, timeout: float = 240) -> dict[str, Any]:
        """The run's id, state and output (its tasks: read from the metadata database)."""
        out, err = self.process.communicate(timeout=timeout)
        lines = out.strip().splitlines()
        if self.process.returncode != 0 or not lines:
            raise AssertionError(f"dag.test() process failed ({self.process.returncode}):\n"
                                 f"{out[-3000:]}\n{err[-3000:]}")
        return {**json.loads(lines[-1]), "log": out}


def finish_all(children: dict[K, DagProcess], timeout: float = 240) -> dict[K, dict[str, Any]]:
    """:meth:`DagProcess.finish` of each, their output read all at once: a child whose pipe
    filled up while another was waited for would stall (and hold its wallet's lease)."""
    with ThreadPoolExecutor(max_workers=len(children) or 1) as pool:
        ended = {key: pool.submit(child.finish, timeout) for key, child in children.items()}
        return {key: future.result() for key, future in ended.items()}


def start_dag_test(dag_id: str, conf: dict[str, Any],
                   env: dict[str, str] | None = None) -> DagProcess:
    """A child process holding ``dag_id`` with ``conf``, ready once it printed ``ready``."""
    child = spawn_dag_test(dag_id, conf, env)
    child.ready()
    return child


def spawn_dag_test(dag_id: str, conf: dict[str, Any],
                   env: dict[str, str] | None = None) -> DagProcess:
    """:func:`start_dag_test` without the wait for ``ready``: start several, then wait for
    each (their Airflow imports overlap). ``env`` is added to the session's environment."""
    child_env = {**os.environ, **(env or {})}
    paths = [str(TESTS), str(TESTS / "dags"), child_env.get("PYTHONPATH", "")]
    child_env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    process = subprocess.Popen(
        [sys.executable, "-m", "support.dag_process", dag_id, json.dumps(conf)], env=child_env,
        cwd=str(TESTS), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    return DagProcess(process)


def main(argv: list[str]) -> int:
    dag_id, conf = argv[0], json.loads(argv[1])
    from payouts import DAGS  # the test DAGs (tests/dags), imported before "ready"

    dag = DAGS[dag_id]
    print("ready", flush=True)
    sys.stdin.readline()
    dagrun = dag.test(run_conf=conf)
    print(json.dumps({"run_id": dagrun.run_id, "state": str(dagrun.state)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
