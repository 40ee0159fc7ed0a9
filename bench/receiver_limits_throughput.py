"""What the receiver's connection limits cost: uvicorn's httptools protocol vs the guarded one.

The same receiver app is served twice, as separate processes (uvloop), once
with uvicorn's own ``HttpToolsProtocol`` and once with the protocol class
``tronenergy-receiver`` uses (``callbacks.limits``: head size and deadline,
body deadline, keep-alive cap, connection cap, the transport wrapper). The load
is callbacks_throughput.py's: 32 senders on persistent connections, each
callback unique and freshly signed, in short alternating rounds so both see
the same machine. Storage is off by default: the protocol's share of the work
is then as large as it gets; ``--stored`` gives each its own SQLite file.

    .venv/bin/python bench/receiver_limits_throughput.py [--seconds 2] [--rounds 4] [--stored]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import callbacks_throughput as base  # the load generator and its helpers

AIM = 0.9
"""guarded / plain: the connection limits may cost at most a tenth of the throughput."""


def serve(guarded: bool, store_url: str | None) -> None:
    import uvicorn

    from airflow_provider_tronenergy.callbacks import CallbackStore, create_app
    from airflow_provider_tronenergy.callbacks.limits import (
        ConnectionLimits,
        fit_to_descriptors,
        protocol_class,
    )
    from tronenergy_protocol.serving import bind_socket, run_event_loop

    store = CallbackStore(store_url) if store_url else None
    if store is not None:
        store.ensure_schema()
    app = create_app(store, base.SECRET, storage=store is not None)
    limits, _ = fit_to_descriptors(ConnectionLimits())
    http = protocol_class(limits, "httptools") if guarded else "httptools"
    sock = bind_socket("127.0.0.1", 0)
    print(f"listening on {sock.getsockname()[1]}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", access_log=False,
                                           http=http, lifespan="off", proxy_headers=False))
    run_event_loop(server.serve(sockets=[sock]))


class Receiver:
    def __init__(self, guarded: bool, store_url: str | None) -> None:
        args = [sys.executable, __file__, "--serve", "guarded" if guarded else "plain"]
        if store_url:
            args += ["--store", store_url]
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        match = re.search(r"listening on (\d+)", self.process.stdout.readline())
        if match is None:
            raise SystemExit("receiver did not start")
        self.url = f"http://127.0.0.1:{match.group(1)}/callbacks"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per protocol and round")
    parser.add_argument("--senders", type=int, default=32)
    parser.add_argument("--processes", type=int, default=2, help="client processes")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--stored", action="store_true",
                        help="store durably, each receiver in its own SQLite file")
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--serve", choices=("plain", "guarded"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve == "guarded", args.store)
        return

    with tempfile.TemporaryDirectory() as tmp:
        stores = {mode: f"sqlite:///{tmp}/{mode}.db" if args.stored else None
                  for mode in ("plain", "guarded")}
        receivers = {mode: Receiver(mode == "guarded", stores[mode]) for mode in stores}
        results: dict[str, list[tuple[float, list[float]]]] = {m: [] for m in receivers}
        cpu = dict.fromkeys(receivers, 0.0)
        try:
            for receiver in receivers.values():  # warm-up
                base.measure(receiver.url, args.senders, 0.5, args.processes)
            for _ in range(args.rounds):
                for mode, receiver in receivers.items():
                    before = base.cpu_seconds(receiver.process.pid)
                    results[mode].append(base.measure(receiver.url, args.senders,
                                                      args.seconds, args.processes))
                    cpu[mode] += base.cpu_seconds(receiver.process.pid) - before
        finally:
            for receiver in receivers.values():
                receiver.stop()

    where = "stored (SQLite, WAL, FULL)" if args.stored else "storage off"
    print(f"receiver protocols, {args.senders} concurrent senders, {args.rounds} x "
          f"{args.seconds:g} s each, {where}")
    rates = {}
    for mode, rounds in results.items():
        rate = sum(r for r, _ in rounds) / len(rounds)
        latencies = sorted(x for _, lat in rounds for x in lat)
        rates[mode] = rate
        print(f"  {mode:8s}: {rate:8.0f} callbacks/s   p50 "
              f"{base.percentile(latencies, 0.5) * 1000:5.1f} ms   p99 "
              f"{base.percentile(latencies, 0.99) * 1000:5.1f} ms   receiver CPU "
              f"{cpu[mode] / len(latencies) * 1e6:4.0f} us/callback")
    per_round = [g[0] / p[0] for g, p in zip(results["guarded"], results["plain"], strict=True)]
    print(f"  per-round ratios guarded/plain: {' '.join(f'{r:.2f}' for r in per_round)}")
    ratio = rates["guarded"] / rates["plain"]
    print(f"  guarded / plain: {ratio:.2f} "
          f"({'meets' if ratio >= AIM else 'BELOW'} the {AIM} aim: limits cost at most 10%)")


if __name__ == "__main__":
    main()
