"""Where the receiver's settings come from: flags, environment, or Airflow (when installed).

Webhook secrets come from exactly one source, so it is always clear which one
is in force:

1. explicit values (CLI ``--webhook-secret``) or the environment:
   ``TRONENERGY_WEBHOOK_SECRET`` (several comma-separated while rotating) and
   ``TRONENERGY_ADDRESS_WEBHOOK_SECRETS`` (JSON ``{"T...": "secret" | ["s1", "s2"]}``);
2. otherwise the Airflow connection (id from ``TRONENERGY_CONN_ID``, else
   ``[tronenergy] conn_id``, else ``tronenergy_default``): extra
   ``webhook_secret`` (string, comma-separated string or list) and optional
   ``address_webhook_secrets`` (object as above).

A connection id someone wrote (``--conn-id``, ``TRONENERGY_CONN_ID``, ``[tronenergy]
conn_id``) that names no connection is refused as ``ConnectionMissing`` naming that setting,
by :mod:`~airflow_provider_tronenergy.hooks.lookup`, the one place Airflow's "not found" is
answered; the default nobody wrote may name nothing (no secrets from it).

The store URL is resolved by :func:`.store.store_url` (the one rule of
:mod:`~airflow_provider_tronenergy.sqlstore`). Nothing here logs a secret.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from airflow_provider_tronenergy.callbacks.verify import WebhookSecrets
from airflow_provider_tronenergy.errors import CallbackError
from airflow_provider_tronenergy.hooks.lookup import existing, found
from airflow_provider_tronenergy.sqlstore import airflow_conf

log = logging.getLogger(__name__)

DEFAULT_CONN_ID: Final = "tronenergy_default"
ENV_CONN_ID: Final = "TRONENERGY_CONN_ID"
ENV_WEBHOOK_SECRET: Final = "TRONENERGY_WEBHOOK_SECRET"
ENV_ADDRESS_SECRETS: Final = "TRONENERGY_ADDRESS_WEBHOOK_SECRETS"
EXTRA_WEBHOOK_SECRET: Final = "webhook_secret"
EXTRA_ADDRESS_SECRETS: Final = "address_webhook_secrets"
CONF_CONN_ID: Final = "[tronenergy] conn_id"
NEEDS: Final = ("the callback receiver reads its webhook secrets from its extra "
                f"{EXTRA_WEBHOOK_SECRET!r}")


class ConfigError(CallbackError, ValueError):
    """A setting is present but unusable; the message never contains a secret."""


@dataclass(frozen=True)
class ConnChoice:
    """The receiver's connection id and the setting that named it (None: the default)."""

    conn_id: str
    setting: str | None = None


def chosen(explicit: str | None = None, *, flag: str = "--conn-id") -> ConnChoice:
    """``explicit`` (given as ``flag``), else ``TRONENERGY_CONN_ID``, else ``[tronenergy]
    conn_id``, else the default ``tronenergy_default``, which nobody wrote."""
    if explicit:
        return ConnChoice(explicit, flag)
    if from_env := os.environ.get(ENV_CONN_ID, "").strip():
        return ConnChoice(from_env, ENV_CONN_ID)
    if from_conf := airflow_conf("conn_id"):
        return ConnChoice(from_conf, CONF_CONN_ID)
    return ConnChoice(DEFAULT_CONN_ID)


def conn_id(explicit: str | None = None) -> str:
    return chosen(explicit).conn_id


def _address_secrets(value: Any, where: str) -> Mapping[str, Any]:
    if value in (None, ""):
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ConfigError(f"{where} is not JSON") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be an object mapping addresses to secrets")
    return value


def _build(key_level: Any, by_address: Mapping[str, Any], where: str) -> WebhookSecrets:
    try:
        return WebhookSecrets.build(key_level, by_address)
    except (TypeError, ValueError) as exc:
        # AddressError names the address, never a secret.
        raise ConfigError(f"{where}: {exc}") from None


def secrets_from_env(environ: Mapping[str, str] | None = None) -> WebhookSecrets | None:
    """The environment's secrets, or None when neither variable is set."""
    env = os.environ if environ is None else environ
    key_level = env.get(ENV_WEBHOOK_SECRET, "")
    by_address = env.get(ENV_ADDRESS_SECRETS, "")
    if not key_level.strip() and not by_address.strip():
        return None
    return _build(key_level, _address_secrets(by_address, ENV_ADDRESS_SECRETS),
                  "environment")


def connection_extra(conn_id: str, setting: str | None = None) -> dict[str, Any] | None:
    """The connection's extras, or None without Airflow, or when the default id (``setting``
    None) names no connection; an id a ``setting`` named that names none is a
    ``ConnectionMissing`` naming the setting.

    Uses ``Connection.get_connection_from_secrets``: in the API server (and any
    process with metadata-database access) that walks the configured secrets
    backends, environment variables and the metastore, like every Airflow component.
    """
    try:
        from airflow.models.connection import Connection
    except ImportError:
        return None
    get = Connection.get_connection_from_secrets
    if setting is None:
        connection = found(get, conn_id)
        if connection is None:
            return None
    else:
        connection = existing(get, conn_id, setting=setting, needs=NEEDS,
                              otherwise=f"give the secret in ${ENV_WEBHOOK_SECRET}")
    extra = connection.extra_dejson
    return dict(extra) if isinstance(extra, dict) else {}


def secrets_from_connection(conn_id_: str, setting: str | None = None) -> WebhookSecrets | None:
    extra = connection_extra(conn_id_, setting)
    if extra is None:
        return None
    where = f"connection {conn_id_!r}"
    return _build(extra.get(EXTRA_WEBHOOK_SECRET),
                  _address_secrets(extra.get(EXTRA_ADDRESS_SECRETS), f"{where} extra "
                                   f"{EXTRA_ADDRESS_SECRETS!r}"), where)


def load_secrets(choice: ConnChoice | None = None) -> WebhookSecrets | None:
    """Environment first; else the Airflow connection (``choice``, else :func:`chosen`);
    None when neither has a secret."""
    from_env = secrets_from_env()
    if from_env is not None:
        return from_env or None
    choice = chosen() if choice is None else choice
    return secrets_from_connection(choice.conn_id, choice.setting) or None


def describe(secrets: WebhookSecrets) -> str:
    """How many secrets are in force: fit for a log line or a banner."""
    return (f"{len(secrets.key_level)} key-level secret(s), "
            f"{len(secrets.by_address)} address(es) with their own")
