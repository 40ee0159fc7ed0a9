"""One purchase's life, top to bottom: decide, quote, guard, claim, place, record.

Purchases spend real TRX, unattended, and Airflow retries tasks, people clear
them and trigger new runs after a worker died. So every purchase asks the
purchase journal (shared by all workers, surviving restarts) whether it was
already placed or may have been; quotes and refuses past ``max_order_trx``,
``max_spend_trx`` (what the key spent, read in the claim's transaction) or the
available balance; writes ``sending`` to the journal before the request leaves
and the order id after; and never guesses after an ambiguous failure.

:class:`Purchase` is that life as a plain object: the single-purchase operators
and the batch purchase build one per purchase and call :meth:`Purchase.run`.
Waiting for the order and asking a person stay with the operators (they are
Airflow's deferrals); the purchase calls ``ask`` when a person is to be asked.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, NoReturn, Protocol

import sqlalchemy as sa

from airflow_provider_tronenergy.client import (
    AmbiguousPurchaseError,
    NotFoundError,
    OrderStatus,
    Price,
    RateLimitedError,
    ServiceUnreachableError,
    TronEnergyClient,
    TronEnergyError,
    ValidationError,
)
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.money.burn import DEFAULT_PRICES, BurnPrices
from airflow_provider_tronenergy.money.guard import (
    MAX_ORDER,
    MAX_SPEND,
    Spent,
    guard_cost,
    guard_spend,
    trusted_answers,
)
from airflow_provider_tronenergy.money.quote import (
    ACTIVATION_COST,
    Quote,
    hours,
    rental_cost,
)
from airflow_provider_tronenergy.purchase.modes import Mode, Spend
from airflow_provider_tronenergy.purchase.outcomes import (
    RESOLVE_COMMAND,
    EnergyCheck,
    EnergyGone,
    PurchaseRetry,
    PurchaseStopped,
    UnknownOutcome,
    journal_errors,
    order_energy,
    unknown_outcome,
    utc,
)
from airflow_provider_tronenergy.purchase.results import (
    amount,
    describe,
    human_line,
    order_result,
    placed_result,
)
from airflow_provider_tronenergy.purchase_journal import (
    Entry,
    IdentityError,
    JournalRace,
    PurchaseJournal,
    SpendCheck,
    Verdict,
    decide,
    open_journal,
)


class Log(Protocol):
    """The task's logger (Airflow's or the standard library's): its lines stay the task's."""

    def info(self, event: Any, *args: Any, **kw: Any) -> Any: ...

    def warning(self, event: Any, *args: Any, **kw: Any) -> Any: ...


Ask = Callable[[UnknownOutcome], NoReturn]
"""Ask a person about an unknown outcome (``on_ambiguous="ask"``); never returns."""


@dataclass(frozen=True)
class Settings:
    """How a purchase may spend: read and checked once, where the task's values enter."""

    max_order: Decimal | None = None
    """``max_order_trx``: what this one purchase may cost (its quote)."""
    max_spend: Decimal | None = None
    """``max_spend_trx``: what the purchases under ``spend_keys`` may cost in all, this one
    included, as the journal holds them (:mod:`~..purchase_journal.spend`)."""
    spend_keys: tuple[str, ...] = ()
    """The keys ``max_spend`` counts under (each, and each with ``:`` and more); empty:
    the purchase's own identity."""
    check_balance: bool = True
    dry_run: bool = False
    on_ambiguous: str = "fail"
    reuse_min_validity: float = 300.0
    keep_journaled: bool = False
    """A plan's purchase re-derived on a rerun (docs/decisions.md "A resized plan meets its
    journaled purchase"): the journaled purchase of its key stands when only its amount
    differs; its result carries ``journaled_request`` and the caller tops up a shortfall
    under a key of its own."""


@contextmanager
def refused(mode: str) -> Iterator[None]:
    """A value that fails its check stops the task for good, naming the mode; nothing bought."""
    try:
        yield
    except (ValidationError, IdentityError) as exc:
        raise PurchaseStopped(f"{mode}: {exc}") from None


def journal_for(mode: str) -> PurchaseJournal:
    """The purchase journal, or a retryable failure that says nothing was bought."""
    try:
        return open_journal()
    except NotRetryable:  # a journal on one host's file under a distributed executor
        raise
    except Exception as exc:
        raise PurchaseRetry(
            f"{mode}: the purchase journal cannot be opened ({exc}); nothing "
            "was bought") from None


