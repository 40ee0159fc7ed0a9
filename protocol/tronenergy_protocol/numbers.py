"""Counts and amounts read from text: ASCII digits in plain notation, one rule for the package.

Python's ``int()``, ``Decimal()`` and ``str.isdigit()`` accept every Unicode digit:
``int("\u0666\u0665\u0660\u0660\u0660") == 65000`` (Arabic-Indic digits), and
full-width ones likewise. Text that decides how much is bought must mean what
it shows to a person who reads ASCII, so it is matched against ``[0-9]`` before
any conversion. Exponents (``"1e3"``), ``NaN``,
``Infinity``, ``+`` and ``_`` are refused in text too: a plain amount never needs
them. Numbers that are already ``int``, ``float`` or ``Decimal`` are not text and
keep their value. The operators, the client, the hook and the sandbox (which
refuses such text as the service would) all read numbers through this module.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal
from typing import Final

from tronenergy_protocol.errors import ProtocolError

__all__ = [
    "DECIMAL_TEXT",
    "INTEGER_TEXT",
    "MAX_TEXT_LENGTH",
    "NumberError",
    "is_ascii_digits",
    "parse_decimal",
    "parse_int",
    "units_text",
]

INTEGER_TEXT: Final = re.compile(r"-?[0-9]+")
"""A whole number: ASCII digits, an optional leading ``-``."""
DECIMAL_TEXT: Final = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
"""A plain decimal: ASCII digits, an optional ``.`` and leading ``-``; no exponent."""
MAX_TEXT_LENGTH: Final = 100
"""Longer text is refused before conversion (no count or amount needs 100 characters)."""
_ASCII_WHITESPACE: Final = " \t\n\r\f\v"


class NumberError(ProtocolError):
    """Text that is not a number by the ASCII rule; ``field`` names where it came from."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def is_ascii_digits(text: str) -> bool:
    """True for one or more of ``0-9`` and nothing else (``"\u0666".isdigit()`` is True)."""
    return text.isascii() and text.isdigit()


def _show(text: str) -> str:
    """The text as given, and why a non-ASCII character in it is refused."""
    shown = repr(text if len(text) <= 40 else text[:40] + "...")
    odd = next((char for char in text if not char.isascii()), None)
    if odd is None:
        return shown
    name = unicodedata.name(odd, "unnamed character")
    return f"{shown} (U+{ord(odd):04X} {name} is not ASCII)"


def _text(value: str) -> str:
    return value.strip(_ASCII_WHITESPACE)


def parse_int(value: object, field: str) -> int:
    """An ``int`` as given, or text of ASCII digits (optional ``-``, surrounding spaces).

    ``bool`` and ``float`` are refused: neither is a count someone meant to write.
    """
    if isinstance(value, bool):
        raise NumberError(field, "must be a whole number, not a boolean")
    if isinstance(value, int):
        return int(value)
    if isinstance(value, str):
        text = _text(value)
        if len(text) <= MAX_TEXT_LENGTH and INTEGER_TEXT.fullmatch(text):
            return int(text)
        raise NumberError(field, "must be a whole number written in ASCII digits 0-9, "
                                 f"got {_show(value)}")
    raise NumberError(field, f"must be a whole number, not {type(value).__name__}")


def parse_decimal(value: object, field: str) -> Decimal:
    """An exact, finite ``Decimal`` from a number or plain decimal text.

    A ``float`` is read through its ``repr`` (``0.1`` stays ``0.1``); text must be
    ASCII digits with an optional ``.`` and leading ``-`` (``"12.5"``, ``".5"``),
    so ``"1e3"``, ``"NaN"``, ``"Infinity"``, ``"1_000"`` and non-ASCII digits are refused.
    """
    if isinstance(value, bool):
        raise NumberError(field, "must be a decimal number, not a boolean")
    if isinstance(value, str):
        text = _text(value)
        if len(text) <= MAX_TEXT_LENGTH and DECIMAL_TEXT.fullmatch(text):
            return Decimal(text)
        raise NumberError(field, "must be a plain decimal number in ASCII digits 0-9 "
                                 f"(such as 12.5; no exponent), got {_show(value)}")
    if isinstance(value, float):
        number = Decimal(repr(value))
    elif isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, Decimal):
        number = value
    else:
        raise NumberError(field, f"must be a decimal number, not {type(value).__name__}")
    if not number.is_finite():
        raise NumberError(field, f"must be a finite number, got {number}")
    return number


def units_text(units: int, decimals: int) -> str:
    """Whole units of a token of ``decimals`` as exact decimal text (``1500000``, 6 ->
    ``"1.5"``), by integer arithmetic: a ``Decimal`` context keeps 28 digits, and an
    18-decimal amount, or a uint256 of 78 digits, has more."""
    if decimals < 0:
        raise ValueError(f"decimals must not be negative, got {decimals}")
    sign = "-" if units < 0 else ""
    whole, fraction = divmod(abs(units), 10**decimals)
    digits = str(fraction).rjust(decimals, "0").rstrip("0") if decimals else ""
    return f"{sign}{whole}" + (f".{digits}" if digits else "")
