"""How many signed USDT transfers per second the sandbox's node accepts, against its reads.

The sandbox runs as its own process (the CLI, blocks every 0.3 s: ``--time-scale 0.1``).
Client processes use an unmodified tronpy: ``wallet/getaccount`` through
``Tron.get_account``, and USDT ``transfer(address,uint256)`` built offline on a
reference block (``build(offline=True, ref_block_id=...)``), signed with
``tronpy.keys`` and sent through ``Tron.broadcast`` (its ``HTTPProvider``). Each
broadcast round's transactions are built and signed before the round starts, so the
round times the node (decoding, the txID, signature recovery, TAPOS, duplicates, the
dry run of charging, storing, and packing the blocks produced meanwhile), not the
client's signing. Read and broadcast rounds alternate in one run; after each
broadcast round the bench waits until every accepted transfer is in a block, so a
read round never pays for the execution of the round before. At the end every
accepted transfer must be executed, successfully.

Aim: >= 100 accepted transfers per second on the 2-core machine. The largest payout
batch the project measures is 10,000 recipients (``payout_scale.py``, prepared in
under 2 minutes); at 100/s the sandbox takes it in 100 s, so the node is not what
makes sending a batch slow. The ratio to reads shows what the checks cost.

    .venv/bin/python bench/node_broadcast.py [--rounds 3] [--seconds 3] [--clients 2]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import time
from decimal import Decimal
from multiprocessing.synchronize import Barrier
from typing import Any

import requests
from tronpy import Tron
from tronpy.keys import PrivateKey
from tronpy.providers import HTTPProvider

from tronenergy_protocol.address import random_address
from tronenergy_sandbox.process import SandboxProcess, start_sandbox

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
FEE_LIMIT = 30_000_000
RECIPIENTS = 200
"""USDT holders the transfers go to (and whose accounts the reads fetch)."""


def _worker(root_url: str, kind: str, seconds: float, key_hex: str, recipients: list[str],
            pool: int, first_amount: int, barrier: Barrier, out: Any) -> None:
    """One client process: prepare (sign ``pool`` transfers), wait for the others, run."""
    tron = Tron(HTTPProvider(root_url + "/"))
    signed = []
    if kind == "broadcast":
        key = PrivateKey(bytes.fromhex(key_hex))
        owner = key.public_key.to_base58check_address()
        transfer = tron.get_contract(USDT).functions.transfer
        ref_block = tron.get_latest_block_id()
        for i in range(pool):  # distinct amounts: distinct txIDs
            builder = transfer(recipients[i % len(recipients)], first_amount + i)
            signed.append(builder.with_owner(owner).fee_limit(FEE_LIMIT)
                          .build(offline=True, ref_block_id=ref_block).sign(key))
    barrier.wait()
    done = errors = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        try:
            if kind == "broadcast":
                if done + errors == len(signed):
                    break  # the pool ran out before the round did
                tron.broadcast(signed[done + errors])
            else:
                tron.get_account(recipients[(done + errors) % len(recipients)])
            done += 1
        except Exception:  # a refusal (tronpy raises it) or a failed read
            errors += 1
    out.put((done, errors, time.perf_counter() - started))


def measure(sandbox: SandboxProcess, kind: str, *, seconds: float, clients: int, key_hex: str,
            recipients: list[str], pool: int, first_amount: int) -> dict[str, Any]:
    """One round of ``kind`` (``read`` or ``broadcast``): operations per second, all clients."""
    queue: multiprocessing.Queue[tuple[int, int, float]] = multiprocessing.Queue()
    barrier = multiprocessing.Barrier(clients)
    workers = [multiprocessing.Process(
        target=_worker, args=(sandbox.root_url, kind, seconds, key_hex, recipients, pool,
                              first_amount + n * pool, barrier, queue)) for n in range(clients)]
    for worker in workers:
        worker.start()
    results = [queue.get() for _ in workers]
    for worker in workers:
        worker.join()
    done, errors = sum(r[0] for r in results), sum(r[1] for r in results)
    elapsed = max(r[2] for r in results)
    if errors:
        raise SystemExit(f"{kind}: {errors} of {done + errors} calls failed")
    return {"done": done, "rate": done / elapsed, "short": elapsed < seconds * 0.99}


def chain(sandbox: SandboxProcess, path: str, **query: str) -> Any:
    response = requests.get(f"{sandbox.root_url}/sandbox/chain{path}", params=query, timeout=60)
    response.raise_for_status()
    return json.loads(response.text, parse_float=Decimal)["data"]


def drained(sandbox: SandboxProcess) -> float:
    """Seconds until no accepted transaction waits for its block."""
    started = time.perf_counter()
    while chain(sandbox, "/transactions", status="pending"):
        time.sleep(0.05)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each kind")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--clients", type=int, default=2)
    args = parser.parse_args()
    sandbox = start_sandbox("--time-scale", "0.1", log_level="info")  # as users run it
    try:
        control = f"{sandbox.root_url}/sandbox"
        key = PrivateKey.random()
        sender = key.public_key.to_base58check_address()
        requests.post(f"{control}/addresses/{sender}/balances",
                      json={"trx": "100000000", "usdt": "100000000"}, timeout=10
                      ).raise_for_status()
        recipients = [random_address() for _ in range(RECIPIENTS)]
        for address in recipients:
            requests.post(f"{control}/addresses/{address}/activate", timeout=10
                          ).raise_for_status()
            requests.post(f"{control}/addresses/{address}/holder", json={"token": "USDT"},
                          timeout=10).raise_for_status()
        common = {"clients": args.clients, "key_hex": key.hex(), "recipients": recipients}
        amount = 1_000_000
        warm = measure(sandbox, "broadcast", **common, seconds=1.0, pool=2_000,
                       first_amount=amount)
        amount += 2_000 * args.clients
        drained(sandbox)
        pool = int(warm["rate"] / args.clients * args.seconds * 2) + 100
        rates: dict[str, list[float]] = {"read": [], "broadcast": []}
        drains, accepted = [], warm["done"]
        print(f"sandbox node, {args.clients} tronpy client processes, {args.seconds:g} s rounds"
              f" (warm-up: {warm['rate']:.0f} transfers/s, {pool:,} signed per client a round)")
        for number in range(1, args.rounds + 1):
            for kind in ("read", "broadcast"):
                result = measure(sandbox, kind, **common, seconds=args.seconds, pool=pool,
                                 first_amount=amount)
                rates[kind].append(result["rate"])
                note = ""
                if kind == "broadcast":
                    amount += pool * args.clients
                    accepted += result["done"]
                    drains.append(drained(sandbox))
                    note = f" (then {drains[-1]:.2f} s until all were in a block)"
                    if result["short"]:
                        note += " (ran out of signed transfers: raise the pool)"
                print(f"  round {number} {kind:>9}: {result['rate']:7.0f}/s{note}", flush=True)
        executed = chain(sandbox, "/transactions", owner=sender)
    finally:
        sandbox.stop()
    ok = sum(t["receipt"]["receipt"].get("result") == "SUCCESS" for t in executed)
    read, sent = statistics.median(rates["read"]), statistics.median(rates["broadcast"])
    print(f"  getaccount reads     : {read:7.0f}/s (median of {args.rounds})")
    print(f"  transfers accepted   : {sent:7.0f}/s (median of {args.rounds})")
    print(f"  accepted / reads     : {sent / read:.2f}")
    print(f"  executed             : {len(executed):,} of {accepted:,} accepted, "
          f"{ok:,} SUCCESS")
    met = sent >= 100 and len(executed) == accepted == ok
    print(f"  aim >= 100 accepted/s, every one executed: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
