"""A payout worker as an OS process of its own, for the drills (tests/payout/test_drills.py).

``python -m support.payout_worker SPEC.json`` (PYTHONPATH holding tests/) or by path. It
opens the journal, a :class:`TronNodeClient` to the sandbox and a
:class:`LocalKeySigner`, then runs :meth:`PayoutSender.send` passes and
:meth:`PayoutWatch.step` until the batch is settled, as the operator does, and prints a
JSON summary on its last line. Its clock is the sandbox's (``GET /sandbox/chain``'s
``clock_ms``): a drill's ticker moves the chain faster than real time, and the worker
checks the node's block times against its clock. The key comes from
``TRONENERGY_DRILL_KEY`` (never argv: ``/proc/<pid>/cmdline`` is world-readable); the
spec file holds nothing secret. Each row names its token (USDT, TRX or a contract),
resolved as the operator does (:class:`~airflow_provider_tronenergy.node.tokens.TokenBook`:
a contract's decimals read from the chain). With ``"preflight": true`` each round is
cleared as the operator clears it (:func:`preflight`: the sender's transfers in flight,
then :func:`~airflow_provider_tronenergy.payout.preflight.clear_to_sign`, per token in a
mixed batch); a round refused only for funds in flight is passed again, as the operator's
retry would (counted in the summary's ``in_flight_waits``).

Crash injection, by environment (a drill, not the package, wraps the journal and the node):

* ``TRONENERGY_DRILL_KILL``: ``after_claim`` (a chunk's claims committed, nothing of it
  signed: the next worker takes the stale claims over once their lease is past),
  ``after_journal`` (a ``record_signed`` committed, nothing of it broadcast yet),
  ``after_broadcast`` (the node accepted a transaction, ``mark_sent`` has not written
  it), ``during_confirm`` (a ``record_outcomes`` call wrote the first half of its
  receipts: a kill between two of its commits) or ``after_expire`` (attempts proven
  expired were written, none signed anew yet);
* ``TRONENERGY_DRILL_KILL_AT``: at its N-th occurrence (default 1) the worker SIGKILLs itself.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, cast

import requests

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.models import BroadcastAnswer
from airflow_provider_tronenergy.node.tokens import ConstantCalls, TokenBook
from airflow_provider_tronenergy.payout.funds import FundsInFlight
from airflow_provider_tronenergy.payout.journal import (
    Attempt,
    Claim,
    PayoutJournal,
    Signed,
)
from airflow_provider_tronenergy.payout.lease import Lease
from airflow_provider_tronenergy.payout.preflight import clear_to_sign
from airflow_provider_tronenergy.payout.rows import Payout, payouts
from airflow_provider_tronenergy.payout.send import Clear, Look, PayoutSender, SendSettings, Step
from airflow_provider_tronenergy.payout.watch import PayoutWatch, still_in_flight
from airflow_provider_tronenergy.signer import LocalKeySigner

KEY_ENV = "TRONENERGY_DRILL_KEY"
KILL_ENV = "TRONENERGY_DRILL_KILL"
KILL_AT_ENV = "TRONENERGY_DRILL_KILL_AT"
POINTS = ("after_claim", "after_journal", "after_broadcast", "during_confirm", "after_expire")


class Kill:
    """Counts occurrences of the armed point; SIGKILLs this process at the N-th."""

    def __init__(self, point: str | None, at: int) -> None:
        if point is not None and point not in POINTS:
            raise SystemExit(f"{KILL_ENV} must be one of {', '.join(POINTS)}")
        self.point, self.at, self.seen = point, at, 0
        self._lock = threading.Lock()

    def due(self, point: str) -> bool:
        """Count one occurrence of ``point``; whether it is the one to die at."""
        if point != self.point:
            return False
        with self._lock:
            self.seen += 1
            return self.seen == self.at

    @staticmethod
    def now() -> None:
        """No cleanup, no flush: what a crash, an OOM kill or a lost machine leaves."""
        os.kill(os.getpid(), signal.SIGKILL)


class DrillJournal(PayoutJournal):
    """The package's journal, with the two journal-side kill points."""

    kill: Kill

    def claim(self, claims: Sequence[Claim], scope: str, *, lease: Lease | None = None
              ) -> tuple[list[Attempt], list[str]]:
        """Claim as the package does; die once the claims are committed, before signing."""
        won, lost = super().claim(claims, scope, lease=lease)
        if won and self.kill.due("after_claim"):
            self.kill.now()
        return won, lost

    def record_signed(self, signed: Sequence[Signed]) -> tuple[list[Signed], list[Signed]]:
        """Journal as the package does; die once it committed, before any broadcast."""
        done, refused = super().record_signed(signed)
        if done and self.kill.due("after_journal"):
            self.kill.now()
        return done, refused

    def record_outcomes(self, outcomes: Sequence[tuple[Attempt, bool, int, dict[str, Any]]]
                        ) -> int:
        """Record receipts; at the kill point, only the first half of them, then die."""
        if outcomes and self.kill.due("during_confirm"):
            super().record_outcomes(outcomes[:max(1, len(outcomes) // 2)])
            self.kill.now()
        return super().record_outcomes(outcomes)

    def mark_expired(self, attempts: Sequence[Attempt], proof: str) -> int:
        """Write the verdict as the package does; die before any payout is signed anew."""
        moved = super().mark_expired(attempts, proof)
        if moved and self.kill.due("after_expire"):
            self.kill.now()
        return moved


class DrillNode(TronNodeClient):
    """The package's node client, with the broadcast-side kill point."""

    kill: Kill

    def broadcast(self, signed: dict[str, Any]) -> BroadcastAnswer:
        """Broadcast; die once the node accepted it, before the journal hears of it."""
        answer = super().broadcast(signed)
        if answer.accepted and self.kill.due("after_broadcast"):
            self.kill.now()
        return answer


def sandbox_clock(root_url: str) -> Callable[[], float]:
    """The sandbox world's clock, read over its control API (epoch seconds)."""
    session = requests.Session()

    def now() -> float:
        answer = session.get(f"{root_url}/sandbox/chain", timeout=10)
        answer.raise_for_status()
        return int(answer.json()["data"]["clock_ms"]) / 1000

    return now


def preflight(journal: PayoutJournal, node: TronNodeClient, book: TokenBook, sender: str,
              settings: SendSettings, clock: Callable[[], float], solidified: bool,
              figures: list[dict[str, Any]]) -> Clear:
    """The operator's pre-flight of a round (operators/payout.py ``_send_round``): the
    sender's transfers in flight, then the rows to sign at what the chain charges now;
    each round's figures (``Cleared.to_dict()``, its TRX plan among them) to ``figures``."""
    def clear(to_sign: Sequence[Payout], look: Look) -> tuple[list[Payout], int | None]:
        in_flight = still_in_flight(
            journal, node, sender, after_ms=look.head.timestamp_ms,
            after_block=look.head.number, solidified=solidified, clock=clock,
            tolerance_s=settings.clock_tolerance_s) if to_sign else []
        cleared = clear_to_sign(
            node, sender, to_sign, signer_address=sender, token="USDT", decimals=6,
            max_burn_trx=Decimal(1000), policy=settings.fee_policy, in_flight=in_flight,
            tokens=book.by_name())
        figures.append({"to_sign": len(to_sign), **cleared.to_dict()})
        return cleared.rows, cleared.now.first_transfer

    return clear


def _wait_for_go(spec: dict[str, Any]) -> None:
    """Two workers start together: say ready, wait for the test's go (files)."""
    ready, go = spec.get("ready_file"), spec.get("go_file")
    if ready:
        Path(ready).touch()
    if go:
        deadline = time.monotonic() + 60
        while not Path(go).exists():
            if time.monotonic() > deadline:
                raise SystemExit("no go from the test within 60 s")
            time.sleep(0.005)


def run(spec: dict[str, Any], key_hex: str, kill: Kill) -> dict[str, Any]:
    """Send and watch the spec's batch until it is settled; what each pass did."""
    journal = DrillJournal(spec["journal"], schema=spec.get("schema"))
    journal.kill = kill
    node = DrillNode(spec["node"], usdt_contract=spec["contract"],
                     max_retries=int(spec.get("max_retries", 0)))
    node.kill = kill
    signer = LocalKeySigner(key_hex)
    book = TokenBook(cast(ConstantCalls, node))  # a dict where the protocol says Mapping
    rows = payouts(spec["rows"], batch_id=spec["batch_id"], tokens=book.token)
    settings = SendSettings(contract=spec["contract"], expiration_s=int(spec["expiration_s"]),
                            chunk=int(spec.get("chunk", 200)),
                            lease_s=float(spec.get("lease_s", 120)))
    clock = sandbox_clock(spec["node"])
    sender = PayoutSender(journal, node, signer, settings, scope=spec["scope"],
                          energy_fee_sun=node.get_chain_parameters().energy_fee, clock=clock)
    solidified = bool(spec.get("solidified", False))
    watch = PayoutWatch(journal, node, spec["batch_id"], budget=int(spec.get("budget", 50)),
                        clock=clock, solidified=solidified)
    cleared: list[dict[str, Any]] = []
    clear = preflight(journal, node, book, spec["sender"], settings, clock, solidified,
                      cleared) if spec.get("preflight") else None
    passes: list[dict[str, Any]] = []
    node_errors = 0
    in_flight_waits: list[str] = []
    deadline = time.monotonic() + float(spec.get("timeout", 120))
    _wait_for_go(spec)
    while True:
        started = time.monotonic()
        try:
            done = sender.send(rows, sender=spec["sender"], batch_id=spec["batch_id"],
                               clear=clear)
            status = watch.step()
        except NodeError:  # a node read failed: the next pass reads the journal again
            node_errors += 1
            time.sleep(0.05)
            continue
        except FundsInFlight as exc:  # payable once the transfers in flight settle: retry
            in_flight_waits.append(str(exc)[:400])
            watch.step()
            time.sleep(0.05)
            continue
        passes.append({"signed": done.signed, "broadcast": done.broadcast,
                       "accepted": done.accepted, "answers": len(done.answers),
                       **{s.value: done.count(s) for s in Step if done.count(s)},
                       "seconds": round(time.monotonic() - started, 3),
                       "status": status.to_event()})
        if status.done and status.to_sign == 0 and status.total == len(rows):
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"batch not settled in time: {status}")
        time.sleep(float(spec.get("poll", 0.05)))
    node.close()
    journal.close()
    return {"scope": spec["scope"], "passes": passes, "node_errors": node_errors,
            "in_flight_waits": in_flight_waits, "cleared": cleared,
            "process_s": round(time.process_time(), 3),
            "status": passes[-1]["status"]}


def main(argv: Sequence[str]) -> int:
    """``payout_worker SPEC.json``: the summary as JSON on stdout's last line."""
    if len(argv) != 1:
        print("usage: payout_worker SPEC.json (key in $TRONENERGY_DRILL_KEY)", file=sys.stderr)
        return 2
    key_hex = os.environ.pop(KEY_ENV, "")
    if not key_hex:
        print(f"${KEY_ENV} holds the sender's key", file=sys.stderr)
        return 2
    spec = json.loads(Path(argv[0]).read_text())
    kill = Kill(os.environ.get(KILL_ENV) or None, int(os.environ.get(KILL_AT_ENV) or 1))
    print(json.dumps(run(spec, key_hex, kill)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
