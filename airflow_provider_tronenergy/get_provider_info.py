"""What Airflow's ProvidersManager learns about this package (``apache_airflow_provider``)."""

from __future__ import annotations

from typing import Any

from airflow_provider_tronenergy import __version__

REPOSITORY_URL = "https://github.com/airflow-provider-tronenergy/airflow-provider-tronenergy"
"""The project's home, defined here only: hatch_build.py derives the package's Project-URLs
and the absolute links of its long description from it."""
INTEGRATION = "TRON Energy"
PACKAGE = "airflow_provider_tronenergy"

_EXTRA_FIELDS: dict[str, Any] = {
    "webhook_secret": {
        "label": "Webhook secret",
        "description": "Verifies the service's signed callbacks (never the API secret).",
        "schema": {"type": ["string", "null"], "format": "password"},
    },
    # The form saves every field, null where left empty; the hook reads null as the default.
    # "null" in a type makes the field optional; it never goes into an enum (it would be
    # offered as a choice).
    "signature_scheme": {
        "label": "Signature scheme",
        "description": "How requests are signed: v1 (default) or ts.body.",
        "schema": {"type": ["string", "null"], "enum": ["v1", "ts.body"], "default": "v1"},
    },
    "timeout": {
        # No pre-filled value: the default (5 s to connect, 30 s to read) is no single number.
        "label": "Timeout (seconds)",
        "description": "One number for both the connect and the read timeout; a whole call "
        "ends within their sum ([connect, read, total] in the extra JSON sets each). Empty: "
        "5 s to connect, 30 s to read, 35 s in all.",
        "schema": {"type": ["number", "null"], "exclusiveMinimum": 0},
    },
    "max_answer_bytes": {
        "label": "Max answer size (bytes)",
        "description": "The largest answer a call reads, decompressed; a larger one fails "
        "(a purchase's outcome is then unknown). Empty: 1048576 (1 MiB).",
        "schema": {"type": ["integer", "null"], "minimum": 1, "default": 1048576},
    },
    "max_retries": {
        "label": "Max retries",
        "description": "Resends of idempotent calls; 0 turns resending off, empty means 3. "
        "Purchases are never resent once sent.",
        "schema": {"type": ["integer", "null"], "minimum": 0, "default": 3},
    },
    "order_poll_budget": {
        "label": "Order poll budget (requests/s)",
        "description": "Requests per second that the deferred order waits of this connection "
        "make together in one triggerer; a 429 pauses them all. Empty: 10.",
        "schema": {"type": ["number", "null"], "exclusiveMinimum": 0, "default": 10},
    },
    "price_rent_times": {
        "label": "Price rent times (hours)",
        "description": "Override the rent_time values GET /energy/price accepts, e.g. 0.08,0.17,1.",
        "schema": {"type": ["string", "null"]},
    },
    "purchase_rent_times": {
        "label": "Purchase rent times (hours)",
        "description": "Override the rent_time values purchases accept, e.g. 0.25,1,24.",
        "schema": {"type": ["string", "null"]},
    },
    "explorer_url": {
        "label": "Block explorer URL",
        "description": "Root of the TronScan the links to delegations and activations open, "
        "for the chain the service sends on: https://nile.tronscan.org (Nile), "
        "https://shasta.tronscan.org (Shasta), a private one. Empty: https://tronscan.org.",
        "schema": {"type": ["string", "null"]},
    },
}

_NODE_FIELDS: dict[str, Any] = {
    "network": {
        "label": "Network",
        "description": "The chain this node must be on, checked against its block 0 before "
        "anything moves: mainnet, nile, shasta, or custom (a private chain or the sandbox: set "
        "its genesis block id and USDT contract). Empty: mainnet.",
        "schema": {"type": ["string", "null"],
                   "enum": ["mainnet", "nile", "shasta", "custom", None]},
    },
    "genesis_block_id": {
        "label": "Genesis block id",
        "description": "Block 0's blockID (/wallet/getblockbynum {\"num\": 0}), 64 hex: "
        "required with network custom.",
        "schema": {"type": ["string", "null"]},
    },
    "usdt_contract": {
        "label": "USDT contract",
        "description": "The USDT TRC20 contract to read balances and estimates against. Empty: "
        "the network's (mainnet TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t, Nile "
        "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf, Shasta TG3XXyExBkPp9nzdajDZsozEu4BkaSJozs); "
        "another on those networks is refused; required with custom.",
        "schema": {"type": ["string", "null"]},
    },
    "timeout": {
        "label": "Timeout (seconds)",
        "description": "Per connect and per read; a whole call, its resends included, ends "
        "within their sum ([connect, read, total] in the extra JSON sets each). Empty: 10.",
        "schema": {"type": ["number", "null"], "exclusiveMinimum": 0},
    },
    "max_answer_bytes": {
        "label": "Max answer size (bytes)",
        "description": "The largest answer a node call reads, decompressed. Empty: 16777216 "
        "(16 MiB).",
        "schema": {"type": ["integer", "null"], "minimum": 1, "default": 16777216},
    },
    "max_retries": {
        "label": "Max retries",
        "description": "Resends of a read on no answer, 429 or 5xx. Empty: 3.",
        "schema": {"type": ["integer", "null"], "minimum": 0, "default": 3},
    },
    "explorer_url": {
        "label": "Block explorer URL",
        "description": "Root of the TronScan the payout links open, for this node's chain. "
        "Empty: the network's (https://tronscan.org, https://nile.tronscan.org, "
        "https://shasta.tronscan.org); a custom chain without one shows no links.",
        "schema": {"type": ["string", "null"]},
    },
    "requests_per_second": {
        "label": "Requests per second",
        "description": "The node key's rate (a decimal, e.g. 15 for a TronGrid key), kept by "
        "every task, trigger and worker using this node URL and key together, through the "
        "purchase journal's database; a 429 or 503 slows them all. Empty: unpaced.",
        "schema": {"type": ["string", "null"]},
    },
}


