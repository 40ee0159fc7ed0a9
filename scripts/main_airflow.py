"""``airflow dags test`` for the main job: on runners started early, shown in the
report's order.

Airflow starting costs some 13 s of one core: each runner (one per metadata database)
pays it once, while the job sets up the sandbox, and its runs overlap the other runner's
(the machine's second core) while their progress waits its turn in the report. Only a log
line's message reaches the report, never the raw line.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from main_runner import END

from tronenergy_sandbox.process import stop_process

ROOT = Path(__file__).resolve().parents[1]
LOG_LINE = re.compile(r"^\S+ \[(?P<level>\w+)\s*\] (?P<message>.*?)\s+\[[^\]\s]+\]"
                      r"(?:\s+\w+=\S+)*\s*$")
"""A line of Airflow's console log: ``<time> [info     ] <message>  [<logger>] loc=...``."""
AIRFLOW = [sys.executable, "-c",
           "import atexit, gc, runpy, sys; atexit.register(gc.freeze); "
           "sys.argv = ['airflow', *sys.argv[1:]]; "
           "runpy.run_module('airflow', run_name='__main__')"]
"""``python -m airflow``, less the interpreter's last garbage collection over Airflow's heap
(about 3 s per command on a 2-core machine, collecting nothing the command needs): the
first exit handler registered, so the last to run, freezes what is left."""


def metadata_env(home: Path) -> dict[str, str]:
    """Airflow's settings for a home of its own: SQLite metadata, the example DAGs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "example_dags"),
        "AIRFLOW__LOGGING__COLORED_CONSOLE_LOG": "False",
        "NO_COLOR": "1",  # the DAG runs' logs are files: no colour codes in them
    })
    return env


def store_env(work: Path) -> dict[str, str]:
    """The provider's stores, SQLite files in ``work``: one journal for both payout DAGs
    (the purchases and the payouts), the callback store and the deposit ledger."""
    return {"TRONENERGY_PURCHASE_JOURNAL": f"sqlite:///{work / 'journal.db'}",
            "TRONENERGY_CALLBACK_STORE": f"sqlite:///{work / 'callbacks.db'}",
            "TRONENERGY_DEPOSITS_DB": f"sqlite:///{work / 'deposits.db'}"}


def log_message(line: str) -> str | None:
    """The message of one of Airflow's console log lines; None for any other line."""
    found = LOG_LINE.match(line.rstrip("\n"))
    return found["message"].strip() if found else None


def shown(line: str) -> str | None:
    """What the report shows of a DAG run's output line: each task as it ends, and the
    message (never the raw line) of each purchase, payout pass and credit."""
    if "[DAG TEST] end task" in line:
        return f"done: {line.split('task_id=', 1)[1].split(maxsplit=1)[0]}"
    message = log_message(line)
    if message and (message.startswith("credited ")
                    or (message.startswith("bought ") and " energy for " in message)):
        return message
    if message and message.startswith("payout batch "):
        return message.split("; funds ", 1)[0]  # the funds read: in the log
    return None


class DagRun:
    """One ``airflow dags test`` on a runner: its output to ``log``, shown when asked."""

    def __init__(self, dag_id: str, log: Path) -> None:
        self.dag_id, self.log = dag_id, log
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.out = log.open("w")
        self.code: int | None = None
        self.ended = threading.Event()

    def feed(self, line: str) -> None:
        self.out.write(line)
        if (message := shown(line)) is not None:
            self.lines.put(message)

    def finish(self, code: int) -> None:
        self.out.close()
        self.code = code
        self.lines.put(None)
        self.ended.set()

    def show(self, say: Callable[[str], None]) -> None:
        """Its progress, as it comes, until it ends; a failed run stops the job."""
        while (message := self.lines.get()) is not None:
            say(message)
        if self.code != 0:
            raise RuntimeError(f"{self.dag_id} failed (exit {self.code}); see "
                               f"{self.log.parent.name}/{self.log.name}")


class Runner:
    """A process that runs ``airflow dags test`` on one metadata database, one run after
    another (scripts/main_runner.py): Airflow starts once, not once per run.

    Started early, it imports Airflow while the job sets up the sandbox; a run asked for
    early waits its turn in the runner, and its lines wait until the report reaches it, so
    the report reads in order. Secrets (the signer connection) travel in a run's ``env``,
    through the runner's stdin: never a command line, never a file.
    """

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.home = env["AIRFLOW_HOME"]
        self.log = log.open("w")
        self.runs: queue.Queue[DagRun] = queue.Queue()
        self.lock = threading.Lock()
        self.exited: int | None = None
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "scripts" / "main_runner.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env={**env, "PYTHONUNBUFFERED": "1"})
        threading.Thread(target=self._read, daemon=True).start()

    def run(self, dag_id: str, log: Path, conf: dict[str, Any] | None = None,
            env: dict[str, str] | None = None) -> DagRun:
        """``airflow dags test dag_id -c conf``, after the runs asked for before it."""
        run = DagRun(dag_id, log)
        with self.lock:
            if self.exited is not None:  # nothing will run it: it fails at once
                run.feed(f"the runner had exited ({self.exited}); see "
                         f"{Path(self.log.name).name}\n")
                run.finish(self.exited or 1)
                return run
            self.runs.put(run)
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps({"dag_id": dag_id, "conf": conf or {},
                                                 "env": env or {}}) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the runner has died: the reader ends every run asked for
        return run

    def _read(self) -> None:
        assert self.process.stdout is not None
        current: DagRun | None = None
        ready = False  # until then, Airflow starting: the runner's own lines
        for line in self.process.stdout:
            if line.startswith(END):
                word = line.split()[-1]
                if word == "ready":
                    ready = True
                    continue
                with contextlib.suppress(queue.Empty):
                    current = current or self.runs.get_nowait()
                if current is not None:
                    current.finish(int(word))
                current = None
                continue
            if current is None and ready:
                with contextlib.suppress(queue.Empty):
                    current = self.runs.get_nowait()
            if current is None:  # between runs: the runner's own lines
                self.log.write(line)
            else:
                current.feed(line)
        self.log.close()
        code = self.process.wait()
        with self.lock:
            self.exited = code
            left = [*([current] if current else []), *iter_queue(self.runs)]
        for run in left:
            run.feed(f"the runner exited ({code}); see {Path(self.log.name).name}\n")
            run.finish(code or 1)

    def stop(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        stop_process(self.process)


def iter_queue(runs: queue.Queue[DagRun]) -> list[DagRun]:
    """What is left in ``runs``, emptied."""
    left = []
    while True:
        try:
            left.append(runs.get_nowait())
        except queue.Empty:
            return left


def read_result(home: Path, dag_id: str, task_id: str) -> Any:
    """The newest value ``task_id`` of ``dag_id`` returned, from the metadata database."""
    with sqlite3.connect(home / "airflow.db") as db:
        row = db.execute(
            "SELECT value FROM xcom WHERE dag_id = ? AND task_id = ? "
            "AND key = 'return_value' ORDER BY timestamp DESC LIMIT 1",
            (dag_id, task_id)).fetchone()
    if row is None:
        return None
    value = row[0]
    while isinstance(value, (str, bytes)):
        value = json.loads(value, parse_float=Decimal)
    return value
