"""``tronenergy-sandbox``: run the emulated service in the foreground."""

from __future__ import annotations

import argparse
import logging
import sys
from decimal import Decimal

import uvicorn

from tronenergy_protocol.numbers import parse_decimal
from tronenergy_protocol.serving import bind_socket, proxy_settings, run_event_loop
from tronenergy_protocol.signing import SCHEMES
from tronenergy_sandbox.app import create_app
from tronenergy_sandbox.server import base_url
from tronenergy_sandbox.state import SandboxConfig, SandboxState


def _decimal(text: str) -> Decimal:
    try:
        value = parse_decimal(text, "balance")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if not value.is_finite() or value < 0 or value != round(value, 6):
        raise argparse.ArgumentTypeError("balance must be >= 0 with at most 6 decimals")
    return value


def _positive_float(text: str) -> float:
    value = float(text)  # a time factor, not money
    if not value > 0:
        raise argparse.ArgumentTypeError("must be > 0")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tronenergy-sandbox",
        description="Local emulator of the TRON energy-rental and monitoring service.",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8900, help="0 picks a free port")
    p.add_argument("--api-key", help="random when absent (or taken from --state)")
    p.add_argument("--api-secret", help="random when absent (or taken from --state)")
    p.add_argument("--webhook-secret", help="key-level callback secret; random when absent")
    p.add_argument("--balance", type=_decimal, default=Decimal("1000"),
                   help="initial balance in TRX for a new state (default 1000)")
    p.add_argument("--time-scale", type=_positive_float, default=1.0,
                   help="multiplies every delay: order progression, callback retries")
    p.add_argument("--state", help="SQLite file that keeps the world across restarts")
    p.add_argument("--signature-scheme", choices=SCHEMES, help="how requests are signed (v1)")
    p.add_argument("--webhook-url", help="key-level callback URL used when an add omits one")
    p.add_argument("--callback-timeout", type=_positive_float, default=5.0)
    p.add_argument("--allow-remote-control", action="store_true",
                   help="let non-loopback clients use the /sandbox control API")
    p.add_argument("--forwarded-allow-ips",
                   help="trust X-Forwarded-For/-Proto only from these proxy addresses "
                   "(comma-separated; default: trust nobody, whatever FORWARDED_ALLOW_IPS says)")
    p.add_argument("--seed", type=int, help="seed for probabilistic faults")
    p.add_argument("--no-resource-recovery", dest="resource_recovery", action="store_false",
                   help="usage never recovers (only grows): to compare a bench with and without")
    p.add_argument("--log-level", default="info")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = SandboxConfig(
        host=args.host, port=args.port, api_key=args.api_key, api_secret=args.api_secret,
        webhook_secret=args.webhook_secret, balance=args.balance, time_scale=args.time_scale,
        state=args.state, signature_scheme=args.signature_scheme, webhook_url=args.webhook_url,
        allow_remote_control=args.allow_remote_control, callback_timeout=args.callback_timeout,
        seed=args.seed, forwarded_allow_ips=args.forwarded_allow_ips,
        resource_recovery=args.resource_recovery,
    )
    state = SandboxState.build(config)
    sock = bind_socket(config.host, config.port)
    port = sock.getsockname()[1]
    creds = state.credentials
    # The operator of a local sandbox needs its credentials once; they go to stdout only.
    print(f"tronenergy sandbox listening on {base_url(config.host, port)}", flush=True)
    print(f"  api key:        {creds.api_key}", flush=True)
    print(f"  api secret:     {creds.api_secret}", flush=True)
    print(f"  webhook secret: {creds.webhook_secret}", flush=True)
    print(f"  state:          {config.state or '(memory)'}; time scale {config.time_scale:g}",
          flush=True)
    server = uvicorn.Server(uvicorn.Config(
        create_app(state), log_level=args.log_level, access_log=False, lifespan="on",
        timeout_graceful_shutdown=2, **proxy_settings(config.forwarded_allow_ips),
    ))
    try:
        run_event_loop(server.serve(sockets=[sock]))
    except KeyboardInterrupt:
        pass
    finally:
        state.world.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
