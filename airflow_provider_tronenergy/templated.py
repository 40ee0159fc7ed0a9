"""Values as Jinja templates hand them over: a missing value arrives as the text ``"None"``.

``"{{ params.max_cost }}"`` with no such param renders to ``"None"`` (or ``""``), not
to ``None``. Operators, sensors and triggers must all read that as "not set", or a
filter would match nothing in one path and everything in another.
"""

from __future__ import annotations

from typing import Any

UNSET_TEXT = ("", "None")
"""What a template renders for a missing value (after stripping blanks)."""


def is_unset(value: Any) -> bool:
    """True for ``None``, empty text and the text ``"None"``."""
    return value is None or (isinstance(value, str) and value.strip() in UNSET_TEXT)


def optional_text(value: Any) -> str | None:
    """``None`` when unset (see :func:`is_unset`), otherwise the value as stripped text."""
    return None if is_unset(value) else str(value).strip()
