"""The wire format of a call: JSON with exact decimals, query and path text, answer headers.

Pure functions, shared by ``core`` (which builds and reads calls) and ``endpoints``
(which builds each endpoint's path and query); no transport, no secret.
"""

from __future__ import annotations

import email.utils
import json
import math
from collections.abc import Mapping
from datetime import timezone
from decimal import Decimal
from typing import Any
from urllib.parse import quote, urlsplit

from airflow_provider_tronenergy.client.errors import ValidationError

_PATH_SAFE = "/:@!$&'()*+,;=~"


def encode_json(value: Any) -> bytes:
    """Compact JSON in which a Decimal is written as an exact number, never via float."""
    out: list[str] = []
    _write_json(value, out)
    return "".join(out).encode()


def _write_json(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(json.dumps(value))
    elif isinstance(value, int):
        out.append(str(int(value)))
    elif isinstance(value, (Decimal, float)):
        if not (value.is_finite() if isinstance(value, Decimal) else math.isfinite(value)):
            raise ValidationError("json", "non-finite numbers cannot be sent as JSON")
        out.append(format(value, "f") if isinstance(value, Decimal) else repr(value))
    elif isinstance(value, Mapping):
        out.append("{")
        for index, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise ValidationError("json", "object keys must be strings")
            out.append("," if index else "")
            out.append(json.dumps(key))
            out.append(":")
            _write_json(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for index, item in enumerate(value):
            out.append("," if index else "")
            _write_json(item, out)
        out.append("]")
    else:
        raise ValidationError("json", f"cannot send a {type(value).__name__} as JSON")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def load_json(body: bytes) -> Any:
    """Parse an answer with exact decimals; raises ValueError on anything that is not JSON."""
    try:
        return json.loads(body, parse_float=Decimal, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def query_value(value: Any, field: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    raise ValidationError(field, f"cannot send a {type(value).__name__} as a query value")


def query_items(params: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    """Query pairs in the caller's order; None values are left out, sequences repeat."""
    if not params:
        return ()
    if not isinstance(params, Mapping):
        raise ValidationError("params", "must be a mapping")
    items: list[tuple[str, str]] = []
    for key, value in params.items():
        if not isinstance(key, str) or not key:
            raise ValidationError("params", "keys must be non-empty strings")
        values = value if isinstance(value, (list, tuple)) else [value]
        items.extend((key, query_value(v, f"params.{key}")) for v in values if v is not None)
    return tuple(items)


def relative_path(path: Any) -> str:
    """A caller-given path below the base URL, percent-encoded as it will be sent."""
    if not isinstance(path, str) or not path.strip("/"):
        raise ValidationError("path", "must be a non-empty path such as /energy/rent")
    if "://" in path or path.startswith("//"):
        raise ValidationError("path", "must be relative to the base URL, not a full URL")
    if "?" in path or "#" in path:
        raise ValidationError("path", "must not contain '?' or '#'; pass the query as params")
    if not path.startswith("/"):
        path = "/" + path
    if any(segment in (".", "..") for segment in path.split("/")):
        raise ValidationError("path", "must not contain '.' or '..' segments")
    return quote(path, safe=_PATH_SAFE)


def path_segment(value: str) -> str:
    return quote(value, safe="")


def redirect_message(status: int, headers: Mapping[str, str]) -> str:
    """A redirect, named by its status and the host it points to (never its path or query).

    Redirects are never followed: the second host would receive the credentials.
    """
    location = headers.get("Location") or ""
    try:
        host = urlsplit(location).hostname or "the same host"
    except ValueError:
        host = "an unreadable Location"
    return f"answered HTTP {status}, a redirect to {host[:100]}: redirects are not followed"


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP date); None if unreadable."""
    if value is None:
        return None
    text = value.strip()[:64]
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = when.timestamp() - now
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)
