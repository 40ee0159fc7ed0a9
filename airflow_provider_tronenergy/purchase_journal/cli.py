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
``--not-placed`` it buys, once. An order id is first read from the service
(``--conn-id``, the workers' ``tronenergy`` connection) and must be the
purchase's: same target, energy and rent time, held by no other attempt.
``--force --reason "..."`` records one that is not, with the login and the reason.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from airflow_provider_tronenergy.purchase_journal.store import (
    Entry,
    EntryState,
    JournalError,
    PurchaseJournal,
    journal_url,
)
from airflow_provider_tronenergy.purchase_journal.verify import (
    OrderCheck,
    OrderMismatch,
    read_order,
    resolve_placed,
)
from airflow_provider_tronenergy.sqlstore import StoreError

if TYPE_CHECKING:
    from airflow_provider_tronenergy.client import Order


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
    resolve.add_argument("--conn-id", help="the Airflow connection (type tronenergy) to read "
                                           "the order with (default: the hook's, "
                                           "tronenergy_default)")
    resolve.add_argument("--force", action="store_true",
                         help="record the order id even though it does not match, or cannot "
                              "be read (needs --reason; the journal keeps it and the login)")
    resolve.add_argument("--reason", help="why --force: kept in the journal")
    return p


def _line(entry: Entry) -> str:
    state = "UNKNOWN" if entry.state is EntryState.SENDING else entry.state.value
    order = f" order {entry.order_id}" if entry.order_id else ""
    said = "; ".join(filter(None, [entry.resolved_by and f"resolved by {entry.resolved_by}",
                                   entry.note]))
    return (f"{state:<10} {entry.identity}  #{entry.attempt}  sent "
            f"{entry.to_dict()['sent_at']}{order}\n           {entry.description}"
            + (f"\n           {said}" if said else ""))


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
    p = parser()
    args = p.parse_args(argv)
    if args.command == "resolve" and (args.force or args.reason is not None) and not (
            args.force and args.order_id and (args.reason or "").strip()):
        p.error("--force goes with --order-id and a --reason that says why")
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
        elif args.not_placed:
            entry = journal.resolve(args.identity, not_placed=True, by=args.by or _login(),
                                    note=args.note)
            print(f"resolved {entry.identity}: not placed: the next attempt buys, once")
        else:
            entry, check = resolve_placed(
                journal, args.identity, args.order_id, _reader(args.conn_id),
                by=args.by or _login(), note=args.note,
                force=args.reason if args.force else None, login=_login())
            print(f"resolved {entry.identity}: placed as order {entry.order_id}: the next "
                  f"attempt uses it\n{_checked(check)}")
    except OrderMismatch as exc:
        print(f"tronenergy-purchases: refused: {exc}\nCheck the order id in the service's "
              "console. If it is this purchase's order all the same, say so: add --force "
              "--reason \"...\" (the journal keeps the reason and your login).", file=sys.stderr)
        return 1
    except JournalError as exc:
        print(f"tronenergy-purchases: {exc}", file=sys.stderr)
        return 1
    finally:
        journal.close()
    return 0


def _reader(conn_id: str | None) -> Callable[[str], Order | str]:
    """Reads an order through the Airflow connection ``conn_id`` (opened on first use:
    ``list`` and ``show`` do without Airflow)."""

    def read(order_id: str) -> Order | str:
        from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook

        hook = TronEnergyHook(tronenergy_conn_id=conn_id or TronEnergyHook.default_conn_name)
        try:
            client = hook.get_conn()
        except Exception as exc:  # a missing or malformed connection; messages hold no secret
            return f"connection {hook.tronenergy_conn_id!r} cannot be used ({exc}); see --conn-id"
        try:
            return read_order(client, order_id)
        finally:
            hook.close()

    return read


def _checked(check: OrderCheck) -> str:
    if check.ok:
        return f"  checked with the service: {check.agreed()}"
    return f"  FORCED, though the order does not check out:\n{check.explain()}"


def _login() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name in a container: leave it blank
        return ""


if __name__ == "__main__":
    sys.exit(main())
