"""One run of the doctor: the settings it is given, every check in order, the secrets to
keep out of its report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from airflow_provider_tronenergy.doctor import connections, stores
from airflow_provider_tronenergy.doctor.callback import probe
from airflow_provider_tronenergy.doctor.flags import (
    TRON_NODE_CONN_ID,
    TRON_SIGNER_CONN_ID,
    TRONENERGY_CONN_ID,
)
from airflow_provider_tronenergy.doctor.report import Check
from airflow_provider_tronenergy.errors import ConnectionMissing
from airflow_provider_tronenergy.hooks.lookup import existing
from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.hooks.tron_signer import TronSignerHook
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook


@dataclass(frozen=True)
class Settings:
    """What to check. An empty connection id is the person's "none here" (its lines are
    skipped, and say so); ``callback_url`` None is a failure, "" a skip."""

    tronenergy_conn_id: str = TRONENERGY_CONN_ID
    tron_node_conn_id: str = TRON_NODE_CONN_ID
    confirm_node_conn_id: str = ""
    tron_signer_conn_id: str = TRON_SIGNER_CONN_ID
    sender: str = ""
    permission_id: int = 0
    callback_url: str | None = None
    migrate: bool = False


def executor() -> str:
    """Airflow's ``[core] executor`` as configured here."""
    from airflow.configuration import conf

    return str(conf.get("core", "executor", fallback="") or "(not set)")


def run(settings: Settings) -> list[Check]:
    """Every check, in the order a person fixes them."""
    checks: list[Check] = []
    service = TronEnergyHook(settings.tronenergy_conn_id)
    account, line = connections.service(service)
    checks += [line, connections.balance_and_prices(service, account)]

    node_hook = TronNodeHook(settings.tron_node_conn_id) if settings.tron_node_conn_id else None
    node_ok = False
    if node_hook is None:
        checks.append(Check.skipped("node", "--tron-node-conn-id is empty: no node checked"))
    else:
        line = connections.node("node", node_hook, "--tron-node-conn-id")
        node_ok = not line.failing
        checks += [line, connections.chain("node chain", node_hook, "--tron-node-conn-id")]
    if settings.confirm_node_conn_id:
        confirm = TronNodeHook(settings.confirm_node_conn_id)
        checks += [connections.node("confirming node", confirm, "--confirm-node-conn-id"),
                   connections.chain("confirming node chain", confirm,
                                     "--confirm-node-conn-id")]
        if node_hook is not None:
            checks.append(connections.same_chain(node_hook, confirm))
    else:
        checks.append(Check.skipped("confirming node", "--confirm-node-conn-id not given: "
                                    "payouts confirm on the node alone"))

    if settings.tron_signer_conn_id:
        address, line = connections.signer(TronSignerHook(settings.tron_signer_conn_id))
        checks += [line, connections.permission(address, settings.sender,
                                                settings.permission_id, node_hook,
                                                node_answers=node_ok)]
    else:
        checks.append(Check.skipped("signer", "--tron-signer-conn-id is empty: no signer "
                                    "checked"))

    if settings.migrate:
        checks += stores.migrate()
    checks += [stores.schema_check(store) for store in stores.STORES]
    checks.append(stores.executor_check(executor()))

    if settings.callback_url is None:
        checks.append(Check.failed("callback route", "no URL given",
                                   "pass --callback-url, the URL the service posts callbacks "
                                   "to (or --callback-url '' where no callbacks are received)"))
    elif not settings.callback_url:
        checks.append(Check.skipped("callback route", "--callback-url is empty: not checked"))
    else:
        secret, failure = connections.attempt(
            "callback route", settings.tronenergy_conn_id, "--tronenergy-conn-id", "",
            service.get_webhook_secret)
        checks.append(failure or probe(settings.callback_url, secret,
                                       settings.tronenergy_conn_id))
    return checks


def secrets(settings: Settings) -> set[str]:
    """Every secret the named connections and stores hold: the report never shows one."""
    found = stores.secrets_of()
    for conn_id in (settings.tronenergy_conn_id, settings.tron_node_conn_id,
                    settings.confirm_node_conn_id, settings.tron_signer_conn_id):
        if not conn_id:
            continue
        try:
            conn: Any = existing(TronEnergyHook.get_connection, conn_id,
                                 setting="a connection id", needs="the report hides its secrets")
        except ConnectionMissing:  # its own check's line says so
            continue
        extras: dict[str, Any] = conn.extra_dejson if conn.extra else {}
        found |= {str(v) for v in (conn.login, conn.password) if v}
        # "new,old" while a rotation lists two: each blanked on its own
        found |= {part.strip() for part in str(extras.get("webhook_secret") or "").split(",")}
        kwargs = extras.get("signer_kwargs")
        if isinstance(kwargs, dict):
            found |= {v for v in kwargs.values() if isinstance(v, str)}
    return found - {""}
