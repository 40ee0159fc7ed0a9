"""``tronenergy-receiver``: the callback receiver as its own process.

    tronenergy-receiver --port 8901 --store sqlite:////var/lib/tronenergy/callbacks.db

The webhook secret comes from ``--webhook-secret`` / ``--webhook-secret-file``,
else ``TRONENERGY_WEBHOOK_SECRET``, else the Airflow connection's extra
``webhook_secret`` (``--conn-id``, default ``tronenergy_default``; an id given that names
no connection stops it, naming the id). Prefer the
environment or the file: a command-line argument is visible to other local
users in the process list. No secret is ever printed.

It faces the internet, so it serves with the connection limits of
:mod:`.limits` (head size, field count and deadline, body deadline, keep-alive,
a connection cap that fits the descriptor limit, which it raises to the hard
limit), and trusts ``X-Forwarded-*`` headers only from ``--forwarded-allow-ips``.
``--list-conflicts`` prints the kept callbacks that contradicted a stored
transfer (:mod:`.conflicts`) as JSON lines, and exits.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

import uvicorn
from sqlalchemy import exc as sa_exc

from airflow_provider_tronenergy.callbacks import config
from airflow_provider_tronenergy.callbacks.app import create_app
from airflow_provider_tronenergy.callbacks.limits import (
    ConnectionLimits,
    default_http,
    fit_to_descriptors,
    protocol_class,
)
from airflow_provider_tronenergy.callbacks.store import CallbackStore, store_url
from airflow_provider_tronenergy.callbacks.verify import (
    DEFAULT_MAX_BODY,
    DEFAULT_TOLERANCE,
    WebhookSecrets,
)
from airflow_provider_tronenergy.errors import ConnectionMissing
from airflow_provider_tronenergy.sqlstore import StoreError
from tronenergy_protocol.serving import bind_socket, proxy_settings, run_event_loop


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tronenergy-receiver",
        description="Receive signed tron.transfer callbacks and store them durably.",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8901, help="0 picks a free port")
    p.add_argument("--store", help="SQLAlchemy URL (default: $TRONENERGY_CALLBACK_STORE, "
                   "[tronenergy] callback_store, or a SQLite file in $AIRFLOW_HOME)")
    p.add_argument("--webhook-secret", help="key-level secret(s), comma-separated while "
                   "rotating (default: $TRONENERGY_WEBHOOK_SECRET or the Airflow connection)")
    p.add_argument("--webhook-secret-file", type=Path,
                   help="read the secret(s) from this file instead")
    p.add_argument("--conn-id", help="Airflow connection with extra webhook_secret "
                   f"(default: ${config.ENV_CONN_ID} or {config.DEFAULT_CONN_ID})")
    p.add_argument("--tolerance", type=int, default=DEFAULT_TOLERANCE,
                   help="seconds the body timestamp may be off; 0 disables (default 900)")
    p.add_argument("--max-body", type=int, default=DEFAULT_MAX_BODY)
    defaults = ConnectionLimits()
    limits = p.add_argument_group("connection limits (docs/callbacks.md)")
    limits.add_argument("--max-header-bytes", type=int, default=defaults.max_header_bytes,
                        help="request line and headers, else 431 (default %(default)s)")
    limits.add_argument("--max-headers", type=int, default=defaults.max_headers,
                        help="header fields, else 431 (default %(default)s)")
    limits.add_argument("--header-timeout", type=float, default=defaults.header_timeout,
                        help="seconds to send the whole head, else 408 (default %(default)s)")
    limits.add_argument("--body-timeout", type=float, default=defaults.body_timeout,
                        help="seconds to send the body after the head, else 408 "
                        "(default %(default)s)")
    limits.add_argument("--keep-alive-timeout", type=int, default=defaults.keep_alive_timeout,
                        help="seconds an idle kept-alive connection stays (default %(default)s)")
    limits.add_argument("--keep-alive-requests", type=int,
                        default=defaults.keep_alive_requests,
                        help="requests per connection (default %(default)s)")
    limits.add_argument("--max-connections", type=int, default=defaults.max_connections,
                        help="open connections; lowered to fit the descriptor limit "
                        "(default %(default)s)")
    limits.add_argument("--forwarded-allow-ips",
                        help="trust X-Forwarded-For/-Proto only from these proxy addresses "
                        "(comma-separated; default: trust nobody)")
    p.add_argument("--http", choices=("auto", "httptools", "h11"), default="auto",
                   help=argparse.SUPPRESS)
    p.add_argument("--list-conflicts", action="store_true",
                   help="print the kept conflicting callbacks as JSON lines and exit")
    p.add_argument("--log-level", default="info")
    return p


def connection_limits(args: argparse.Namespace) -> ConnectionLimits:
    return ConnectionLimits(
        max_header_bytes=args.max_header_bytes, max_headers=args.max_headers,
        header_timeout=args.header_timeout, body_timeout=args.body_timeout,
        keep_alive_timeout=args.keep_alive_timeout,
        keep_alive_requests=args.keep_alive_requests, max_connections=args.max_connections,
    )


def list_conflicts(store: CallbackStore) -> int:
    """Every kept conflicting callback, oldest first, one JSON object a line."""
    after = 0
    while batch := store.list_conflicts(after_id=after, limit=1000):
        for conflict in batch:
            print(json.dumps(conflict.to_payload()), flush=True)
        after = batch[-1].id
    return 0


def resolve_secrets(args: argparse.Namespace) -> tuple[WebhookSecrets | None, str]:
    """The secrets and a description of where they came from (never the values)."""
    explicit = args.webhook_secret
    if args.webhook_secret_file is not None:
        explicit = args.webhook_secret_file.read_text().strip()
    if explicit:
        from_env = config.secrets_from_env()
        by_address = from_env.by_address if from_env else None
        return WebhookSecrets.build(explicit, by_address), "the command line"
    from_env = config.secrets_from_env()
    if from_env:
        return from_env, "the environment"
    choice = config.chosen(args.conn_id)
    where = f"Airflow connection {choice.conn_id!r}"
    try:
        return config.secrets_from_connection(choice.conn_id, choice.setting), where
    except (config.ConfigError, ConnectionMissing):
        raise
    except Exception as exc:  # a secrets backend or the metadata database is down
        raise config.ConfigError(f"could not read {where}: {type(exc).__name__}") from None


def open_store(args: argparse.Namespace) -> CallbackStore | None:
    """The store with its schema ready, or None once the reason is printed (no password)."""
    try:
        store = CallbackStore(store_url(args.store))
    except sa_exc.ArgumentError:  # its message repeats the URL, password included
        print("tronenergy-receiver: the store is not a valid SQLAlchemy URL", file=sys.stderr)
        return None
    except (StoreError, ValueError, OSError) as exc:
        print(f"tronenergy-receiver: {exc}", file=sys.stderr)
        return None
    try:
        store.ensure_schema()
    except (StoreError, sa_exc.SQLAlchemyError) as exc:
        reason = getattr(exc, "orig", None) or exc
        print(f"tronenergy-receiver: cannot open the store {store.safe_url}: "
              f"{type(reason).__name__}: {str(reason).strip()[:300]}", file=sys.stderr)
        store.close()
        return None
    return store


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.list_conflicts:
        store = open_store(args)
        if store is None:
            return 2
        try:
            return list_conflicts(store)
        finally:
            store.close()
    try:
        limits = connection_limits(args)
    except ValueError as exc:
        print(f"tronenergy-receiver: {exc}", file=sys.stderr)
        return 2
    try:
        secrets, source = resolve_secrets(args)
    except (OSError, config.ConfigError, ConnectionMissing) as exc:
        print(f"tronenergy-receiver: {exc}", file=sys.stderr)
        return 2
    if not secrets:
        print("tronenergy-receiver: no webhook secret (use --webhook-secret-file, "
              f"${config.ENV_WEBHOOK_SECRET} or the extra '{config.EXTRA_WEBHOOK_SECRET}' "
              "of the Airflow connection)", file=sys.stderr)
        return 2
    store = open_store(args)
    if store is None:
        return 2
    app = create_app(store, secrets, tolerance=args.tolerance, max_body=args.max_body)
    limits, descriptors = fit_to_descriptors(limits)
    sock = bind_socket(args.host, args.port)
    port = sock.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    http = default_http() if args.http == "auto" else args.http
    print(f"tronenergy receiver listening on http://{shown}:{port}/callbacks", flush=True)
    print(f"  store:   {store.safe_url}", flush=True)
    print(f"  limits:  {limits.describe(descriptors)}; {http}", flush=True)
    print(f"  secrets: {config.describe(secrets)} from {source}", flush=True)
    server = uvicorn.Server(uvicorn.Config(
        app, log_level=args.log_level.lower(), access_log=False, lifespan="on",
        http=protocol_class(limits, http), ws="none",
        timeout_keep_alive=limits.keep_alive_timeout,
        # h11 bounds the head itself too; ours (the same size) refuses first, with 431.
        h11_max_incomplete_event_size=limits.max_header_bytes + 1,
        **proxy_settings(args.forwarded_allow_ips),
        timeout_graceful_shutdown=5,
    ))
    try:
        run_event_loop(server.serve(sockets=[sock]))
    finally:
        sock.close()
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
