"""The three connection types' forms, written once: every extra a hook reads, with its label,
type, default and description.

Airflow 3.2+ draws the form from provider info (``conn-fields``, ``ui-field-behaviour``:
:func:`~airflow_provider_tronenergy.get_provider_info.get_provider_info`); earlier releases
ask the hook (``get_ui_field_behaviour``), whose Extra JSON placeholder is built here from
the same fields. The keys are the ``extra`` JSON keys the hooks read, nothing renamed.
The defaults are written out, not imported, so that provider info (read at every Airflow
start) imports no client, node or signer code; tests/test_get_provider_info.py holds them
to the hooks' own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

TYPES: Final = frozenset({"string", "integer", "number", "object"})


@dataclass(frozen=True)
class Field:
    """One extra of a connection form.

    ``default`` is what the 3.2+ form pre-fills (None: left empty, which the hook reads as
    its default); ``example`` only shows in the legacy Extra JSON placeholder.
    """

    label: str
    type: str
    description: str
    default: Any = None
    secret: bool = False
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    above: int | None = None
    example: Any = None

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"field {self.label!r}: type must be one of {sorted(TYPES)}")

    def schema(self) -> dict[str, Any]:
        """JSON Schema of the value the form saves: "null" in every type, because the form
        saves every field, null where left empty."""
        schema: dict[str, Any] = {"type": [self.type, "null"]}
        if self.secret:
            schema["format"] = "password"
        if self.choices:
            # null goes into the choices only when nothing is pre-filled: the empty choice is
            # then the default, and the select offers it.
            schema["enum"] = [*self.choices, *([None] if self.default is None else [])]
        for key, value in (("minimum", self.minimum), ("maximum", self.maximum),
                           ("exclusiveMinimum", self.above), ("default", self.default)):
            if value is not None:
                schema[key] = value
        return schema


@dataclass(frozen=True)
class Form:
    """A connection type's form: the standard fields' layout and the extras."""

    conn_type: str
    hidden: tuple[str, ...]
    relabeling: Mapping[str, str] = field(hash=False)
    placeholders: Mapping[str, str] = field(hash=False)
    fields: Mapping[str, Field] = field(hash=False)

    def conn_fields(self) -> dict[str, Any]:
        """Provider info's ``conn-fields``."""
        return {key: {"label": f.label, "description": f.description, "schema": f.schema()}
                for key, f in self.fields.items()}

    def ui_field_behaviour(self) -> dict[str, Any]:
        """Provider info's ``ui-field-behaviour``."""
        return {"hidden-fields": list(self.hidden), "relabeling": dict(self.relabeling),
                "placeholders": dict(self.placeholders)}

    def legacy_behaviour(self) -> dict[str, Any]:
        """A hook's ``get_ui_field_behaviour()`` (Airflow < 3.2): the same layout, the
        extras shown in the Extra JSON box's placeholder with their defaults or examples."""
        shown = {key: f.example if f.example is not None else f.default
                 for key, f in self.fields.items()
                 if f.example is not None or f.default is not None}
        return {"hidden_fields": list(self.hidden), "relabeling": dict(self.relabeling),
                "placeholders": {**self.placeholders, "extra": json.dumps(shown)}}


SERVICE: Final = Form(
    conn_type="tronenergy",
    hidden=("schema", "port"),
    relabeling={"host": "Base URL", "login": "API key", "password": "API secret"},
    placeholders={"host": "https://api.example.com/v1", "login": "your API key",
                  "password": "your API secret"},
    fields={
        "webhook_secret": Field(
            "Webhook secret", "string",
            "Verifies the service's signed callbacks (never the API secret); \"new,old\" "
            "while a rotation lists two.", secret=True, example="..."),
        "address_webhook_secrets": Field(
            "Address webhook secrets", "object",
            "Callback secrets of single addresses, a JSON object {\"T...\": \"secret\" or "
            "[\"new\", \"old\"]}: tried when no key-level secret matches."),
        "signature_scheme": Field(
            "Signature scheme", "string", "How requests are signed: v1 (default) or ts.body.",
            default="v1", choices=("v1", "ts.body")),
        # No pre-filled value: the default (5 s to connect, 30 s to read) is no single number.
        "timeout": Field(
            "Timeout (seconds)", "number",
            "One number for both the connect and the read timeout; a whole call ends within "
            "their sum ([connect, read, total] in the extra JSON sets each). Empty: 5 s to "
            "connect, 30 s to read, 35 s in all.", above=0, example=[5, 30]),
        "max_answer_bytes": Field(
            "Max answer size (bytes)", "integer",
            "The largest answer a call reads, decompressed; a larger one fails (a purchase's "
            "outcome is then unknown). Empty: 1048576 (1 MiB).", default=1048576, minimum=1),
        "max_retries": Field(
            "Max retries", "integer",
            "Resends of idempotent calls; 0 turns resending off, empty means 3. Purchases "
            "are never resent once sent.", default=3, minimum=0),
        "order_poll_budget": Field(
            "Order poll budget (requests/s)", "number",
            "Requests per second that the deferred order waits of this connection make "
            "together in one triggerer; a 429 pauses them all. Empty: 10.", default=10,
            above=0),
        "price_rent_times": Field(
            "Price rent times (hours)", "string",
            "Override the rent_time values GET /energy/price accepts, e.g. 0.08,0.17,1."),
        "purchase_rent_times": Field(
            "Purchase rent times (hours)", "string",
            "Override the rent_time values purchases accept, e.g. 0.25,1,24."),
        "explorer_url": Field(
            "Block explorer URL", "string",
            "Root of the TronScan the links to delegations and activations open, for the "
            "chain the service sends on: https://nile.tronscan.org (Nile), "
            "https://shasta.tronscan.org (Shasta), a private one. Empty: https://tronscan.org."),
    },
)

