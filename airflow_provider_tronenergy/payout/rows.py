"""The payouts to send, checked before anything is signed: who, how much, which identity.

Every bad row is named, all at once, and nothing is signed: an address that fails
base58check, an amount that is not a positive decimal within its token's decimals,
a payout id that is not key text or appears twice, an unknown token. Each row names its
token (``token``: ``TRX``, ``USDT``, a name of the node connection's ``tokens`` extra or a
contract's ``T...`` address; absent: USDT), resolved by the caller's ``tokens``
(:class:`~..node.tokens.TokenBook`: the contract's decimals read from the chain). A payout's
identity is its ``payout_id`` (``id:<payout_id>``) or, without one, its batch and row
(``row:<batch_id>:<n>``): the journal knows a payout by it across tries, clears, new
runs and workers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from airflow_provider_tronenergy.client.validation import address as valid_address
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.node.client import MAX_TRANSFER_ENERGY
from airflow_provider_tronenergy.node.tokens import USDT, Token, TokenRefused
from airflow_provider_tronenergy.purchase_journal.identity import is_key_text
from tronenergy_protocol.numbers import parse_decimal

DEFAULT_TOKEN: Final = USDT
"""What a row without a token pays (docs/decisions.md, "A payout row without a token")."""
TOKENS: Final = {DEFAULT_TOKEN: 6}
"""Tokens known without reading the chain, with their decimals: the preparation's sheet,
and rows checked without a token book."""
MAX_PAYOUT_ID: Final = 128
MAX_BATCH_ID: Final = 64
MAX_DIGITS: Final = 15
"""Digits before the point: more than the token's supply is a typo, not a payout."""
MAX_UNIT_DIGITS: Final = 40
"""Digits of an amount in its token's smallest units: the payout journal keeps them as
text of at most 40 characters (beyond 2^63, so never a 64-bit integer column)."""
Tokens = Callable[[object], Token]
"""A row's token text to its token (:meth:`~..node.tokens.TokenBook.token`)."""


class PayoutInputError(NotRetryable, ValueError):
    """The payouts cannot be sent as given; every problem is in the message."""


@dataclass(frozen=True)
class Payout:
    """One payout, checked: exact units of the token, and its journal identity."""

    identity: str
    row: int
    recipient: str
    units: int
    amount: Decimal
    payout_id: str | None = None
    energy: int | None = None
    """The node's estimate for this transfer, when the batch's preparation made one."""
    token: str = DEFAULT_TOKEN
    """Its token's journal name (:attr:`~..node.tokens.Token.name`): TRX, USDT or a contract."""
    floor: int | None = None
    """The energy a transfer of its token to an emptied address costs now, which its
    ``fee_limit`` covers (the round's pre-flight sets it per contract)."""


def token_decimals(token: str) -> int:
    """The decimals of a token this provider sends, or a clear refusal."""
    if token not in TOKENS:
        raise PayoutInputError(f"unknown token {token!r}: payouts send {', '.join(TOKENS)}")
    return TOKENS[token]


def batch_name(batch_id: object) -> str:
    """A batch id, checked: 1 to 64 key characters."""
    if not isinstance(batch_id, str) or not is_key_text(batch_id, MAX_BATCH_ID):
        raise PayoutInputError(f"batch_id must be 1 to {MAX_BATCH_ID} characters of A-Z a-z "
                               f"0-9 and ._:/@+=#- (no spaces), got {str(batch_id)[:80]!r}")
    return batch_id


def amount_problem(amount: Decimal, decimals: int) -> str | None:
    """Why ``amount`` cannot be paid out in a token of ``decimals``, or None: the one
    rule for a payout amount, for the preparation's rows and the sender's.

    Worked out on the number's digits, never through a Decimal context: rounding or
    normalizing a 29-digit amount goes through the context's 28 digits (a fraction
    below the token's unit would vanish, or the context overflows).
    """
    if not amount.is_finite() or amount <= 0:
        return "must be positive"
    if amount.adjusted() >= MAX_DIGITS:
        return f"is too large (at most {MAX_DIGITS} digits before the point)"
    digits, exponent = amount.as_tuple().digits, amount.as_tuple().exponent
    assert isinstance(exponent, int)  # a finite number's exponent
    trailing_zeros = len(digits) - len("".join(map(str, digits)).rstrip("0"))
    if exponent + trailing_zeros < -decimals:
        return f"has more than {decimals} decimals"
    if len(str(units_of(amount, decimals))) > MAX_UNIT_DIGITS:
        return (f"is too large: more than {MAX_UNIT_DIGITS} digits in the token's smallest "
                f"units ({decimals} decimals)")
    return None