@dataclass
class Purchase:
    """One purchase: a mode's checked call, placed at most once under ``identity``.

    ``call`` was built through the client's ``endpoints`` where the values entered,
    which checked them; it is what is sent, and ``request`` (its JSON-safe body) is
    what the journal keeps. A journaled request is only compared, never sent: a
    retry builds its call anew from the values as they enter again.
    """

    mode: Mode
    call: Spend
    client: TronEnergyClient
    journal: PurchaseJournal
    settings: Settings
    identity: str
    explicit: bool
    scope: str
    log: Log
    ask: Ask
    energy_check: EnergyCheck | None = None
    prices: BurnPrices = DEFAULT_PRICES
    """What burning costs, for the saving this purchase reports (a payout plan's chain prices)."""
    price: Price | None = None
    """The service's price for the call's ``rent_time``, read already by the caller (a
    keeper's run): the quote is made from it, not read again."""
    request: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.request = self.mode.request(self.call)

    def run(self) -> dict[str, Any]:
        """Buy, or reuse what an earlier attempt bought, or stop when nobody knows."""
        while True:
            try:
                prior = self._decide()
            except UnknownOutcome as unknown:
                self.ask(unknown)
            if isinstance(prior, dict):
                return prior
            with trusted_answers(self.mode.name):
                quote = self._quote()
                self._guard(quote)
            if self.settings.dry_run:
                check = self._spend_check(quote)
                if check is not None:
                    with journal_errors():
                        check.check(self.journal.spent(check.roots))
                self.log.info("dry run: would buy %s", describe(self.mode, quote))
                return {"mode": self.mode.name, "dry_run": True, "request": self.request,
                        "purchase_key": self.identity,
                        "quote": quote.to_dict() if quote else None}
            try:
                with journal_errors():
                    entry = self.journal.claim(
                        self.identity, prior, scope=self.scope, explicit_key=self.explicit,
                        mode=self.mode.name, target_address=self.mode.target,
                        description=describe(self.mode, quote), request=self.request,
                        rent_hours=Decimal(self.request["rent_time"]),
                        quoted_energy=quote.energy if quote else None,
                        quoted_cost=quote.total if quote else None,
                        limit=self._spend_check(quote))
            except JournalRace:
                self.log.warning("another worker is placing purchase %s right now; "
                                 "reading the journal again", self.identity)
                continue
            return self._place(entry, quote)

    # -- decide: what the journal says an earlier attempt did -----------------------------

    def _decide(self) -> Entry | dict[str, Any] | None:
        """The newest attempt to buy after, or the reused result."""
        journal, identity = self.journal, self.identity
        while True:
            with journal_errors():
                latest = journal.latest(identity)
            decision = decide(latest, scope=self.scope, now=time.time(),
                              min_validity=self.settings.reuse_min_validity)
            entry = decision.entry
            if decision.verdict is Verdict.BUY:
                if entry is None or entry.scope != self.scope:
                    self._refuse_other_purchase_in_scope()
                return entry
            assert entry is not None
            if decision.verdict is Verdict.UNKNOWN:
                if self.settings.on_ambiguous == "ask":
                    raise UnknownOutcome(entry)
                if self.settings.on_ambiguous != "rebuy":
                    raise PurchaseStopped(unknown_outcome(entry))
                self.log.warning("purchase %s sent at %s has an unknown outcome; "
                                 "on_ambiguous='rebuy': buying again", identity,
                                 utc(entry.sent_at))
                with journal_errors():
                    journal.abandon(entry, "on_ambiguous='rebuy'")
                continue
            if entry.request != self.request and not self._stands(entry):
                raise PurchaseStopped(
                    f"purchase {identity} already placed order {entry.order_id} for different "
                    f"parameters ({entry.request}); refusing to reuse it for {self.request} or "
                    "to buy twice under one purchase_key. Use a new key for a new purchase.")
            reused = self._reuse(entry)
            if reused is not None:
                return reused

    def _stands(self, entry: Entry) -> bool:
        """Whether the journaled purchase of this key stands for a request sized anew (only
        its amount differs, ``keep_journaled``): reused as recorded, never bought again."""
        amounts = ("energy_amount", "count")
        if not self.settings.keep_journaled or set(entry.request) != set(self.request):
            return False
        if any(entry.request[k] != self.request[k] for k in self.request if k not in amounts):
            return False
        self.log.info("purchase %s was placed as %s; this run sizes it %s: the journaled "
                      "purchase stands", entry.identity, amount(entry.request),
                      amount(self.request))
        return True

    def _refuse_other_purchase_in_scope(self) -> None:
        """A retry whose parameters changed must not buy a second, different purchase."""
        with journal_errors():
            active = self.journal.active_in_scope(self.scope)
        for other in active:
            if other.identity != self.identity:
                raise PurchaseStopped(
                    f"an earlier try of this task instance sent a different purchase "
                    f"({other.description}, {other.state.value}, journal identity "
                    f"{other.identity}); refusing to buy another in the same task instance. "
                    "Use a new run.")

    def _reuse(self, entry: Entry) -> dict[str, Any] | None:
        """The earlier order's result, or None when it turned out to buy nothing."""
        assert entry.order_id is not None
        try:
            order = self.client.get_order(entry.order_id)
        except NotFoundError:
            raise PurchaseStopped(
                f"purchase {entry.identity} is recorded as order {entry.order_id}, which the "
                "service does not know. Nothing was bought now. If that order id was entered "
                "by hand, check it in the service's console.") from None
        except TronEnergyError as exc:
            raise PurchaseRetry(f"cannot look up order {entry.order_id}: {exc}") from None
        if order.status in (OrderStatus.FAILED, OrderStatus.CANCELLED):
            self.log.info("order %s of purchase %s ended %s: it bought nothing; buying anew",
                          entry.order_id, entry.identity, order.status.value)
            with journal_errors():
                self.journal.mark_ended(entry, order.status.value)
            return None
        if self.energy_check is not None:
            missing = self.energy_check(entry, order)
            if missing:
                raise EnergyGone(entry, order_energy(order, entry), missing)
        if entry.claimed_by is None:
            with journal_errors():
                claimed = self.journal.claim_reuse(entry, self.scope)
            if not claimed:
                return None  # another run took it first: decide again
        self.log.info("order %s (purchase %s, sent %s) is reused: nothing more is bought",
                      entry.order_id, entry.identity, utc(entry.sent_at))
        base = entry.result or order_result(self.mode, order, entry, self.prices)
        resized = {"journaled_request": entry.request} if entry.request != self.request else {}
        return {**base, "status": order.status.value, "tx_hash": order.tx_hash or "",
                "purchase_key": entry.identity, "reused": True, **resized}

    # -- quote and guard -----------------------------------------------------------------

    def _quote(self) -> Quote | None:
        rent_time = Decimal(self.request["rent_time"])
        try:
            price = self.price or self.client.get_price(rent_time)
        except ValidationError:
            self.log.warning("the price endpoint does not quote %s rentals; no quote",
                             hours(rent_time))
            return None
        energy, activates = self.mode.quote_energy(self.client, self.request,
                                                   price.energy_per_transfer)
        if not price.min_energy <= energy <= price.max_energy:
            raise PurchaseStopped(
                f"{self.mode.name}: {energy:,} energy is outside what the service sells "
                f"({price.min_energy:,} to {price.max_energy:,}); nothing bought")
        return Quote(
            energy=energy,
            rent_time=rent_time,
            price_per_10k=price.price_per_10k,
            energy_cost=rental_cost(energy, price.price_per_10k),
            activation_cost=ACTIVATION_COST if activates else Decimal(0),
            burn_sun_per_energy=self.prices.energy_sun,
        )

    def _guard(self, quote: Quote | None) -> None:
        settings = self.settings
        if quote is None:
            for name, limit in ((MAX_ORDER, settings.max_order), (MAX_SPEND, settings.max_spend)):
                if limit is not None:
                    raise PurchaseStopped(
                        f"{name} is set but {self.mode.name} for "
                        f"{hours(Decimal(self.request['rent_time']))} cannot be quoted (the "
                        "price endpoint does not offer that rent_time); nothing bought")
            return
        guard_cost(self.client, quote.total, what=describe(self.mode, quote),
                   ceiling=settings.max_order, check_balance=settings.check_balance)

    def _spend_check(self, quote: Quote | None) -> SpendCheck | None:
        """``max_spend_trx`` at the claim: what the keys spent, and this quote on top."""
        limit = self.settings.max_spend
        if limit is None or quote is None:  # unquoted with a limit: refused in _guard
            return None
        roots = self.settings.spend_keys or (self.identity,)
        key = " or ".join(f"purchase key {root}" for root in roots[:3]) + (
            f" and {len(roots) - 3} more keys" if len(roots) > 3 else "")

        def check(spent: Spent) -> None:
            guard_spend(spent, quote.total, limit=limit, key=key,
                        what=f"this order ({describe(self.mode, quote)})")

        return SpendCheck(roots, check)

    # -- place and record ----------------------------------------------------------------

    def _place(self, entry: Entry, quote: Quote | None) -> dict[str, Any]:
        try:
            placed = self.mode.place(self.client, self.call)
        except AmbiguousPurchaseError as exc:
            if self.settings.on_ambiguous == "ask":
                self.ask(UnknownOutcome(entry, str(exc)))
            message = f"{exc}. {unknown_outcome(entry)}"
            if self.settings.on_ambiguous == "rebuy":
                raise PurchaseRetry(
                    message + " on_ambiguous='rebuy': a retry buys again.") from None
            raise PurchaseStopped(message) from None
        except (RateLimitedError, ServiceUnreachableError) as exc:
            with journal_errors():
                self.journal.record_refused(entry, str(exc))
            raise PurchaseRetry(f"{self.mode.name}: nothing was bought ({exc})") from None
        except TronEnergyError as exc:
            with journal_errors():
                self.journal.record_refused(entry, str(exc))
            raise PurchaseStopped(
                f"{self.mode.name} refused, nothing bought: {exc}") from None
        result = {**placed_result(self.mode, placed, quote, self.request, self.prices),
                  "purchase_key": entry.identity}
        try:
            self.journal.record_placed(entry, placed.order_id, result)
        except sa.exc.SQLAlchemyError as exc:  # bought, but the journal did not hear it
            raise PurchaseStopped(
                f"bought: order {placed.order_id} ({human_line(result)}), but the "
                f"journal could not record it ({type(exc).__name__}). Resolve it: "
                f"{RESOLVE_COMMAND} '{entry.identity}' --order-id {placed.order_id}"
            ) from None
        self.log.info(human_line(result))
        return result
