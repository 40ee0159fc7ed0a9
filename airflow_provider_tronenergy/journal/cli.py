"""``tronenergy-purchases``: see the purchase journal and resolve unknown outcomes.

    tronenergy-purchases list --unknown
    tronenergy-purchases show 'auto:payouts.buy[0]:9f3a...'
    tronenergy-purchases resolve 'auto:payouts.buy[0]:9f3a...' --order-id 6bd8...
    tronenergy-purchases resolve 'auto:payouts.buy[0]:9f3a...' --not-placed

The journal is the one the workers use: ``--journal``, else
``$TRONENERGY_PURCHASE_JOURNAL``, else ``[tronenergy] purchase_journal``, else
the SQLite file in ``$AIRFLOW_HOME``. Resolving is a person's statement about
the service's account (its console lists the orders); the next attempt acts on
it: with an order id it waits for that order instead of buying, with
``--not-placed`` it buys, once.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Sequence

from airflow_provider_tronenergy.journal.store import (
    Entry,
    EntryState,
    JournalError,
    PurchaseJournal,
    journal_url,
)
from airflow_provider_tronenergy.sqlstore import StoreError


def parser() -> argparse.ArgumentParser:
    """The command line; each sub-command documents itself with ``--help``."""
    p = argparse.ArgumentParser(prog="tronenergy-purchases", description=__doc__.split("\n")[0])
    p.add_argument("--journal", help="SQLAlchemy URL of the journal (default: as the workers)")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="recent attempts, newest first")
    ls.add_argument("--unknown", action="store_true", help="only unknown outcomes (to resolve)")
    ls.add_argument("--state", choices=[s.value for s in EntryState])
    ls.add_argument("--limit", type=int, default=50)
    ls.add_argument("--json", action="store_true")
    show = sub.add_parser("show", help="every attempt at one purchase identity")
    show.add_argument("identity")
    show.add_argument("--json", action="store_true")
    resolve = sub.add_parser("resolve", help="record what became of an unknown outcome")
    resolve.add_argument("identity")
    outcome = resolve.add_mutually_exclusive_group(required=True)
    outcome.add_argument("--order-id", help="it was placed: this is its order id")
    outcome.add_argument("--not-placed", action="store_true",
                         help="it was not placed: the next attempt buys, once")
    resolve.add_argument("--by", help="who resolves (default: the login name)")
    resolve.add_argument("--note", help="free text kept with the entry")
    return p


def _line(entry: Entry) -> str:
    state = "UNKNOWN" if entry.state is EntryState.SENDING else entry.state.value
    order = f" order {entry.order_id}" if entry.order_id else ""
    return (f"{state:<10} {entry.identity}  #{entry.attempt}  sent "
            f"{entry.to_dict()['sent_at']}{order}\n           {entry.description}")


def _print(entries: Sequence[Entry], as_json: bool) -> None:
    if as_json:
        print(json.dumps([e.to_dict() for e in entries], indent=2))
        return
    if not entries:
        print("(no entries)")
    for entry in entries:
        print(_line(entry))


def main(argv: list[str] | None = None) -> int:
    """Run one sub-command; 0 on success, 1 when the journal refuses, 2 on bad set-up."""
    args = parser().parse_args(argv)
    try:
        journal = PurchaseJournal(journal_url(args.journal))
    except StoreError as exc:
        print(f"tronenergy-purchases: {exc}", file=sys.stderr)
        return 2
    try:
        if args.command == "list":
            state = EntryState.SENDING if args.unknown else (
                EntryState(args.state) if args.state else None)
            _print(journal.list(state=state, limit=args.limit), args.json)
        elif args.command == "show":
            entries = journal.list(identity=args.identity, limit=1000)
            if not entries:
                print(f"tronenergy-purchases: no purchase {args.identity!r} in "
                      f"{journal.safe_url}", file=sys.stderr)
                return 1
            _print(entries, args.json)
        else:
            entry = journal.resolve(args.identity, order_id=args.order_id,
                                    not_placed=args.not_placed,
                                    by=args.by or _login(), note=args.note)
            what = (f"placed as order {entry.order_id}: the next attempt uses it"
                    if entry.order_id else "not placed: the next attempt buys, once")
            print(f"resolved {entry.identity}: {what}")
    except JournalError as exc:
        print(f"tronenergy-purchases: {exc}", file=sys.stderr)
        return 1
    finally:
        journal.close()
    return 0


def _login() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name in a container: leave it blank
        return ""


if __name__ == "__main__":
    sys.exit(main())
