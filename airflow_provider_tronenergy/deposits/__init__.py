"""Crediting deposits exactly once, from what the chain proves: the ledger a deposit DAG writes.

Two paths find deposits. A **callback** the receiver verified and stored says a transfer
happened; the signature only proves who sent it (whoever holds the webhook secret), so
:meth:`DepositLedger.credit_from_store` proves each on chain first (:mod:`.proof`:
the transaction's receipt, solidified by default, must hold a transfer of the
configured token into the address for exactly the amount) and credits the chain's
figures; what the chain has not proven yet waits, what it contradicts is kept as
disputed, never credited (:mod:`.claims`; ``tronenergy-deposits`` lists and resolves
them). A **chain scan** finds transfers no callback announced and credits them through
the same :meth:`DepositLedger.credit`. Both key a credit by the chain's key, the
transaction hash and the log's index, so a deposit is credited once whichever path,
worker or run saw it first.

The Asset event a stored transfer fires only wakes the credit DAG; a run credits every
deposit stored before it started, whichever events woke it. Crediting is an insert
keyed by ``(tx_hash, log_index)``: the key decides, not an earlier read, so a second
worker or two runs at once credit nothing twice. Each row names the run that credited it.

The store offset is a position in the store, not one per address: each stored callback
is judged once, against the deposit addresses the sweep reading it was given; a
transfer into an address that becomes a deposit address later is credited on purpose
by :meth:`DepositLedger.credit_earlier`. A sweep given no addresses reads nothing.

Where the ledger lives: ``$TRONENERGY_DEPOSITS_DB``, else ``[tronenergy]
deposits_ledger``, else a SQLite file in ``$AIRFLOW_HOME``; read when the ledger is
opened in a task, never when a DAG file is parsed.
"""

from __future__ import annotations

from airflow_provider_tronenergy.deposits.ledger import Credit, DepositLedger
from airflow_provider_tronenergy.deposits.proof import ProofSettings, Prover, Said, Verdict
from airflow_provider_tronenergy.deposits.schema import (
    CONF_KEY,
    CONSUMER,
    DEFAULT_FILENAME,
    ENV_LEDGER_URL,
    LOCATION,
    MIGRATIONS,
    SCHEMA,
)
from airflow_provider_tronenergy.deposits.sweep import ProofBudget

__all__ = [
    "CONF_KEY",
    "CONSUMER",
    "DEFAULT_FILENAME",
    "ENV_LEDGER_URL",
    "LOCATION",
    "MIGRATIONS",
    "SCHEMA",
    "Credit",
    "DepositLedger",
    "ProofBudget",
    "ProofSettings",
    "Prover",
    "Said",
    "Verdict",

]
