"""What makes two purchases "the same purchase", so the journal can refuse the second.

By default a purchase is identified by where it is made (DAG, task, map index)
and what it buys (mode and the resolved parameters), never by the run: a new
run of the same DAG for the same batch is the same purchase. A caller who knows
better (the batch itself, a payout id) names it with ``purchase_key``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, Final

from airflow_provider_tronenergy.errors import TronEnergyProviderError

AUTO_PREFIX: Final = "auto:"
MAX_KEY_LENGTH: Final = 200
_KEY = re.compile(r"[A-Za-z0-9._:/@+=#-]+")


class IdentityError(TronEnergyProviderError, ValueError):
    """A ``purchase_key`` that cannot name a purchase."""


def is_key_text(text: str, max_length: int = MAX_KEY_LENGTH) -> bool:
    """Whether ``text`` may be (part of) a purchase key: 1 to ``max_length`` key characters."""
    return 0 < len(text) <= max_length and _KEY.fullmatch(text) is not None


def explicit_identity(key: Any) -> str:
    """A caller's ``purchase_key``, checked: printable ASCII without spaces, 1-200 characters."""
    if not isinstance(key, str):
        raise IdentityError("purchase_key must be text")
    text = key.strip()
    if not is_key_text(text):
        raise IdentityError(
            f"purchase_key must be 1 to {MAX_KEY_LENGTH} characters of A-Z a-z 0-9 and "
            "._:/@+=#- (no spaces)")
    if text.startswith(AUTO_PREFIX):
        raise IdentityError(f"purchase_key must not start with {AUTO_PREFIX!r} "
                            "(reserved for derived identities)")
    return text


def default_identity(dag_id: str, task_id: str, map_index: int, mode: str,
                     request: dict[str, Any]) -> str:
    """``auto:<dag>.<task>[<map index>]:<digest of mode and parameters>``."""
    canonical = json.dumps(
        {"dag_id": dag_id, "task_id": task_id, "map_index": map_index, "mode": mode,
         "request": request},
        sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:24]
    where = f"{dag_id}.{task_id}" + (f"[{map_index}]" if map_index >= 0 else "")
    identity = f"{AUTO_PREFIX}{where}:{digest}"
    return identity if len(identity) <= 400 else f"{AUTO_PREFIX}{digest}"


def scope_of(dag_id: str, run_id: str, task_id: str, map_index: int) -> str:
    """The task instance that sent a purchase: tries and clears of it share this."""
    return f"{dag_id}/{run_id}/{task_id}/{map_index}"


def task_scope(context: Mapping[str, Any], task_id: str) -> str:
    """The scope of the task instance in a task's ``context``, under ``task_id`` (one order of
    a batch task is its own: ``<task>__order_<n>``); for every operator and the keeper."""
    ti = context["ti"]
    index = getattr(ti, "map_index", -1)
    return scope_of(ti.dag_id, ti.run_id, task_id, int(index) if index is not None else -1)
