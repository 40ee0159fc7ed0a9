"""A payout batch as a run hands it over: a CSV file or a list of rows, read and checked.

:func:`load_payouts` takes the run's ``payouts_file`` (CSV of ``recipient,amount`` or
``recipient,amount,token``, header optional) or its ``payouts`` rows, and
:func:`parse_payouts` checks each row: a full base58check address, a positive amount (the
one amount rule, :func:`~.rows.amount_problem`, the sender's too) and its token's name
(:func:`token_text`: ``TRX``, ``USDT``, a ``T...`` contract or a name of the node
connection's ``tokens`` extra; none: the network's USDT, docs/decisions.md "Payout
tokens"). Decimals known without a node are checked here (USDT and TRX: 6); another
token's are read from its contract by the pre-flight (:mod:`.token_preflight`), which
checks its rows' amounts again in them. Every bad row is named by its
line, all at once, in one :class:`~.rows.PayoutInputError`: a payout is never silently
dropped, and nothing is bought. A run handed neither is :class:`NoPayouts`: there is
nothing to prepare. Amounts stay exact decimal text (JSON-safe for XCom).
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from airflow_provider_tronenergy.client.validation import address as valid_address
from airflow_provider_tronenergy.errors import NothingToDo
from airflow_provider_tronenergy.node.tokens import MAX_DECIMALS, TRX, TRX_TOKEN
from airflow_provider_tronenergy.payout.params import NOTHING_BOUGHT
from airflow_provider_tronenergy.payout.rows import (
    DEFAULT_TOKEN,
    TOKENS,
    PayoutInputError,
    amount_problem,
)
from tronenergy_protocol.address import is_valid_address
from tronenergy_protocol.numbers import parse_decimal

log = logging.getLogger(__name__)


class NoPayouts(NothingToDo):
    """A run handed no batch (a scheduled run nobody gave a file or rows): it is skipped."""


def exact_text(amount: Decimal) -> str:
    """``amount`` as plain decimal text without trailing zeros, never through a Decimal
    context (its 28 digits would round an 18-decimal amount of 11 digits or more)."""
    plain = format(amount, "f")
    return plain.rstrip("0").rstrip(".") if "." in plain else plain


def token_text(value: str) -> str:
    """A row's token as the sheet keeps it: ``TRX`` and names upper-cased, a contract's
    address as written, empty for none; ``ValueError`` for text that can name no token
    (whether a name is in the connection's ``tokens`` extra, the pre-flight asks)."""
    stripped = value.strip()
    if not stripped or is_valid_address(stripped):
        return stripped
    name = stripped.upper()
    if not (name.isascii() and name.isalnum() and 1 <= len(name) <= 16):
        raise ValueError(f"token {stripped[:40]!r} must be TRX, USDT, a contract's base58 "
                         "address (T...) or a name of the node connection's tokens extra")
    return name


def known_decimals(token: str, amount: Decimal) -> int:
    """The decimals checked before the chain is read: USDT's and TRX's; for another token
    the amount's own, at most the most any token may have (its contract's own are checked
    by the pre-flight: a token of more decimals only adds digits to the units)."""
    if token in ("", DEFAULT_TOKEN):
        return TOKENS[DEFAULT_TOKEN]
    if token == TRX:
        return TRX_TOKEN.decimals
    exponent = amount.as_tuple().exponent
    written = len(exact_text(amount).partition(".")[2]) if isinstance(exponent, int) else 0
    return min(MAX_DECIMALS, written)


def parse_payouts(rows: Iterable[Sequence[str]], first_line: int = 1) -> list[dict[str, str]]:
    """Validated ``{"recipient", "amount"}`` payouts (and ``token`` when a row names one);
    every bad row is reported by line, and every recipient that appears more than once for
    a token is logged."""
    payouts: list[dict[str, str]] = []
    errors: list[str] = []
    lines: dict[str, list[int]] = {}
    for line, row in enumerate(rows, start=first_line):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) not in (2, 3):
            errors.append(f"line {line}: expected 'recipient,amount' or "
                          f"'recipient,amount,token', got {len(row)} fields")
            continue
        recipient, raw_amount, *rest = (cell.strip() for cell in row)
        try:
            valid_address(recipient, "recipient")
            token = token_text(rest[0] if rest else "")
            amount = parse_decimal(raw_amount, "amount")
        except ValueError as exc:
            errors.append(f"line {line}: {exc}")
            continue
        problem = amount_problem(amount, known_decimals(token, amount))
        if problem is not None:
            errors.append(f"line {line}: amount {raw_amount!r} {problem}")
            continue
        payouts.append({"recipient": recipient, "amount": exact_text(amount),
                        **({"token": token} if token else {})})
        lines.setdefault(f"{recipient} ({token})" if token else recipient, []).append(line)
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
        return parse_payouts([[str(r.get("recipient", "")), str(r.get("amount", "")),
                               str(r.get("token") or "")] for r in payouts])
    rows = list(csv.reader(io.StringIO(Path(payouts_file).read_text(encoding="utf-8"))))
    if rows and rows[0] and rows[0][0].strip().lower() == "recipient":
        return parse_payouts(rows[1:], first_line=2)
    return parse_payouts(rows)


def no_batch(payouts_file: str, payouts: Sequence[Mapping[str, Any]] | None) -> bool:
    """Neither a file nor rows: a run with nothing to prepare."""
    return not payouts_file and not payouts


def recipients(payouts: Sequence[Mapping[str, str]]) -> list[str]:
    """Each recipient of a token transfer once, in first-occurrence order (what is checked
    and activated): a TRX payout needs no energy, and creates its recipient's account
    itself (its fee counted by the pre-flight)."""
    return list(dict.fromkeys(p["recipient"] for p in payouts if p.get("token") != TRX))