NODE: Final = Form(
    conn_type="tron_node",
    hidden=("schema", "login"),
    relabeling={"host": "Node URL", "password": "API key (TRON-PRO-API-KEY)"},
    placeholders={"host": "https://api.trongrid.io", "password": "optional"},
    fields={
        "network": Field(
            "Network", "string",
            "The chain this node must be on, checked against its block 0 before anything "
            "moves: mainnet, nile, shasta, or custom (a private chain or the sandbox: set its "
            "genesis block id and USDT contract). Empty: mainnet.",
            choices=("mainnet", "nile", "shasta", "custom"), example="mainnet"),
        "genesis_block_id": Field(
            "Genesis block id", "string",
            "Block 0's blockID (/wallet/getblockbynum {\"num\": 0}), 64 hex: required with "
            "network custom."),
        "usdt_contract": Field(
            "USDT contract", "string",
            "The USDT TRC20 contract to read balances and estimates against. Empty: the "
            "network's (mainnet TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t, Nile "
            "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf, Shasta TG3XXyExBkPp9nzdajDZsozEu4BkaSJozs); "
            "another on those networks is refused; required with custom."),
        "tokens": Field(
            "Payout tokens", "object",
            "Short names payout rows may give their token by, each a TRC-20 contract (JSON "
            "object, e.g. {\"USDC\": \"T...\"}); its decimals and symbol are read from the "
            "contract. TRX and USDT (the network's) are always known; a row may also name a "
            "contract by its address. Empty: none more.", example={}),
        "timeout": Field(
            "Timeout (seconds)", "number",
            "Per connect and per read; a whole call, its resends included, ends within their "
            "sum ([connect, read, total] in the extra JSON sets each). Empty: 10.", above=0,
            example=10),
        "max_answer_bytes": Field(
            "Max answer size (bytes)", "integer",
            "The largest answer a node call reads, decompressed. Empty: 16777216 (16 MiB).",
            default=16777216, minimum=1),
        "max_retries": Field(
            "Max retries", "integer", "Resends of a read on no answer, 429 or 5xx. Empty: 3.",
            default=3, minimum=0),
        "multicall": Field(
            "Multicall contract", "string",
            "A Multicall contract (base58 T...): a payout's pre-flight reads its recipients' "
            "USDT balances many per request. Empty: none (one estimate per recipient)."),
        "multicall_chunk": Field(
            "Multicall chunk", "integer",
            "Balances per Multicall request, 1 to 500 (used with a Multicall contract). "
            "Empty: 100.", default=100, minimum=1, maximum=500),
        "explorer_url": Field(
            "Block explorer URL", "string",
            "Root of the TronScan the payout links open, for this node's chain. Empty: the "
            "network's (https://tronscan.org, https://nile.tronscan.org, "
            "https://shasta.tronscan.org); a custom chain without one shows no links."),
        "requests_per_second": Field(
            "Requests per second", "string",
            "The node key's rate (a decimal, e.g. 15 for a TronGrid key), kept by every task, "
            "trigger and worker using this node URL and key together, through the purchase "
            "journal's database; a 429 or 503 slows them all. Empty: unpaced."),
    },
)

SIGNER: Final = Form(
    conn_type="tron_signer",
    hidden=("schema", "login", "host", "port"),
    relabeling={"password": "Private key (hex)"},
    placeholders={"password": "64 hex characters; empty with KMS or an external signer"},
    fields={
        "address": Field(
            "Address", "string",
            "The address this connection must sign for (the hot wallet); a key or a signer "
            "for another address is refused before anything is signed.", example="T..."),
        "kms_key_id": Field(
            "KMS key", "string",
            "Instead of a private key: a secp256k1 key in AWS KMS (id, ARN or alias/...; the "
            "[aws] extra) that signs without the key reaching Airflow; leave the password "
            "empty.", example="alias/..."),
        "region_name": Field(
            "KMS region", "string",
            "The KMS key's AWS region. Empty: the AWS connection's, else boto3's default.",
            example=""),
        "aws_conn_id": Field(
            "AWS connection id", "string",
            "An Airflow aws connection whose credentials reach KMS (needs the Amazon "
            "provider). Empty: boto3's default credential chain.", example=""),
        "endpoint_url": Field(
            "KMS endpoint URL", "string",
            "Another KMS endpoint, e.g. a VPC endpoint. Empty: the region's."),
        "signer_class": Field(
            "External signer class", "string",
            "Import path of a signer (package.module:Class, with an address and sign(txid) -> "
            "65-byte signature) for an HSM; leave the password empty.", example=""),
        "signer_kwargs": Field(
            "External signer arguments", "object",
            "Keyword arguments for the signer class, a JSON object (not masked: no secret "
            "belongs here).", example={}),
    },
)

FORMS: Final = {form.conn_type: form for form in (SERVICE, NODE, SIGNER)}
"""Every connection type's form, by connection type."""
