"""Signed callbacks during a slow-body attack, against the same receiver without one.

Issue 22's attack: ``tronenergy-receiver`` (the real CLI, httptools, a SQLite
store: a 200 means durably stored) with a connection cap of 300, and 400
connections that each send a complete head with ``Content-Length: 60000`` and
then a byte every 0.3 s, coming back ``--reconnect`` seconds after the
receiver closes them (the attacker is its own process). Callbacks come from a
few senders, each on a fresh connection (the hard case: it must get in at the
cap) with a short pause between them, for the same time without and then with
the attack, in one run. The attack runs ``--settle`` seconds before the
callbacks start, so that the cap is full and the receiver is already evicting.

    .venv/bin/python bench/receiver_slow_body.py [--seconds 20] [--cap 300] [--attackers 400]
            [--reconnect 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from callbacks_throughput import cpu_seconds, percentile

from support.callbacks import RawConnection, callback_body, signed_headers
from support.hostile import SECRET, Receiver, start, start_slowloris

AIM = 0.99
"""Share of signed callbacks answered 200 while the attack runs (issue 22)."""
DEADLINE = 5.0
"""The service's callback deadline: a later answer is as good as none."""


@dataclass
class Round:
    statuses: Counter[object] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)  # of the 200s, in seconds
    cpu: float = 0.0  # receiver CPU seconds

    @property
    def total(self) -> int:
        return self.statuses.total()

    @property
    def share(self) -> float:
        return self.statuses[200] / self.total if self.total else 0.0


def send_callbacks(receiver: Receiver, senders: int, seconds: float, pause: float) -> Round:
    """``senders`` loops for ``seconds``: a fresh connection per callback, ``pause`` between."""
    result = Round()

    async def sender(end: float) -> None:
        while time.monotonic() < end:
            body = callback_body()
            connection = RawConnection(receiver.url)
            started = time.perf_counter()
            try:
                status, _ = await connection.post(body, signed_headers(SECRET, body), DEADLINE)
                outcome: object = status
            except ConnectionError as exc:
                outcome = str(exc).split(":", 1)[0]
            finally:
                connection.close()
            elapsed = time.perf_counter() - started
            result.statuses[outcome] += 1
            if outcome == 200:
                result.latencies.append(elapsed)
            await asyncio.sleep(pause)

    async def run() -> None:
        end = time.monotonic() + seconds
        await asyncio.gather(*(sender(end) for _ in range(senders)))

    before = cpu_seconds(receiver.pid)
    asyncio.run(run())
    result.cpu = cpu_seconds(receiver.pid) - before
    result.latencies.sort()
    return result


def describe(name: str, result: Round, seconds: float) -> str:
    others = {k: v for k, v in result.statuses.items() if k != 200}
    lat = result.latencies
    timing = (f"p50 {percentile(lat, 0.5) * 1000:6.1f} ms  p99 {percentile(lat, 0.99) * 1000:6.1f} "
              f"ms  max {lat[-1] * 1000:6.1f} ms" if lat else "no 200 at all")
    return (f"  {name:13s} {result.total:5d} callbacks, {result.share:7.2%} got 200 "
            f"{others or ''}  {timing}  receiver CPU {result.cpu / seconds:4.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="of callbacks, per round")
    parser.add_argument("--cap", type=int, default=300, help="--max-connections")
    parser.add_argument("--attackers", type=int, default=400)
    parser.add_argument("--length", type=int, default=60000, help="declared Content-Length")
    parser.add_argument("--interval", type=float, default=0.3, help="seconds between bytes")
    parser.add_argument("--reconnect", type=float, default=0.05,
                        help="seconds before a closed attacker comes back")
    parser.add_argument("--senders", type=int, default=4)
    parser.add_argument("--pause", type=float, default=0.02,
                        help="seconds between a sender's callbacks")
    parser.add_argument("--settle", type=float, default=5.0,
                        help="seconds of attack before the callbacks start")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        receiver = start(Path(tmp), "--max-connections", str(args.cap))
        try:
            quiet = send_callbacks(receiver, args.senders, args.seconds, args.pause)
            attack_seconds = args.settle + args.seconds + 2
            attack = start_slowloris(receiver.port, args.attackers, attack_seconds,
                                     body_length=args.length, interval=args.interval,
                                     reconnect=args.reconnect)
            try:
                assert attack.stdout is not None
                opened = attack.stdout.readline().strip()
                time.sleep(args.settle)
                attacked = send_callbacks(receiver, args.senders, args.seconds, args.pause)
                attack.wait(attack_seconds + 30)
                made = int(attack.stdout.readline().split()[-1])
            finally:
                if attack.poll() is None:
                    attack.kill()
                    attack.wait(10)
            alive = receiver.process.poll() is None
        finally:
            receiver.stop()

    print(f"slow-body attack on tronenergy-receiver (httptools, SQLite): cap {args.cap}, "
          f"{args.attackers} attackers (Content-Length {args.length}, a byte every "
          f"{args.interval:g} s, back {args.reconnect:g} s after a close), {args.senders} "
          f"senders on fresh connections, {args.seconds:g} s per round")
    print(f"  the attack: {opened} at first, {made} connections in {attack_seconds:g} s "
          f"({made / attack_seconds:.0f}/s: each one the receiver closed came back)")
    print(describe("no attack", quiet, args.seconds))
    print(describe("under attack", attacked, args.seconds))
    ratio = attacked.share / quiet.share if quiet.share else 0.0
    print(f"  share of 200s under attack / without: {ratio:.3f}")
    if quiet.latencies and attacked.latencies:
        print(f"  latency under attack / without: p50 "
              f"{percentile(attacked.latencies, 0.5) / percentile(quiet.latencies, 0.5):.2f}, "
              f"p99 {percentile(attacked.latencies, 0.99) / percentile(quiet.latencies, 0.99):.2f}")
    met = attacked.share >= AIM and alive
    print(f"  {attacked.share:.2%} of signed callbacks got 200 under attack: "
          f"{'meets' if met else 'BELOW'} the {AIM:.0%} aim"
          + ("" if alive else " (the receiver died)"))


if __name__ == "__main__":
    main()