_SIGNER_FIELDS: dict[str, Any] = {
    "address": {
        "label": "Address",
        "description": "The address this connection must sign for (the hot wallet); a key or "
        "a signer for another address is refused before anything is signed.",
        "schema": {"type": ["string", "null"]},
    },
    "signer_class": {
        "label": "External signer class",
        "description": "Import path of a signer (package.module:Class, with an address and "
        "sign(txid) -> 65-byte signature) for a KMS or an HSM; leave the password empty.",
        "schema": {"type": ["string", "null"]},
    },
}


_CONFIG: dict[str, Any] = {
    "tronenergy": {
        "description": "Where the provider keeps its own state. Every Airflow component "
        "of a deployment must see the same values.",
        "options": {
            "purchase_journal": {
                "description": "SQLAlchemy URL of the purchase journal (every purchase, "
                "before it is sent). Empty: a SQLite file in AIRFLOW_HOME, right for one host; "
                "several hosts need one shared PostgreSQL. TRONENERGY_PURCHASE_JOURNAL wins.",
                "version_added": "0.2.0", "type": "string", "sensitive": True,
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
                "version_added": "0.2.0", "type": "string", "sensitive": True,
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
                "version_added": "0.2.0", "type": "float", "example": "10", "default": "10",
            },
            "batch_ready_asset": {
                "description": "URI of the asset whose events are the payout batches the "
                "Energy page lists (the example DAGs' by default).",
                "version_added": "0.2.0", "type": "string",
                "example": "tronenergy://payout-batch-ready",
                "default": "tronenergy://payout-batch-ready",
            },
        },
    },
}


def get_provider_info() -> dict[str, Any]:
    return {
        "package-name": "airflow-provider-tronenergy",
        "name": INTEGRATION,
        "description": "Rent TRON energy, activate and check addresses, and watch deposits "
        "through signed callbacks, as Airflow tasks.",
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
                                 "deposit_scan")
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
            "TronEnergyDelegationLink", "TronEnergyActivationLink", "TronPayoutLink")],
        "config": _CONFIG,
        "connection-types": [
            {
                "connection-type": "tronenergy",
                "hook-class-name": f"{PACKAGE}.hooks.tronenergy.TronEnergyHook",
                "hook-name": INTEGRATION,
                "conn-fields": _EXTRA_FIELDS,
                "ui-field-behaviour": {
                    "hidden-fields": ["schema", "port"],
                    "relabeling": {
                        "host": "Base URL", "login": "API key", "password": "API secret",
                    },
                    "placeholders": {
                        "host": "https://api.example.com/v1",
                        "login": "your API key",
                        "password": "your API secret",
                    },
                },
            },
            {
                "connection-type": "tron_node",
                "hook-class-name": f"{PACKAGE}.hooks.tron_node.TronNodeHook",
                "hook-name": "TRON Node",
                "conn-fields": _NODE_FIELDS,
                "ui-field-behaviour": {
                    "hidden-fields": ["schema", "login"],
                    "relabeling": {"host": "Node URL", "password": "API key (TRON-PRO-API-KEY)"},
                    "placeholders": {"host": "https://api.trongrid.io", "password": "optional"},
                },
            },
            {
                "connection-type": "tron_signer",
                "hook-class-name": f"{PACKAGE}.hooks.tron_signer.TronSignerHook",
                "hook-name": "TRON Signer",
                "conn-fields": _SIGNER_FIELDS,
                "ui-field-behaviour": {
                    "hidden-fields": ["schema", "login", "host", "port"],
                    "relabeling": {"password": "Private key (hex)"},
                    "placeholders": {"password": "64 hex characters; empty with an external "
                                                 "signer"},
                },
            },
        ],
    }