def units_of(amount: Decimal, decimals: int) -> int:
    """``amount`` in smallest units of a token of ``decimals``, exactly: from its digits,
    never through a Decimal context (28 digits: an 18-decimal amount of 11 digits or more
    would be rounded). Call on an amount :func:`amount_problem` passed (no finer digit)."""
    sign, digits, exponent = amount.as_tuple()
    assert isinstance(exponent, int) and not sign  # finite and positive, as checked
    number = int("".join(map(str, digits)) or "0")
    shift = exponent + decimals
    return number * 10 ** shift if shift >= 0 else number // int(10 ** -shift)


def _units(value: object, decimals: int) -> tuple[Decimal, int]:
    if isinstance(value, float):
        raise ValueError("must be decimal text or an integer, not a float (money is exact)")
    amount = parse_decimal(value, "amount")
    problem = amount_problem(amount, decimals)
    if problem is not None:
        raise ValueError(problem)
    return amount, units_of(amount, decimals)


def usdt_only(text: object) -> Token:
    """Without a token book: USDT only (the preparation's sheet and bare checks), its
    contract the node connection's (``contract`` None: see :attr:`~..node.tokens.Token.is_trx`)."""
    if text in (None, "", DEFAULT_TOKEN):
        return Token(DEFAULT_TOKEN, None, TOKENS[DEFAULT_TOKEN], DEFAULT_TOKEN)
    raise TokenRefused(f"unknown token {str(text)[:40]!r}: payouts send {', '.join(TOKENS)}")


def _energy(value: object) -> int | None:
    if value in (None, ""):
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("energy must be an integer")
    energy = int(value) if isinstance(value, int) else int(str(value), 10)
    if not 0 < energy <= MAX_TRANSFER_ENERGY:
        raise ValueError(f"energy must be 1 to {MAX_TRANSFER_ENERGY:,}")
    return energy


def payouts(rows: Any, *, batch_id: str, token: str = DEFAULT_TOKEN,
            tokens: Tokens | None = None) -> list[Payout]:
    """``rows`` (``recipient``, ``amount``, optional ``token``, ``payout_id`` and
    ``energy``), checked all together; :class:`PayoutInputError` names every bad row.

    ``token`` is the token of rows that name none; ``tokens`` resolves a row's token (a
    :class:`~..node.tokens.TokenBook`); without one, USDT only.
    """
    token_decimals(token)
    resolve = tokens or usdt_only
    batch_id = batch_name(batch_id)
    if not isinstance(rows, Sequence) or isinstance(rows, str | bytes):
        raise PayoutInputError("payouts must be a list of rows")
    problems: list[str] = []
    checked: list[Payout] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(rows):
        where = f"row {index}"
        if not isinstance(row, Mapping):
            problems.append(f"{where}: must be an object with recipient and amount")
            continue
        try:
            recipient = valid_address(row.get("recipient"), "recipient")
            kind = resolve(row.get("token") or token)
            amount, units = _units(row.get("amount"), kind.decimals)
            energy = _energy(row.get("energy"))
            payout_id = row.get("payout_id")
            if payout_id in (None, ""):
                payout_id, identity = None, f"row:{batch_id}:{index}"
            elif not isinstance(payout_id, str) or not is_key_text(payout_id, MAX_PAYOUT_ID):
                raise ValueError(f"payout_id must be 1 to {MAX_PAYOUT_ID} characters of A-Z "
                                 "a-z 0-9 and ._:/@+=#- (no spaces)")
            else:
                identity = f"id:{payout_id}"
        except ValueError as exc:  # TokenRefused too: a token that names nothing, or whose
            problems.append(f"{where}: {exc}")  # contract answers no decimals
            continue
        if identity in seen:
            problems.append(f"{where}: payout_id {payout_id!r} is also row {seen[identity]}'s")
            continue
        seen[identity] = index
        checked.append(Payout(identity=identity, row=index, recipient=recipient, units=units,
                              amount=amount, payout_id=payout_id, energy=energy,
                              token=kind.name))
    if problems:
        shown = problems[:50] + ([f"... and {len(problems) - 50} more"]
                                 if len(problems) > 50 else [])
        raise PayoutInputError(f"{len(problems)} of {len(rows)} payouts cannot be sent "
                               "(nothing was signed):\n  " + "\n  ".join(shown))
    return checked
