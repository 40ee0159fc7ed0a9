"""Everything the Energy page shows for a period, as one JSON-safe dict.

The stores are the provider's own, found as every other part finds them (``Stores.
configured``: the environment, ``[tronenergy]`` options, else SQLite in ``$AIRFLOW_HOME``);
nothing here reads a connection, so no secret is ever in reach. The ``payout batch
ready`` events are passed in (:mod:`.events` reads them from Airflow's database).
Each section is timed (``timings_ms``): the page must stay fast on a year of data.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeVar

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.deposits import DepositLedger
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.payout.journal import PayoutJournal
from airflow_provider_tronenergy.purchase_journal.store import PurchaseJournal
from airflow_provider_tronenergy.ui.arrivals import (
    conflicts,
    consumer_lag,
    deposit_claims,
    stored_per_hour,
)
from airflow_provider_tronenergy.ui.batches import BatchEvent, add_activations, batch_rows
from airflow_provider_tronenergy.ui.chain import chain_use
from airflow_provider_tronenergy.ui.period import Period, utc_text
from airflow_provider_tronenergy.ui.purchases import Day, orders_by_state, purchase_days
from airflow_provider_tronenergy.ui.tokens import token_facts, token_use
from airflow_provider_tronenergy.ui.waiting import waiting_payouts, waiting_purchases
from tronenergy_protocol.explorer import Explorer

T = TypeVar("T")


@dataclass(frozen=True)
class Stores:
    """The stores the page reads (the deposit ledger is optional: not every deployment
    credits deposits)."""

    journal: PurchaseJournal
    payouts: PayoutJournal
    callbacks: CallbackStore
    ledger: DepositLedger | None = None

    @classmethod
    def configured(cls) -> Stores:
        """The stores at the URLs the workers use (each store's ``Location`` rule)."""
        return cls(PurchaseJournal(), PayoutJournal(), CallbackStore(pool_size=2),
                   DepositLedger())

    def sources(self) -> dict[str, str | None]:
        """Where each store is, passwords hidden: what the page says it read."""
        return {"purchase_journal": self.journal.safe_url,
                "payout_journal": self.payouts.safe_url,
                "callback_store": self.callbacks.safe_url,
                "deposit_ledger": (sqlstore.safe_url(self.ledger.url)
                                   if self.ledger is not None else None)}

    def close(self) -> None:
        """Release every pool."""
        self.journal.close()
        self.payouts.close()
        self.callbacks.close()
        if self.ledger is not None:
            self.ledger.close()


def page_data(stores: Stores, period: Period, events: Sequence[BatchEvent], *,
              now_ms: int | None = None, sent_tokens: Sequence[Any] = (),
              explorer: Explorer | None = None) -> dict[str, Any]:
    """The page's figures for ``period`` (``events``: its ``payout batch ready`` events;
    ``sent_tokens``: the newest ``payouts sent`` events' ``tokens``, :mod:`.tokens`;
    ``explorer``: where token links lead)."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    timings: dict[str, float] = {}

    def timed(name: str, read: Callable[[], T]) -> T:
        started = time.perf_counter()
        try:
            return read()
        finally:
            timings[name] = round((time.perf_counter() - started) * 1000, 1)

    days = timed("spend", lambda: purchase_days(stores.journal, period))
    add_activations(days, events, period)
    spend = _spend(period, days)
    data = {
        "period": period.to_dict(), "generated_at": utc_text(now),
        "spend": spend,
        "orders_by_state": timed("orders", lambda: orders_by_state(stores.journal, period)),
        "chain": timed("chain", lambda: chain_use(stores.payouts, period,
                                                   spend["totals"]["energy"])),
        "waiting": {
            "purchases": timed("waiting_purchases",
                               lambda: waiting_purchases(stores.journal, now)),
            "payouts": timed("waiting_payouts", lambda: waiting_payouts(stores.payouts)),
        },
        "deposits": {
            **timed("stored_per_hour", lambda: stored_per_hour(stores.callbacks, period)),
            "conflicts": timed("conflicts", lambda: conflicts(stores.callbacks, period)),
            "lag": timed("lag", lambda: consumer_lag(stores.callbacks, stores.ledger, now)),
            "claims": timed("claims", lambda: deposit_claims(stores.ledger)),
        },
        "tokens": timed("tokens", lambda: token_use(stores.payouts, period,
                                                    token_facts(sent_tokens), explorer)),
        "batches": timed("batches", lambda: batch_rows(events, stores.payouts)),
        "sources": stores.sources(),
    }
    data["timings_ms"] = {**timings, "total": round(sum(timings.values()), 1)}
    return data


def _spend(period: Period, days: list[Day]) -> dict[str, Any]:
    rows = [day.to_dict(d.isoformat()) for day, d in zip(days, period.days(), strict=True)]
    sums = {key: sum((Decimal(row[key]) for row in rows), Decimal(0))
            for key in ("energy_trx", "activation_trx", "spent_trx", "burn_trx", "saving_trx")}
    return {"days": rows, "totals": {
        **{key: text(value) for key, value in sums.items()},
        "orders": sum(row["orders"] for row in rows),
        "energy": sum(row["energy"] for row in rows),
        "activations": sum(row["activations"] for row in rows),
        "without_figures": sum(row["without_figures"] for row in rows)}}
