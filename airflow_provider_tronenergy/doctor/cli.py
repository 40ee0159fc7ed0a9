"""``tronenergy-doctor``: check a deployment before money moves.

    tronenergy-doctor --sender T... --callback-url https://airflow.example.com/tronenergy/callbacks

Run it where the tasks run (a worker's environment: its connections, its store settings,
its executor). Each line passes or fails with its fix; the exit code is 1 when any line
failed, 2 on bad arguments. ``--json`` prints the same for machines. No secret is printed.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from typing import Final

from airflow_provider_tronenergy.doctor.flags import FLAGS
from airflow_provider_tronenergy.doctor.report import as_json, as_text, exit_code, redact
from airflow_provider_tronenergy.doctor.run import Settings, run, secrets


def add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    for flag, options in FLAGS:
        p.add_argument(flag, **options)
    return p


CONTEXT: Final = "_AIRFLOW_PROCESS_CONTEXT"


@contextmanager
def server_context() -> Iterator[None]:
    """Connections read as ``airflow connections get`` reads them: the environment, the
    configured secrets backend, then the metadata database (where the UI saves them; a host
    that cannot reach it skips it). Outside a task Airflow reads no metadata database unless
    the process says it is a server's; put back as it was after the run."""
    before = os.environ.get(CONTEXT)
    os.environ[CONTEXT] = "server"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(CONTEXT, None)
        else:
            os.environ[CONTEXT] = before


def parser() -> argparse.ArgumentParser:
    return add_arguments(argparse.ArgumentParser(
        prog="tronenergy-doctor", description="Check a deployment before money moves."))


def settings_of(args: argparse.Namespace) -> Settings:
    return Settings(tronenergy_conn_id=args.tronenergy_conn_id,
                    tron_node_conn_id=args.tron_node_conn_id,
                    confirm_node_conn_id=args.confirm_node_conn_id or "",
                    tron_signer_conn_id=args.tron_signer_conn_id, sender=args.sender,
                    permission_id=args.permission_id, callback_url=args.callback_url,
                    migrate=args.migrate)


@contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Whatever the checks print goes to stderr, file descriptor and all: Airflow's logging,
    set up when it is imported, holds stdout itself, and a store's "created the tables"
    line there would break the report (``--json`` above all)."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with redirect_stdout(sys.stderr):  # and what writes to sys.stdout, whatever it is
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def report(args: argparse.Namespace) -> int:
    """Run the checks, print the report (secrets blanked), return the exit code."""
    settings = settings_of(args)
    with server_context(), stdout_to_stderr():
        checks = run(settings)
        hidden = secrets(settings)
    text = as_json(checks) if args.json else as_text(checks)
    print(redact(text, hidden))
    return exit_code(checks)


def main(argv: Sequence[str] | None = None) -> int:
    # The hooks' and stores' log lines go to stderr at WARNING: the report is stdout's.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    return report(parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
