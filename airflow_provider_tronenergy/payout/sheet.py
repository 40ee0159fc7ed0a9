"""A payout batch as a run hands it over: a CSV file or a list of rows, read and checked.

:func:`load_payouts` takes the run's ``payouts_file`` (CSV of ``recipient,amount``,
header optional) or its ``payouts`` rows, and :func:`parse_payouts` checks each row:
a full base58check address, a positive amount with at most 6 decimals (the one amount
rule, :func:`~.rows.amount_problem`, the sender's too). Every bad row is named by its
line, all at once, in one :class:`~.rows.PayoutInputError`: a payout is never silently
dropped, and nothing is bought. A run handed neither is :class:`NoPayouts`: there is
nothing to prepare. Amounts stay exact decimal text (JSON-safe for XCom).
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from airflow_provider_tronenergy.client.validation import address as valid_address
from airflow_provider_tronenergy.errors import NothingToDo
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.payout.params import NOTHING_BOUGHT
from airflow_provider_tronenergy.payout.rows import (
    DEFAULT_TOKEN,
    TOKENS,
    PayoutInputError,
    amount_problem,
)
from tronenergy_protocol.numbers import parse_decimal

log = logging.getLogger(__name__)


class NoPayouts(NothingToDo):
    """A run handed no batch (a scheduled run nobody gave a file or rows): it is skipped."""


def parse_payouts(rows: Iterable[Sequence[str]], first_line: int = 1) -> list[dict[str, str]]:
    """Validated ``{"recipient", "amount"}`` payouts; every bad row is reported by line, and
    every recipient that appears more than once is logged."""
    payouts: list[dict[str, str]] = []
    errors: list[str] = []
    lines: dict[str, list[int]] = {}
    for line, row in enumerate(rows, start=first_line):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != 2:
            errors.append(f"line {line}: expected 'recipient,amount', got {len(row)} fields")
            continue
        recipient, raw_amount = (cell.strip() for cell in row)
        try:
            valid_address(recipient, "recipient")
            amount = parse_decimal(raw_amount, "amount")
        except ValueError as exc:
            errors.append(f"line {line}: {exc}")
            continue
        problem = amount_problem(amount, TOKENS[DEFAULT_TOKEN])
        if problem is not None:
            errors.append(f"line {line}: amount {raw_amount!r} {problem}")
            continue
        payouts.append({"recipient": recipient, "amount": text(amount)})
        lines.setdefault(recipient, []).append(line)
    if errors:
        raise PayoutInputError(f"bad payout rows ({NOTHING_BOUGHT}):\n" + "\n".join(errors))
    if not payouts:
        raise PayoutInputError("the payout batch is empty")
    for recipient, where in lines.items():
        if len(where) > 1:  # legitimate or a pasted row twice: a person should see it
            log.warning("recipient %s appears %d times (lines %s): %d payouts to it, planned "
                        "as one first transfer at most", recipient, len(where),
                        ", ".join(map(str, where)), len(where))
    return payouts


def load_payouts(payouts_file: str = "",
                 payouts: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, str]]:
    """The batch of a run: ``payouts_file`` (CSV, header optional) or the ``payouts`` rows.

    With neither (a scheduled run nobody handed a batch) it is :class:`NoPayouts`: there
    is nothing to prepare (:func:`no_batch` asks first, before the batch's settings are
    checked).
    """
    if no_batch(payouts_file, payouts):
        raise NoPayouts("no payouts_file and no payouts: nothing to prepare")
    if not payouts_file:
        return parse_payouts([[str(r.get("recipient", "")), str(r.get("amount", ""))]
                              for r in payouts])
    rows = list(csv.reader(io.StringIO(Path(payouts_file).read_text(encoding="utf-8"))))
    if rows and rows[0] and rows[0][0].strip().lower() == "recipient":
        return parse_payouts(rows[1:], first_line=2)
    return parse_payouts(rows)


def no_batch(payouts_file: str, payouts: Sequence[Mapping[str, Any]] | None) -> bool:
    """Neither a file nor rows: a run with nothing to prepare."""
    return not payouts_file and not payouts


def recipients(payouts: Sequence[Mapping[str, str]]) -> list[str]:
    """Each recipient once, in first-occurrence order (what is checked and activated)."""
    return list(dict.fromkeys(p["recipient"] for p in payouts))
