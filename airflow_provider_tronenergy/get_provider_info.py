"""What Airflow's ProvidersManager learns about this package (``apache_airflow_provider``)."""

from __future__ import annotations

from typing import Any

from airflow_provider_tronenergy import __version__
from airflow_provider_tronenergy.hooks import forms

REPOSITORY_URL = "https://github.com/airflow-provider-tronenergy/airflow-provider-tronenergy"
"""The project's home, defined here only: hatch_build.py derives the package's Project-URLs
and the absolute links of its long description from it."""
INTEGRATION = "TRON Energy"
PACKAGE = "airflow_provider_tronenergy"

_CONFIG: dict[str, Any] = {
    "tronenergy": {
        "description": "Where the provider keeps its own state. Every Airflow component "
        "of a deployment must see the same values.",
        "options": {
            "purchase_journal": {
                "description": "SQLAlchemy URL of the purchase journal (every purchase, "
                "before it is sent). Empty: a SQLite file in AIRFLOW_HOME, right for one host; "
                "several hosts need one shared PostgreSQL. TRONENERGY_PURCHASE_JOURNAL wins.",
                "version_added": "0.1.0", "type": "string", "sensitive": True,
                "example": "postgresql://airflow@db.internal/airflow", "default": None,
            },
            "callback_store": {
                "description": "SQLAlchemy URL of the callback store (received transfers). "
                "Empty: a SQLite file in AIRFLOW_HOME. TRONENERGY_CALLBACK_STORE wins.",
                "version_added": "0.1.0", "type": "string", "sensitive": True,
                "example": "postgresql://airflow@db.internal/airflow", "default": None,
            },
            "deposits_ledger": {
                "description": "SQLAlchemy URL of the deposit ledger (deposits credited once, "
                "keyed by tx_hash; airflow_provider_tronenergy.deposits). Empty: a SQLite file "
                "in AIRFLOW_HOME. TRONENERGY_DEPOSITS_DB wins.",
                "version_added": "0.1.0", "type": "string", "sensitive": True,
                "example": "postgresql://airflow@db.internal/airflow", "default": None,
            },
            "conn_id": {
                "description": "Connection whose webhook_secret the callback receiver uses.",
                "version_added": "0.1.0", "type": "string",
                "example": "tronenergy_default", "default": None,
            },
            "callback_timestamp_tolerance": {
                "description": "Seconds a callback's timestamp may differ from the receiver's "
                "clock (replay window) when the receiver runs inside the API server.",
                "version_added": "0.1.0", "type": "integer", "example": "900", "default": "900",
            },
            "callback_body_timeout": {
                "description": "Seconds the receiver inside the API server waits for a "
                "callback's whole body before answering 408 (slow clients).",
                "version_added": "0.1.0", "type": "float", "example": "10", "default": "10",
            },
            "batch_ready_asset": {
                "description": "URI of the asset whose events are the payout batches the "
                "Energy page lists (the example DAGs' by default).",
                "version_added": "0.1.0", "type": "string",
                "example": "tronenergy://payout-batch-ready",
                "default": "tronenergy://payout-batch-ready",
            },
            "payouts_sent_asset": {
                "description": "URI of the asset whose payouts sent events tell the Energy "
                "page each token's decimals and symbol (the example DAGs' by default).",
                "version_added": "0.1.0", "type": "string",
                "example": "tronenergy://payouts-sent", "default": "tronenergy://payouts-sent",
            },
            "explorer_url": {
                "description": "Root of the block explorer the Energy page links each token to "
                "(<root>/#/token20/<contract>); the rules of a connection's explorer_url. "
                "Empty: mainnet's TronScan.",
                "version_added": "0.1.0", "type": "string",
                "example": "https://nile.tronscan.org", "default": None,
            },
        },
    },
}


def get_provider_info() -> dict[str, Any]:
    return {
        "package-name": "airflow-provider-tronenergy",
        "name": INTEGRATION,
        "description": "TRON energy rental and payouts as Airflow tasks: rent energy "
        "and activate addresses through the energy service, its spend capped and each purchase "
        "journaled so none is bought twice; send payouts of USDT, TRX or any TRC-20 token "
        "exactly once, confirmed on chain; "
        "keep a wallet's energy topped up with the keeper; credit deposits once each, from "
        "signed callbacks and scans of the chain; sign with a local key, AWS KMS or an "
        "external signer.",
        "versions": [__version__],
        # ``airflow tronenergy-doctor``, where Airflow's CLI reads providers' commands.
        "cli": ["airflow_provider_tronenergy.doctor.airflow_cli.get_cli_commands"],
        "integrations": [{
            "integration-name": INTEGRATION,
            "external-doc-url": f"{REPOSITORY_URL}/tree/main/docs",
            "tags": ["service"],
        }],
        "operators": [
            {
                "integration-name": INTEGRATION,
                "python-modules": [
                    f"{PACKAGE}.operators.{name}"
                    for name in ("purchase", "energy", "batch_buy", "address", "batch",
                                 "monitor", "reconcile", "approval", "payout", "keeper",
                                 "deposit_scan", "payout_prep", "payout_pipeline")
                ],
            }
        ],
        "hooks": [
            {"integration-name": INTEGRATION,
             "python-modules": [f"{PACKAGE}.hooks.tronenergy", f"{PACKAGE}.hooks.tron_node",
                                f"{PACKAGE}.hooks.tron_signer"]}
        ],
        "sensors": [
            {"integration-name": INTEGRATION,
             "python-modules": [f"{PACKAGE}.sensors.order", f"{PACKAGE}.sensors.orders",
                                f"{PACKAGE}.sensors.transfer"]}
        ],
        "triggers": [
            {"integration-name": INTEGRATION,
             "python-modules": [f"{PACKAGE}.triggers.order", f"{PACKAGE}.triggers.orders",
                                f"{PACKAGE}.triggers.transfer", f"{PACKAGE}.triggers.payout",
                                f"{PACKAGE}.triggers.keeper",
                                f"{PACKAGE}.triggers.deposit_scan"]}
        ],
        "extra-links": [f"{PACKAGE}.links.explorer.{name}" for name in (
            "TronEnergyDelegationLink", "TronEnergyActivationLink", "TronPayoutLink",
            "TronPayoutTokenLink")],
        "config": _CONFIG,
        # Airflow loads these only with [core] lazy_discover_providers = False; the
        # airflow.plugins entry point (pyproject.toml) loads them otherwise (docs/decisions.md).
        "plugins": [
            {"name": "tronenergy_callbacks",
             "plugin-class": f"{PACKAGE}.callbacks.plugin.TronEnergyCallbacksPlugin"},
            {"name": "tronenergy_energy",
             "plugin-class": f"{PACKAGE}.ui.plugin.TronEnergyPagePlugin"},
        ],
        "asset-uris": [{"schemes": ["tronenergy"], "handler": f"{PACKAGE}.assets.sanitize_uri"}],
        "connection-types": [
            {
                "connection-type": form.conn_type,
                "hook-class-name": f"{PACKAGE}.hooks.{module}.{hook}",
                "hook-name": name,
                "conn-fields": form.conn_fields(),
                "ui-field-behaviour": form.ui_field_behaviour(),
            }
            for form, module, hook, name in (
                (forms.SERVICE, "tronenergy", "TronEnergyHook", INTEGRATION),
                (forms.NODE, "tron_node", "TronNodeHook", "TRON Node"),
                (forms.SIGNER, "tron_signer", "TronSignerHook", "TRON Signer"),
            )
        ],
    }
