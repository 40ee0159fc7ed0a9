"""A worker in its own process for the scan drills: ``python scan_worker.py '<json>'``.

``{"node": url, "ledger": url, "addresses": [...], "settings": {...}, "mode": ...}``;
``mode`` ``scan`` runs one scan (of ``token``: ``USDT`` unless named); ``callbacks``
credits, as the callback path does once the chain proved them, the transfers of ``blocks``
(read one by one, shuffled with ``seed``), through ``DepositLedger.credit(...,
source="callback")``; ``both`` does one then the other (``order``). Prints one JSON line:
what this process credited.
"""

from __future__ import annotations

import json
import random
import sys

from airflow_provider_tronenergy.deposits.ledger import DepositLedger
from airflow_provider_tronenergy.deposits.scan.core import DepositScan, ScanSettings
from airflow_provider_tronenergy.node.client import TronNodeClient


def callbacks(ledger, node, args) -> list[list]:
    wanted = set(args["addresses"])
    found = [t for n in args["blocks"] for t in node.get_block_token_transfers(
        n, solidified=True).transfers if t.to_address in wanted]
    random.Random(args.get("seed", 0)).shuffle(found)
    credited = []
    for t in found:
        credited += [[c.tx_hash, c.index] for c in ledger.credit(
            [t], token="USDT", source="callback", credited_by=args.get("name"))]
    return credited


def scan(ledger, node, args) -> list[list]:
    report = DepositScan(ledger, node, args["addresses"], token=args.get("token", "USDT"),
                         settings=ScanSettings(**args["settings"])).run(
        credited_by=args.get("name"))
    return [[t.tx_hash, t.index] for t in report.credited]


def main() -> None:
    args = json.loads(sys.argv[1])
    steps = {"scan": [scan], "callbacks": [callbacks],
             "both": [scan, callbacks] if args.get("order") == "scan" else [callbacks, scan]}
    with TronNodeClient(args["node"]) as node, DepositLedger(args["ledger"]) as ledger:
        credited = [pair for step in steps[args["mode"]] for pair in step(ledger, node, args)]
    print(json.dumps({"credited": credited}), flush=True)


if __name__ == "__main__":
    main()
