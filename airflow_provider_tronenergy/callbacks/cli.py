"""``tronenergy-receiver``: the callback receiver as its own process.

    tronenergy-receiver --port 8901 --store sqlite:////var/lib/tronenergy/callbacks.db

The webhook secret comes from ``--webhook-secret`` / ``--webhook-secret-file``,
else ``TRONENERGY_WEBHOOK_SECRET``, else the Airflow connection's extra
``webhook_secret`` (``--conn-id``, default ``tronenergy_default``). Prefer the
environment or the file: a command-line argument is visible to other local
users in the process list. No secret is ever printed.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import uvicorn
from sqlalchemy import exc as sa_exc

from airflow_provider_tronenergy.callbacks import config
from airflow_provider_tronenergy.callbacks.app import create_app
from airflow_provider_tronenergy.callbacks.store import CallbackStore, StoreError
from airflow_provider_tronenergy.callbacks.verify import (
    DEFAULT_MAX_BODY,
    DEFAULT_TOLERANCE,
    WebhookSecrets,
)
from airflow_provider_tronenergy.serving import bind_socket, run_event_loop


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
    p.add_argument("--log-level", default="info")
    return p


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
    conn_id = config.conn_id(args.conn_id)
    where = f"Airflow connection {conn_id!r}"
    try:
        return config.secrets_from_connection(conn_id), where
    except config.ConfigError:
        raise
    except Exception as exc:  # a secrets backend or the metadata database is down
        raise config.ConfigError(f"could not read {where}: {type(exc).__name__}") from None


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        secrets, source = resolve_secrets(args)
    except (OSError, config.ConfigError) as exc:
        print(f"tronenergy-receiver: {exc}", file=sys.stderr)
        return 2
    if not secrets:
        print("tronenergy-receiver: no webhook secret (use --webhook-secret-file, "
              f"${config.ENV_WEBHOOK_SECRET} or the extra '{config.EXTRA_WEBHOOK_SECRET}' "
              "of the Airflow connection)", file=sys.stderr)
        return 2
    try:
        store = CallbackStore(config.store_url(args.store))
    except sa_exc.ArgumentError:  # its message repeats the URL, password included
        print("tronenergy-receiver: the store is not a valid SQLAlchemy URL", file=sys.stderr)
        return 2
    except (StoreError, ValueError, OSError) as exc:
        print(f"tronenergy-receiver: {exc}", file=sys.stderr)
        return 2
    try:
        store.ensure_schema()
    except (StoreError, sa_exc.SQLAlchemyError) as exc:
        reason = getattr(exc, "orig", None) or exc
        print(f"tronenergy-receiver: cannot open the store {store.safe_url}: "
              f"{type(reason).__name__}: {str(reason).strip()[:300]}", file=sys.stderr)
        return 2
    app = create_app(store, secrets, tolerance=args.tolerance, max_body=args.max_body)
    sock = bind_socket(args.host, args.port)
    port = sock.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"tronenergy receiver listening on http://{shown}:{port}/callbacks", flush=True)
    print(f"  store:   {store.safe_url}", flush=True)
    print(f"  secrets: {config.describe(secrets)} from {source}", flush=True)
    try:
        import httptools  # noqa: F401

        http = "httptools"
    except ImportError:
        http = "h11"
    server = uvicorn.Server(uvicorn.Config(
        app, log_level=args.log_level.lower(), access_log=False, lifespan="on", http=http,
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
