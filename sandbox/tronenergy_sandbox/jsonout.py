"""JSON output in which Decimal amounts are written as exact JSON numbers.

``json.dumps`` cannot emit a Decimal as a number without passing through float,
which is exactly what the service's amounts must never do.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

_encode_str = json.encoder.encode_basestring_ascii


def dumps(value: Any) -> str:
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def _write(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_encode_str(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError("non-finite Decimal cannot be written as JSON")
        out.append(format(value.normalize(), "f"))
    elif isinstance(value, dict):
        out.append("{")
        for index, (key, item) in enumerate(value.items()):
            if index:
                out.append(",")
            out.append(_encode_str(str(key)))
            out.append(":")
            _write(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write(item, out)
        out.append("]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")
