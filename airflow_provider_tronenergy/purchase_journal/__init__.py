"""The purchase journal: no purchase is placed twice, across tries, clears, runs and workers.

``store`` keeps every attempt in SQLite or PostgreSQL; ``identity`` says which
purchases are the same; ``spend`` what a key spent (``max_spend_trx``); ``policy``
decides, from the newest attempt, whether to buy, reuse or stop; ``verify`` checks a
person's order id against the service before it is recorded; ``cli`` is
``tronenergy-purchases`` (list, show, resolve).
"""

from __future__ import annotations

from airflow_provider_tronenergy.purchase_journal.identity import (
    IdentityError,
    default_identity,
    explicit_identity,
    scope_of,
    task_scope,
)
from airflow_provider_tronenergy.purchase_journal.policy import Decision, Verdict, decide
from airflow_provider_tronenergy.purchase_journal.spend import SpendCheck
from airflow_provider_tronenergy.purchase_journal.store import (
    Entry,
    EntryState,
    JournalError,
    JournalRace,
    PurchaseJournal,
    journal_url,
    open_journal,
)
from airflow_provider_tronenergy.purchase_journal.verify import (
    OrderMismatch,
    read_order,
    resolve_placed,
)

__all__ = [
    "Decision",
    "Entry",
    "EntryState",
    "IdentityError",
    "JournalError",
    "JournalRace",
    "OrderMismatch",
    "PurchaseJournal",
    "SpendCheck",
    "Verdict",
    "decide",
    "default_identity",
    "explicit_identity",
    "journal_url",
    "open_journal",
    "read_order",
    "resolve_placed",
    "scope_of",
    "task_scope",
]
