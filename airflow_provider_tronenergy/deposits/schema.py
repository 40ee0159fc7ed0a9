"""The deposit ledger's tables, declared once.

A credit is keyed by what the chain keys a transfer by, ``(tx_hash, log_index)``
(:class:`~airflow_provider_tronenergy.node.transfers.ChainTransfer`), and keeps the
chain's figures and where they were read (block, log), the token's contract and the
path that saw the deposit first (``callback`` or ``scan``). ``deposit_registrations``
keeps when each address was registered through the provider (:mod:`.registrations`).
Every table is at version 1; :data:`MIGRATIONS` lists the steps a later release adds.
"""

from __future__ import annotations

from typing import Final

import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore

ENV_LEDGER_URL: Final = "TRONENERGY_DEPOSITS_DB"
CONF_KEY: Final = "deposits_ledger"
DEFAULT_FILENAME: Final = "credited_deposits.db"
LOCATION: Final = sqlstore.Location(ENV_LEDGER_URL, CONF_KEY, DEFAULT_FILENAME,
                                    "deposit ledger")
SCHEMA: Final = "deposit_ledger"
SOURCES: Final = ("callback", "scan")
"""Which path saw a deposit first."""

_META = sa.MetaData()
CREDITED: Final = sa.Table(
    "credited_deposits", _META,
    sa.Column("tx_hash", sa.String(64), primary_key=True),
    sa.Column("log_index", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("to_address", sa.String(34), nullable=False, index=True),
    sa.Column("from_address", sa.String(34), nullable=False),
    sa.Column("amount", sa.String(100), nullable=False),  # exact decimal text, the chain's
    sa.Column("token", sa.String(20), nullable=False),  # the symbol credited (USDT, TRX)
    sa.Column("block_number", sa.BigInteger, nullable=False),
    sa.Column("credited_at", sa.String(40), nullable=False),
    sa.Column("credited_by", sa.String(250), nullable=True),  # the run, when one is named
    sa.Column("units", sa.String(80), nullable=False),  # integer text (uint256)
    sa.Column("contract", sa.String(34), nullable=True),  # the token's contract; NULL: TRX
    sa.Column("block_timestamp_ms", sa.BigInteger, nullable=False),
    sa.Column("source", sa.String(10), nullable=False),
)
OFFSETS: Final = sa.Table(
    "deposit_catch_up", _META,  # how far the ledger has read the callback store
    sa.Column("consumer", sa.String(200), primary_key=True),
    sa.Column("last_id", sa.BigInteger, nullable=False),
)
CLAIMS: Final = sa.Table(
    "deposit_claims", _META,  # stored callbacks the chain has not proven (yet)
    sa.Column("tx_hash", sa.String(64), primary_key=True),
    sa.Column("store_id", sa.BigInteger, nullable=False),
    sa.Column("to_address", sa.String(34), nullable=False),
    sa.Column("token", sa.String(20), nullable=False),
    sa.Column("amount", sa.String(100), nullable=False),  # as the callback said it
    sa.Column("state", sa.String(10), nullable=False, index=True),
    sa.Column("reason", sa.String(40), nullable=False),
    sa.Column("detail", sa.String(500), nullable=False),
    sa.Column("said", sa.Text, nullable=False),  # JSON: the callback's view
    sa.Column("chain", sa.Text, nullable=False),  # JSON: the chain's view ({} when none)
    sa.Column("received_at_ms", sa.BigInteger, nullable=False),
    sa.Column("first_seen", sa.String(40), nullable=False),
    sa.Column("last_tried", sa.String(40), nullable=False),
    sa.Column("tries", sa.Integer, nullable=False),
    sa.Column("note", sa.String(1000), nullable=True),  # a person's, when resolved
    sa.Column("resolved_by", sa.String(250), nullable=True),
)
REGISTRATIONS: Final = sa.Table(
    "deposit_registrations", _META,  # when each address was registered through the provider
    sa.Column("address", sa.String(34), primary_key=True),
    sa.Column("block", sa.BigInteger, nullable=True),  # earliest solidified head read then
    sa.Column("at_ms", sa.BigInteger, nullable=True),  # earliest time, when no node was read
    sa.Column("at_block", sa.BigInteger, nullable=True),  # at_ms as the scan resolved it
    sa.Column("first_registered_at", sa.String(40), nullable=False),
    sa.Column("last_registered_at", sa.String(40), nullable=False),
    sa.Column("registered_by", sa.String(250), nullable=True),  # the first run, when named
)
TABLES: Final = (CREDITED, OFFSETS, CLAIMS, REGISTRATIONS)
CONSUMER: Final = "deposits.catch_up"
"""The offset's row in ``deposit_catch_up``: the one offset of the ledger."""


MIGRATIONS: Final[dict[int, sqlstore.Step]] = {}
"""``{n: step}`` moving the ledger from version ``n - 1`` to ``n``: none yet, the first
release is version 1 (a later release adds its steps here, from 2)."""
