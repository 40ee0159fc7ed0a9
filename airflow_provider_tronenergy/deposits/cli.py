"""``tronenergy-deposits``: see credited deposits and the callbacks the chain has not proven.

    tronenergy-deposits list                       # waiting and disputed claims
    tronenergy-deposits list --state dismissed
    tronenergy-deposits show 9f3a...               # the callback's view and the chain's
    tronenergy-deposits recheck 9f3a... --conn-id tron_node_default
    tronenergy-deposits dismiss 9f3a... --note "forged: the service confirmed a breach"
    tronenergy-deposits credits --address T...     # what was credited, and from which log

The ledger is the one the workers use: ``--ledger``, else ``$TRONENERGY_DEPOSITS_DB``,
else ``[tronenergy] deposits_ledger``, else the SQLite file in ``$AIRFLOW_HOME``.

There is no manual credit. A deposit is credited only by what the chain proves:
``recheck`` reads the chain again (through the workers' ``tron_node`` connection, or
``--node-url``) and credits the transaction's transfers if the chain now proves the
callback; ``dismiss`` closes a claim as not credited, with a note and the login kept.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import TYPE_CHECKING, Any

from airflow_provider_tronenergy.deposits.claims import OPEN, STATES, Claim
from airflow_provider_tronenergy.deposits.ledger import DepositLedger
from airflow_provider_tronenergy.deposits.proof import NODE_NEEDED, ProofSettings, Prover
from airflow_provider_tronenergy.errors import ConnectionMissing
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.sqlstore import StoreError

if TYPE_CHECKING:
    from airflow_provider_tronenergy.node.client import TronNodeClient


def parser() -> argparse.ArgumentParser:
    """The command line; each sub-command documents itself with ``--help``."""
    p = argparse.ArgumentParser(prog="tronenergy-deposits", description=__doc__.split("\n")[0])
    p.add_argument("--ledger", help="SQLAlchemy URL of the ledger (default: as the workers)")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="claims, oldest first (default: waiting and disputed)")
    ls.add_argument("--state", choices=[*STATES, "open"], default="open")
    ls.add_argument("--limit", type=int, default=100)
    ls.add_argument("--json", action="store_true")
    show = sub.add_parser("show", help="one claim: what the callback said, what the chain says")
    show.add_argument("tx_hash")
    show.add_argument("--json", action="store_true")
    recheck = sub.add_parser("recheck", help="prove one open claim against the chain again")
    recheck.add_argument("tx_hash")
    _chain_arguments(recheck)
    dismiss = sub.add_parser("dismiss", help="close an open claim as not credited")
    dismiss.add_argument("tx_hash")
    dismiss.add_argument("--note", required=True, help="why: kept with the claim")
    dismiss.add_argument("--by", help="who decides (default: the login name)")
    credits = sub.add_parser("credits", help="credited deposits, newest first")
    credits.add_argument("--address")
    credits.add_argument("--tx", dest="tx_hash")
    credits.add_argument("--limit", type=int, default=100)
    credits.add_argument("--json", action="store_true")
    return p


def _chain_arguments(p: argparse.ArgumentParser) -> None:
    """How a sub-command that proves reads the chain, and who asks."""
    node = p.add_mutually_exclusive_group()
    node.add_argument("--conn-id", help="the tron_node connection (default: tron_node_default)")
    node.add_argument("--node-url", help="a node's HTTP root instead of a connection")
    p.add_argument("--usdt-contract", help="with --node-url: the token contract")
    p.add_argument("--confirmations", type=int,
                   help="accept a block this deep (default: solidified only)")
    p.add_argument("--address", action="append", default=[],
                   help="another deposit address whose transfers in the same transaction "
                        "are credited too (repeatable)")
    p.add_argument("--by", help="who asks (default: the login name)")


def _line(claim: Claim) -> str:
    said = claim.said
    chain = claim.chain
    seen = (f"chain: block {chain['block_number']}, "
            f"{len(chain.get('transfers', []))} transfer(s) of the token"
            if chain.get("block_number") else "chain: nothing read")
    note = f"\n           {claim.resolved_by or ''}: {claim.note}" if claim.note else ""
    return (f"{claim.state.upper():<10} {said.tx_hash}  {said.amount} {said.token} to "
            f"{said.to_address}\n           {claim.reason}: {claim.to_dict()['meaning']}"
            f"{f' ({claim.detail})' if claim.detail else ''}; {seen}; tried {claim.tries}x, "
            f"last {claim.last_tried}{note}")


def _dump(value: Any) -> None:
    print(json.dumps(value, indent=2, sort_keys=True))


def main(argv: list[str] | None = None) -> int:
    """Run one sub-command; 0 on success, 1 when refused, 2 on bad set-up."""
    args = parser().parse_args(argv)
    try:
        ledger = DepositLedger(args.ledger)
        ledger.db  # noqa: B018 (open and migrate now: a bad URL is a set-up error)
    except StoreError as exc:
        print(f"tronenergy-deposits: {exc}", file=sys.stderr)
        return 2
    try:
        return _run(args, ledger)
    except ConnectionMissing as exc:  # --conn-id names no connection: a set-up error
        print(f"tronenergy-deposits: {exc}", file=sys.stderr)
        return 2
    except (ValueError, NodeError) as exc:
        print(f"tronenergy-deposits: {exc}", file=sys.stderr)
        return 1
    finally:
        ledger.close()


def _run(args: argparse.Namespace, ledger: DepositLedger) -> int:
    if args.command == "list":
        states = OPEN if args.state == "open" else (args.state,)
        found = ledger.claims(states, limit=args.limit)
        if args.json:
            _dump([c.to_dict() for c in found])
            return 0
        counts = ledger.claim_counts()
        print(", ".join(f"{n} {state}" for state, n in counts.items()))
        for item in found:
            print(_line(item))
        return 0
    if args.command == "credits":
        rows = ledger.credits(tx_hash=args.tx_hash, to_address=args.address, limit=args.limit)
        if args.json:
            _dump([c.to_dict() for c in rows])
        for c in [] if args.json else rows:
            print(f"{c.amount} {c.token} to {c.to_address}  tx {c.tx_hash}  "
                  f"block {c.block_number}, log {c.log_index}  "
                  f"via {c.source}, {c.credited_at}")
        return 0
    claim = ledger.claim(args.tx_hash)
    if claim is None:
        print(f"tronenergy-deposits: no claim for {args.tx_hash}", file=sys.stderr)
        return 1
    if args.command == "show":
        if args.json:
            _dump(claim.to_dict())
        else:
            print(_line(claim))
            _dump({"callback": claim.to_dict()["callback"], "chain": claim.chain})
        return 0
    if args.command == "dismiss":
        if not ledger.dismiss(args.tx_hash, note=args.note, by=args.by or _login()):
            print(f"tronenergy-deposits: the claim is {claim.state}, not open",
                  file=sys.stderr)
            return 1
        print(f"dismissed {args.tx_hash}: not credited")
        return 0
    with _node(args) as node:
        prover = Prover(node, ProofSettings(confirmations=args.confirmations))
        verdict, credited = ledger.recheck(args.tx_hash, prover=prover, addresses=args.address,
                                           credited_by=f"recheck by {args.by or _login()}")
    print(f"{verdict.state}: {verdict.meaning}{f' ({verdict.detail})' if verdict.detail else ''}")
    for t in credited:
        print(f"  credited {t.units} units to {t.to_address} (block {t.block_number}, "
              f"log {t.index})")
    return 0


def _node(args: argparse.Namespace) -> TronNodeClient:
    """The node to read: a URL given, else the workers' ``tron_node`` connection."""
    from airflow_provider_tronenergy.node.client import TronNodeClient

    if args.node_url:
        kwargs = {"usdt_contract": args.usdt_contract} if args.usdt_contract else {}
        return TronNodeClient(args.node_url, **kwargs)
    from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook

    return TronNodeHook.required(args.conn_id or TronNodeHook.default_conn_name,
                                 needs=NODE_NEEDED, setting="--conn-id").get_conn()


def _login() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name in a container: leave it blank
        return ""


if __name__ == "__main__":
    sys.exit(main())
