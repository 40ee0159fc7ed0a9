"""Which batch a run's energy purchases belong to: the batch's key and each order's.

:func:`batch_key` names a batch by its sender, its ``batch_id`` (given, or the run's:
:func:`~.batch.run_batch_id`) and a hash of its rows; :func:`keyed` gives each planned
order a ``purchase_key`` under it. The purchase journal knows an order by that key, so
a retry, a clear or a rerun of the same batch reuses its still-valid orders, and the
next period's identical payroll (another ``batch_id``) buys its own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any


def batch_key(sender: str, batch_id: str, payouts: Sequence[Mapping[str, str]]) -> str:
    """Names this batch's purchases: the same batch (sender, ``batch_id``, rows) reuses its
    still-valid orders; another period's identical rows are another batch."""
    rows = json.dumps([[p["recipient"], p["amount"]] for p in payouts], separators=(",", ":"))
    return f"payout:{sender}:{batch_id}:{hashlib.sha256(rows.encode()).hexdigest()[:16]}"


def keyed(sender: str, key: str, tag: str,
          orders: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``orders`` for the ``sender``'s wallet, each with its ``purchase_key``:
    ``<key>:<tag><index>`` (``tag``: ``count`` or ``buy``)."""
    return [{**order, "target_address": sender, "purchase_key": f"{key}:{tag}{i}"}
            for i, order in enumerate(orders)]
