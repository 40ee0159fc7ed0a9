"""A payout batch's identity and its checked rows: the payout room's input.

Preparation names a batch (:func:`run_batch_id` for a run given none: its purchases
are keyed by it) and the send operator takes a :class:`PayoutBatch`: the batch id the
journal knows its payouts by, and the rows checked once (:func:`~.rows.payouts`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from airflow_provider_tronenergy.node.tokens import TRX, Token, TokenBook
from airflow_provider_tronenergy.payout.rows import (
    DEFAULT_TOKEN,
    Payout,
    PayoutInputError,
    Tokens,
    batch_name,
    payouts,
    usdt_only,
)

__all__ = ["TRX", "PayoutBatch", "TokenBook", "run_batch_id"]
"""``TRX`` and ``TokenBook`` (:mod:`..node.tokens`) handed on: the operators reach the node
room through this one."""


@dataclass(frozen=True)
class PayoutBatch:
    """One batch as the sender takes it: its id, its rows, checked, and their tokens (by
    journal name: a batch may mix tokens, each row names its own)."""

    batch_id: str
    rows: tuple[Payout, ...]
    token: str = DEFAULT_TOKEN
    """The token of rows that name none."""
    tokens: Mapping[str, Token] = field(default_factory=dict)

    @classmethod
    def of(cls, rows: Any, *, batch_id: str, token: str = DEFAULT_TOKEN,
           tokens: Tokens | None = None) -> PayoutBatch:
        """``rows`` checked all together (:class:`~.rows.PayoutInputError` names every bad
        one) under ``batch_id``, each row's token resolved by ``tokens`` (a
        :class:`~..node.tokens.TokenBook`; without one, USDT only)."""
        seen: dict[str, Token] = {}

        def resolve(text: object) -> Token:
            kind = (tokens or usdt_only)(text)
            seen[kind.name] = kind
            return kind

        checked = tuple(payouts(rows, batch_id=batch_id, token=token, tokens=resolve))
        return cls(batch_name(batch_id), checked, token, seen)

    def token_of(self, payout: Payout) -> Token:
        """The token a row pays."""
        return self.tokens[payout.token]

    def by_token(self) -> dict[str, list[Payout]]:
        """The rows by token journal name, in row order."""
        grouped: dict[str, list[Payout]] = {}
        for payout in self.rows:
            grouped.setdefault(payout.token, []).append(payout)
        return grouped


def run_batch_id(context: Mapping[str, Any]) -> str:
    """The ``batch_id`` of a run that was given none: its data interval, else its run id.

    A retry, a clear or a rerun of the run keeps both; the next scheduled run has
    the next interval, so the next period's payroll is a new batch. A manual run's
    interval is its logical date; a run without one is a batch of its own.
    """
    start, end = context.get("data_interval_start"), context.get("data_interval_end")
    if isinstance(start, datetime) and isinstance(end, datetime):
        return _utc(start) if start == end else f"{_utc(start)}/{_utc(end)}"
    run_id = context.get("run_id")
    if isinstance(run_id, str) and run_id:
        return f"run:{hashlib.sha256(run_id.encode()).hexdigest()[:16]}"
    raise PayoutInputError("batch_id is empty and there is no run to name the batch after")


def _utc(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
