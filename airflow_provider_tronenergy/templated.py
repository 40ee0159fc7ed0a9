"""Values as Jinja templates hand them over, read once where they enter a task.

``"{{ params.max_spend_trx }}"`` with no such param renders to ``"None"`` (or ``""``), not
to ``None``. Operators, sensors and triggers must all read that as "not set", or a
filter would match nothing in one path and everything in another.

A rendered number or flag is text too. Money is exact (``Decimal``), counts are whole
numbers, both written in ASCII digits (:mod:`~tronenergy_protocol.numbers`),
flags are true or false and nothing else, and a bad value is a ``ValidationError``
naming the field, raised before any call.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from airflow_provider_tronenergy.client.errors import ValidationError
from tronenergy_protocol.numbers import NumberError, parse_decimal, parse_int

UNSET_TEXT = ("", "None")
"""What a template renders for a missing value (after stripping blanks)."""
TRUE_TEXT = ("1", "true", "yes", "on")
FALSE_TEXT = ("0", "false", "no", "off", "", "none")


def is_unset(value: Any) -> bool:
    """True for ``None``, empty text and the text ``"None"``."""
    return value is None or (isinstance(value, str) and value.strip() in UNSET_TEXT)


def optional_text(value: Any) -> str | None:
    """``None`` when unset (see :func:`is_unset`), otherwise the value as stripped text."""
    return None if is_unset(value) else str(value).strip()


def chosen_none(value: Any) -> str | None:
    """``None`` where a person wrote None: Python ``None``, or the text ``"None"`` that a
    template renders for a None param (:func:`is_unset`); otherwise the stripped text,
    empty included. For a setting where None is a choice (``tron_node_conn_id=None``: no
    node), so that an empty value is not read as that choice: the caller refuses it."""
    if is_unset(value) and str(value).strip():
        return None
    return str(value).strip()


def as_decimal(value: Any, field: str) -> Decimal:
    """Exact, non-negative TRX from a number or plain decimal text; floats via their repr."""
    try:
        number = parse_decimal(value, field)
    except NumberError as exc:
        raise ValidationError(field, exc.reason) from None
    if number < 0:
        raise ValidationError(field, "must be a non-negative amount of TRX")
    return number


def money_given(**values: Any) -> None:
    """Refuse a ``float`` given for money where a DAG hands it to an operator.

    Money parameters (``*_trx``) take ``Decimal``, ``int`` or text such as ``"12.5"``:
    a float literal in a DAG file is already rounded to binary before the operator sees
    it. Raised when the DAG is parsed, naming the parameter.
    """
    for name, value in values.items():
        if isinstance(value, float):
            raise ValueError(f"{name}={value!r}: money is never a float (it cannot hold every "
                             f"amount exactly); give a Decimal, an int or text such as "
                             f"{str(value)!r}")


def as_int(value: Any, field: str) -> int:
    """A whole number from an ``int`` or text in ASCII digits (not Arabic-Indic, full-width...)."""
    try:
        return parse_int(value, field)
    except NumberError as exc:
        raise ValidationError(field, exc.reason) from None


def as_bool(value: Any) -> bool:
    """Lenient: any text but ``1``/``true``/``yes``/``on`` is false (see :func:`as_flag`)."""
    if isinstance(value, str):
        return value.strip().lower() in TRUE_TEXT
    return bool(value)


def as_flag(value: Any, field: str) -> bool:
    """Strict: a typo such as ``"Ture"`` in ``dry_run`` must not mean "spend for real".

    ``True``/``False``, ``None`` (false), ``0``/``1``, and the texts ``1 true yes on``
    and ``0 false no off none`` (any case, or empty: false).
    """
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in TRUE_TEXT:
            return True
        if text in FALSE_TEXT:
            return False
    raise ValidationError(field, f"must be true or false, got {value!r}"[:200])
