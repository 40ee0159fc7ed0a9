"""The record that stops an Airflow retry from buying the same energy twice.

Before a purchase is sent, its *intent* is written to the task's
``task_state_store`` (Airflow >= 3.3, kept across tries of one task instance);
right after the service answers, the order id is added. A later try reads it:

- order id present: the order exists; reuse it, buy nothing;
- intent without order id: an earlier try sent a purchase and never learned
  whether it went through (worker died mid-request, or the answer was lost):
  refuse to guess, unless the user chose ``on_ambiguous="rebuy"``;
- nothing: first try, go ahead.

Without ``task_state_store`` (Airflow < 3.3) there is no record across tries;
the operator then relies on the client, which never resends an ambiguous
purchase, and says so in the log.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

LEDGER_KEY = "tronenergy_purchase"


class StateStore(Protocol):
    def get(self, key: str, default: Any = None) -> Any: ...

    def set(self, key: str, value: Any) -> None: ...

    def delete(self, key: str) -> None: ...


@dataclass(frozen=True)
class PriorAttempt:
    request: dict[str, Any]
    sent_at: float
    order_id: str | None
    result: dict[str, Any] | None


class PurchaseLedger:
    def __init__(self, store: StateStore | None, key: str = LEDGER_KEY) -> None:
        self.store = store
        self.key = key

    @property
    def durable(self) -> bool:
        return self.store is not None

    def prior(self) -> PriorAttempt | None:
        if self.store is None:
            return None
        record = self.store.get(self.key)
        if not isinstance(record, dict) or "request" not in record:
            return None
        return PriorAttempt(
            request=dict(record["request"]),
            sent_at=float(record.get("sent_at", 0)),
            order_id=record.get("order_id"),
            result=record.get("result"),
        )

    def record_intent(self, request: dict[str, Any]) -> None:
        if self.store is not None:
            self.store.set(self.key, {"request": request, "sent_at": time.time()})

    def record_order(self, request: dict[str, Any], order_id: str,
                     result: dict[str, Any]) -> None:
        if self.store is not None:
            self.store.set(self.key, {"request": request, "sent_at": time.time(),
                                      "order_id": order_id, "result": result})

    def forget(self) -> None:
        """The service refused the purchase outright: nothing was bought, nothing to remember."""
        if self.store is not None:
            self.store.delete(self.key)
