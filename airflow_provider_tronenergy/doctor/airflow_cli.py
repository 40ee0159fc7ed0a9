"""``airflow tronenergy-doctor``: the doctor as an Airflow CLI command, for a host where the
``airflow`` command is the one at hand. Registered through provider info's ``cli`` key,
which Airflow's CLI reads from providers (``ProvidersManager.cli_command_functions``);
a release of Airflow that does not read it keeps ``tronenergy-doctor`` alone."""

from __future__ import annotations

import argparse
from typing import Any

from airflow_provider_tronenergy.doctor.flags import FLAGS

NAME = "tronenergy-doctor"


def doctor_command(args: argparse.Namespace) -> None:
    """Run the checks and leave with the doctor's exit code (1 on any failing line)."""
    from airflow_provider_tronenergy.doctor.cli import report

    raise SystemExit(report(args))


def get_cli_commands() -> list[Any]:
    """The command for Airflow's CLI; imported at every ``airflow`` call, so it imports only
    Airflow's CLI definitions and the flags."""
    from airflow.cli.cli_config import ActionCommand, Arg

    return [ActionCommand(name=NAME, help="Check a TRON energy deployment before money moves",
                          func=doctor_command,
                          args=[Arg((flag,), **options)  # type: ignore[no-untyped-call]
                                for flag, options in FLAGS])]
