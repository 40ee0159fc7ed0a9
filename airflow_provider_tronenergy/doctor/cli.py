"""``tronenergy-doctor``: check a deployment before money moves.

    tronenergy-doctor --sender T... --callback-url https://airflow.example.com/tronenergy/callbacks

Run it where the tasks run (a worker's environment: its connections, its store settings,
its executor). Each line passes or fails with its fix; the exit code is 1 when any line
failed, 2 on bad arguments. ``--json`` prints the same for machines. No secret is printed.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from airflow_provider_tronenergy.doctor.report import as_json, as_text, exit_code, redact
from airflow_provider_tronenergy.doctor.run import Settings, run, secrets

DEFAULTS = Settings()


def add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The doctor's flags (also the Airflow CLI command's)."""
    p.add_argument("--tronenergy-conn-id", default=DEFAULTS.tronenergy_conn_id,
                   help="the service's connection (default %(default)s)")
    p.add_argument("--tron-node-conn-id", default=DEFAULTS.tron_node_conn_id,
                   help="the node's connection (default %(default)s; '' for none)")
    p.add_argument("--confirm-node-conn-id", default=DEFAULTS.confirm_node_conn_id,
                   help="the payouts' confirming node, if they have one")
    p.add_argument("--tron-signer-conn-id", default=DEFAULTS.tron_signer_conn_id,
                   help="the payout signer's connection (default %(default)s; '' for none)")
    p.add_argument("--sender", default=DEFAULTS.sender,
                   help="the hot wallet the payouts are sent from")
    p.add_argument("--permission-id", type=int, default=DEFAULTS.permission_id,
                   help="the sender's permission the signer signs under (default 0, owner)")
    p.add_argument("--callback-url", default=None,
                   help="the URL the service posts callbacks to ('' where none are received)")
    p.add_argument("--migrate", action="store_true",
                   help="create or migrate the stores first (the one step that writes)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    return p


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


def report(args: argparse.Namespace) -> int:
    """Run the checks, print the report (secrets blanked), return the exit code."""
    settings = settings_of(args)
    checks = run(settings)
    text = as_json(checks) if args.json else as_text(checks)
    print(redact(text, secrets(settings)))
    return exit_code(checks)


def main(argv: Sequence[str] | None = None) -> int:
    # The hooks' and stores' log lines go to stderr at WARNING: the report is stdout's.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    return report(parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
