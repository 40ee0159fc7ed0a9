"""``tronenergy-payouts``: see the payout journal and decide on payouts that failed on chain.

    tronenergy-payouts list --failed
    tronenergy-payouts show 'id:payroll-2026-11-0042'
    tronenergy-payouts resolve 'id:payroll-2026-11-0042' --resend --reason "refilled energy"
    tronenergy-payouts resolve 'row:2026-11-26T00:00:00+00:00:7' --cancel --reason "..."

The journal is the one the workers use (``--journal``, else
``$TRONENERGY_PURCHASE_JOURNAL``, else ``[tronenergy] purchase_journal``, else the
SQLite file in ``$AIRFLOW_HOME``). ``show`` prints each attempt with its amount (TRX and
USDT in their units; a contract's in its smallest units, the journal holding no decimals:
its task's result has them) and its receipt (the result, the energy used and burned, the
TRX burned by kind: energy, bandwidth, account creation, other). Only a payout whose newest
attempt *failed on chain* can be resolved: ``--resend`` lets the next run sign a new
transaction for it, once; ``--cancel`` ends it unpaid. A transaction that can still
execute is never resolved by hand: the chain decides it.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Sequence

from airflow_provider_tronenergy.node.models import trx_text
from airflow_provider_tronenergy.payout.by_token import fee_split, shown_amount
from airflow_provider_tronenergy.payout.journal import (
    Attempt,
    PayoutJournal,
    PayoutJournalError,
    PayoutState,
)
from airflow_provider_tronenergy.sqlstore import StoreError

PROG = "tronenergy-payouts"


def parser() -> argparse.ArgumentParser:
    """The command line; each sub-command documents itself with ``--help``."""
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("--journal", help="SQLAlchemy URL of the journal (default: as the workers)")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="recent attempts, newest first")
    ls.add_argument("--failed", action="store_true", help="only payouts failed on chain")
    ls.add_argument("--state", choices=[s.value for s in PayoutState])
    ls.add_argument("--batch", help="only this batch id")
    ls.add_argument("--limit", type=int, default=50)
    ls.add_argument("--json", action="store_true")
    show = sub.add_parser("show", help="every attempt at one payout, with its receipt")
    show.add_argument("identity")
    show.add_argument("--json", action="store_true")
    resolve = sub.add_parser("resolve", help="decide on a payout that failed on chain")
    resolve.add_argument("identity")
    decision = resolve.add_mutually_exclusive_group(required=True)
    decision.add_argument("--resend", action="store_true",
                          help="pay it with a new transaction (the next run signs it, once)")
    decision.add_argument("--cancel", action="store_true", help="do not pay it")
    resolve.add_argument("--reason", required=True, help="why: kept in the journal")
    resolve.add_argument("--by", help="who decides (default: the login name)")
    return p


def _line(a: Attempt) -> str:
    receipt = a.receipt or {}
    split = fee_split(receipt, a.token, a.signatures)
    kinds = ", ".join(f"{kind} {trx_text(sun)}" for kind, sun in split.items() if sun)
    figures = (f"\n           {receipt.get('result')}: energy {receipt.get('energy_total')} "
               f"({receipt.get('energy_from_stake')} from stake/rental, "
               f"{receipt.get('energy_burned')} burned), TRX burned "
               f"{receipt.get('trx_burned')}" + (f" ({kinds})" if kinds else "")
               + f", bandwidth {receipt.get('bandwidth')}" if receipt else "")
    said = "; ".join(filter(None, [a.resolved_by and f"resolved by {a.resolved_by}", a.note,
                                   a.last_answer and f"node said: {a.last_answer}"]))
    return (f"{a.state.value.upper():<10} {a.identity}  #{a.attempt}  "
            f"{shown_amount(a.token, a.units)} to {a.recipient}  batch {a.batch_id}\n"
            f"           tx {a.txid or '-'}"
            + (f" block {a.block_number}" if a.block_number else "")
            + figures + (f"\n           {said}" if said else ""))


def _print(attempts: Sequence[Attempt], as_json: bool) -> None:
    if as_json:
        print(json.dumps([a.to_dict() for a in attempts], indent=2))
    elif not attempts:
        print("(no payouts)")
    else:
        print("\n".join(_line(a) for a in attempts))


def main(argv: list[str] | None = None) -> int:
    """Run one sub-command; 0 on success, 1 when the journal refuses, 2 on bad set-up."""
    args = parser().parse_args(argv)
    try:
        journal = PayoutJournal(args.journal)
    except StoreError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    try:
        if args.command == "list":
            state = PayoutState.FAILED if args.failed else (
                PayoutState(args.state) if args.state else None)
            _print(journal.recent(state=state, batch_id=args.batch, limit=args.limit), args.json)
        elif args.command == "show":
            history = journal.history(args.identity)
            if not history:
                print(f"{PROG}: no payout {args.identity!r} in {journal.safe_url}",
                      file=sys.stderr)
                return 1
            _print(history, args.json)
        else:
            if not args.reason.strip():
                print(f"{PROG}: --reason must say why", file=sys.stderr)
                return 2
            attempt = journal.resolve(args.identity, resend=args.resend,
                                      by=args.by or _login(), note=args.reason)
            print(f"resolved {attempt.identity}: "
                  + ("the next run pays it with a new transaction, once" if args.resend
                     else "cancelled: it will not be paid"))
    except PayoutJournalError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    finally:
        journal.close()
    return 0


def _login() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name in a container
        return ""


if __name__ == "__main__":
    sys.exit(main())
