"""The receiver inside the Airflow 3 API server: ``POST /tronenergy/callbacks``.

Registered through the ``airflow.plugins`` entry point. Every Airflow component
imports plugins, so importing this module must stay cheap and never fail: the
receiver app is built on its first request, not here. Airflow does not
authenticate plugin apps; the callback signature is the only gate.

Secrets: ``TRONENERGY_WEBHOOK_SECRET`` in the API server's environment, else the
``tronenergy`` connection (``[tronenergy] conn_id`` / ``TRONENERGY_CONN_ID``,
default ``tronenergy_default``), extra ``webhook_secret``; an id set there that names no
connection serves no secret and logs the ``ConnectionMissing`` naming it. The connection is
re-read every minute, so a rotation (``"new,old"``, later ``"new"``) needs no
restart. With no secret configured ``/tronenergy/callbacks`` answers 503 with
the reason, and the rest of the API server is unaffected.

The HTTP server here is Airflow's: the receiver bounds what it can from inside
the app (a body must arrive within ``[tronenergy] callback_body_timeout``
seconds, default 10, else 408; a 413 or 408 closes the connection). Head size,
head deadline, connection caps and proxy headers belong to the server and to
the proxy in front of it: docs/callbacks.md lists the settings to use.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from airflow.plugins_manager import AirflowPlugin

from tronenergy_protocol.serving import ASGIApp, LazyApp

log = logging.getLogger(__name__)


URL_PREFIX = "/tronenergy"


def build_receiver_app() -> ASGIApp:
    """The receiver as Airflow configures it (imports deferred to the first request)."""
    from airflow_provider_tronenergy import sqlstore
    from airflow_provider_tronenergy.callbacks import config
    from airflow_provider_tronenergy.callbacks.app import DEFAULT_BODY_TIMEOUT, create_app
    from airflow_provider_tronenergy.callbacks.store import CallbackStore, store_url
    from airflow_provider_tronenergy.callbacks.verify import DEFAULT_TOLERANCE, RefreshingSecrets
    from tronenergy_protocol.numbers import parse_decimal, parse_int

    choice = config.chosen()
    store = CallbackStore(store_url())
    tolerance = parse_int(sqlstore.airflow_conf("callback_timestamp_tolerance")
                          or DEFAULT_TOLERANCE, "[tronenergy] callback_timestamp_tolerance")
    body_timeout = float(parse_decimal(sqlstore.airflow_conf("callback_body_timeout")
                                       or str(DEFAULT_BODY_TIMEOUT),
                                       "[tronenergy] callback_body_timeout"))
    secrets = RefreshingSecrets(lambda: config.load_secrets(choice))
    log.info("tronenergy callback receiver: store %s, secrets from the environment or "
             "connection %r", store.safe_url, choice.conn_id)
    return create_app(store, secrets, tolerance=tolerance, body_timeout=body_timeout)


class LazyReceiverApp(LazyApp):
    """The receiver, built on its first request; 503 ``receiver_unavailable`` until it can."""

    def __init__(self, build: Callable[[], ASGIApp] = build_receiver_app,
                 *, retry: float = 5.0) -> None:
        super().__init__(build, what="the tronenergy callback receiver", retry=retry,
                         unavailable={"success": False, "error": "receiver_unavailable",
                                      "message": "the callback receiver failed to start; "
                                                 "see the API server log"})


receiver_app = LazyReceiverApp()


class TronEnergyCallbacksPlugin(AirflowPlugin):
    """Mounts the callback receiver at ``/tronenergy`` in the Airflow API server."""

    name = "tronenergy_callbacks"
    fastapi_apps = [
        {"app": receiver_app, "url_prefix": URL_PREFIX, "name": "TRON energy callback receiver"},
    ]
