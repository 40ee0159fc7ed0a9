"""The life every purchase mode shares: validate, consult the journal, quote, guard, buy, wait.

Purchases spend real TRX, unattended, and Airflow retries tasks, people clear
them and trigger new runs after a worker died. So every purchase: validates its
input before any call; asks the purchase journal (shared by all workers,
surviving restarts) whether this purchase was already placed or may have been;
quotes and refuses past ``max_cost_trx`` or the available balance; writes
``sending`` to the journal before the request leaves and the order id after;
and never guesses after an ambiguous failure.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from decimal import Decimal
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import sqlalchemy as sa
from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    BaseOperator,
    conf,
)

from airflow_provider_tronenergy.client import (
    AmbiguousPurchaseError,
    InvalidRequestError,
    NotFoundError,
    Order,
    OrderStatus,
    Purchase,
    RateLimitedError,
    ServiceUnreachableError,
    SmartPurchase,
    TronEnergyClient,
    TronEnergyError,
    ValidationError,
    ValidationRules,
)
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.journal import (
    Entry,
    IdentityError,
    JournalRace,
    PurchaseJournal,
    Verdict,
    decide,
    default_identity,
    explicit_identity,
    open_journal,
    scope_of,
)
from airflow_provider_tronenergy.operators.params import as_decimal, as_flag
from airflow_provider_tronenergy.operators.quote import (
    ACTIVATION_COST,
    Quote,
    burn_cost,
    hours,
    rental_cost,
    text,
    trx,
)

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context

ON_AMBIGUOUS = ("fail", "rebuy")
RESOLVE_COMMAND = "tronenergy-purchases resolve"
# A purchase sent this recently may still be waiting for its answer in another worker.
IN_FLIGHT_SECONDS = 120


def _utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


class EnergyPurchaseOperator(BaseOperator):
    """Shared life of the four purchase modes: validate, journal, quote, guard, buy, wait.

    :param tronenergy_conn_id: connection of type ``tronenergy``.
    :param rent_time: hours the energy is rented for (purchases accept 0.25, 1, 24).
    :param max_cost_trx: refuse, before buying, when the quoted cost is higher.
    :param check_balance: refuse, before buying, when the available balance is short.
    :param dry_run: quote and plan only; nothing is bought.
    :param purchase_key: names the purchase across runs (templated): a later run with
        the same key reuses a still-valid order instead of buying. Default: derived
        from DAG, task, map index, mode and parameters (never the run), which stops
        a new run only while an earlier attempt's outcome is unknown.
    :param reuse_min_validity: seconds of rental an order must have left to be reused
        instead of buying anew.
    :param wait_for_completion: wait until the order is terminal (success, failed,
        cancelled); a failed or cancelled order fails the task.
    :param deferrable: wait in the triggerer instead of a worker slot.
    :param poll_interval: seconds between order polls while waiting.
    :param wait_timeout: seconds to wait for a terminal order before failing.
    :param on_ambiguous: what an attempt does when an earlier one may or may not have
        bought: ``"fail"`` (default: stop and name the resolve command) or ``"rebuy"``.
    """

    mode: ClassVar[str] = ""
    template_fields: Sequence[str] = ("rent_time", "max_cost_trx", "dry_run_mode",
                                      "purchase_key")
    ui_color = "#f9e79f"

    def __init__(
        self,
        *,
        tronenergy_conn_id: str = TronEnergyHook.default_conn_name,
        rent_time: Decimal | float | int | str = 1,
        max_cost_trx: Decimal | float | int | str | None = None,
        check_balance: bool = True,
        dry_run: bool | str = False,
        purchase_key: str | None = None,
        reuse_min_validity: float = 300.0,
        wait_for_completion: bool = False,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        poll_interval: float = 5.0,
        wait_timeout: float = 3600.0,
        on_ambiguous: str = "fail",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if on_ambiguous not in ON_AMBIGUOUS:
            raise ValueError(f"on_ambiguous must be one of {ON_AMBIGUOUS}, not {on_ambiguous!r}")
        self.tronenergy_conn_id = tronenergy_conn_id
        self.rent_time = rent_time
        self.max_cost_trx = max_cost_trx
        self.check_balance = check_balance
        # BaseOperator.dry_run() is a method; the flag lives beside it.
        self.dry_run_mode = dry_run
        self.purchase_key = purchase_key
        self.reuse_min_validity = reuse_min_validity
        self.wait_for_completion = wait_for_completion
        self.deferrable = deferrable
        self.poll_interval = poll_interval
        self.wait_timeout = wait_timeout
        self.on_ambiguous = on_ambiguous

    # -- what each mode defines ------------------------------------------------------------

    @property
    def target(self) -> str:
        """The address that receives the energy."""
        raise NotImplementedError

    def request(self, rules: ValidationRules) -> dict[str, Any]:
        """The purchase's validated parameters, JSON-safe (they are journaled)."""
        raise NotImplementedError

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        """(energy to buy, whether an activation is part of the purchase)."""
        raise NotImplementedError

    def place(self, client: TronEnergyClient, request: dict[str, Any]) -> Purchase | SmartPurchase:
        """Send the purchase: the one call that spends TRX."""
        raise NotImplementedError

    # -- the shared life -----------------------------------------------------------------

    @cached_property
    def hook(self) -> TronEnergyHook:
        """One hook (one client, one connection pool) for the whole task."""
        return TronEnergyHook(tronenergy_conn_id=self.tronenergy_conn_id)

    def execute(self, context: Context) -> dict[str, Any]:
        """Buy, or reuse what an earlier attempt bought, or stop when nobody knows."""
        try:
            return self._execute(context)
        finally:
            self.hook.close()

    def _execute(self, context: Context) -> dict[str, Any]:
        client = self.hook.get_conn()
        try:
            request = self.request(client.rules)
            max_cost = (None if self.max_cost_trx in (None, "", "None")
                        else as_decimal(self.max_cost_trx, "max_cost_trx"))
            identity, explicit = self._identity(context, request)
            dry_run = as_flag(self.dry_run_mode, "dry_run")
        except (ValidationError, IdentityError) as exc:
            raise AirflowFailException(f"{self.mode}: {exc}") from None
        scope = _scope(context)
        journal = self._journal()
        while True:
            prior = self._decide(journal, client, identity, scope, request)
            if isinstance(prior, dict):
                return self._finish(prior, context)
            quote = self._quote(client, request)
            self._guard(client, request, quote, max_cost)
            if dry_run:
                self.log.info("dry run: would buy %s", self._describe_quote(quote))
                return {"mode": self.mode, "dry_run": True, "request": request,
                        "purchase_key": identity,
                        "quote": quote.to_dict() if quote else None}
            try:
                with _journal_errors():
                    entry = journal.claim(
                        identity, prior, scope=scope, explicit_key=explicit, mode=self.mode,
                        target_address=self.target, description=self._describe_quote(quote),
                        request=request, rent_hours=Decimal(request["rent_time"]))
            except JournalRace:
                self.log.warning("another worker is placing purchase %s right now; "
                                 "reading the journal again", identity)
                continue
            return self._buy(journal, entry, client, request, quote, context)

    def _identity(self, context: Context, request: dict[str, Any]) -> tuple[str, bool]:
        if self.purchase_key not in (None, "", "None"):
            return explicit_identity(self.purchase_key), True
        ti = context["ti"]
        return default_identity(ti.dag_id, ti.task_id, _map_index(ti), self.mode, request), False

    def _journal(self) -> PurchaseJournal:
        try:
            return open_journal()
        except Exception as exc:
            raise AirflowException(
                f"{self.mode}: the purchase journal cannot be opened ({exc}); nothing "
                "was bought") from None

    def _decide(self, journal: PurchaseJournal, client: TronEnergyClient, identity: str,
                scope: str, request: dict[str, Any]) -> Entry | dict[str, Any] | None:
        """The newest attempt to buy after, or the reused result."""
        while True:
            with _journal_errors():
                latest = journal.latest(identity)
            decision = decide(latest, scope=scope, now=time.time(),
                              min_validity=self.reuse_min_validity)
            entry = decision.entry
            if decision.verdict is Verdict.BUY:
                if entry is None or entry.scope != scope:
                    self._refuse_other_purchase_in_scope(journal, identity, scope)
                return entry
            assert entry is not None
            if decision.verdict is Verdict.UNKNOWN:
                if self.on_ambiguous != "rebuy":
                    raise AirflowFailException(_unknown_outcome(entry))
                self.log.warning("purchase %s sent at %s has an unknown outcome; "
                                 "on_ambiguous='rebuy': buying again", identity,
                                 _utc(entry.sent_at))
                with _journal_errors():
                    journal.abandon(entry, "on_ambiguous='rebuy'")
                continue
            if entry.request != request:
                raise AirflowFailException(
                    f"purchase {identity} already placed order {entry.order_id} for different "
                    f"parameters ({entry.request}); refusing to reuse it for {request} or to "
                    "buy twice under one purchase_key. Use a new key for a new purchase.")
            reused = self._reuse(journal, client, entry, scope)
            if reused is not None:
                return reused

    def _refuse_other_purchase_in_scope(self, journal: PurchaseJournal, identity: str,
                                        scope: str) -> None:
        """A retry whose parameters changed must not buy a second, different purchase."""
        with _journal_errors():
            active = journal.active_in_scope(scope)
        for other in active:
            if other.identity != identity:
                raise AirflowFailException(
                    f"an earlier try of this task instance sent a different purchase "
                    f"({other.description}, {other.state.value}, journal identity "
                    f"{other.identity}); refusing to buy another in the same task instance. "
                    "Use a new run.")

    def _reuse(self, journal: PurchaseJournal, client: TronEnergyClient, entry: Entry,
               scope: str) -> dict[str, Any] | None:
        """The earlier order's result, or None when it turned out to buy nothing."""
        assert entry.order_id is not None
        try:
            order = client.get_order(entry.order_id)
        except NotFoundError:
            raise AirflowFailException(
                f"purchase {entry.identity} is recorded as order {entry.order_id}, which the "
                "service does not know. Nothing was bought now. If that order id was entered "
                "by hand, check it in the service's console.") from None
        except TronEnergyError as exc:
            raise AirflowException(f"cannot look up order {entry.order_id}: {exc}") from None
        if order.status in (OrderStatus.FAILED, OrderStatus.CANCELLED):
            self.log.info("order %s of purchase %s ended %s: it bought nothing; buying anew",
                          entry.order_id, entry.identity, order.status.value)
            with _journal_errors():
                journal.mark_ended(entry, order.status.value)
            return None
        if entry.claimed_by is None:
            with _journal_errors():
                claimed = journal.claim_reuse(entry, scope)
            if not claimed:
                return None  # another run took it first: decide again
        self.log.info("order %s (purchase %s, sent %s) is reused: nothing more is bought",
                      entry.order_id, entry.identity, _utc(entry.sent_at))
        base = entry.result or self._result_of_order(order, entry)
        return {**base, "status": order.status.value, "tx_hash": order.tx_hash or "",
                "purchase_key": entry.identity, "reused": True}

    def _result_of_order(self, order: Order, entry: Entry) -> dict[str, Any]:
        energy = order.energy_amount
        cost = order.cost if order.cost is not None else Decimal(0)
        return {"mode": self.mode, "order_id": order.order_id,
                "target_address": order.target_address or entry.target_address,
                "energy_amount": energy, "rent_time": entry.request.get("rent_time"),
                "cost": text(cost), "burn_cost": text(burn_cost(energy)) if energy else None,
                "saving": text(burn_cost(energy) - cost) if energy else None,
                "quote": None, "dry_run": False}

    def _buy(self, journal: PurchaseJournal, entry: Entry, client: TronEnergyClient,
             request: dict[str, Any], quote: Quote | None, context: Context) -> dict[str, Any]:
        try:
            purchase = self.place(client, request)
        except AmbiguousPurchaseError as exc:
            message = f"{exc}. {_unknown_outcome(entry)}"
            if self.on_ambiguous == "rebuy":
                raise AirflowException(
                    message + " on_ambiguous='rebuy': a retry buys again.") from None
            raise AirflowFailException(message) from None
        except (RateLimitedError, ServiceUnreachableError) as exc:
            with _journal_errors():
                journal.record_refused(entry, str(exc))
            raise AirflowException(f"{self.mode}: nothing was bought ({exc})") from None
        except TronEnergyError as exc:
            with _journal_errors():
                journal.record_refused(entry, str(exc))
            raise AirflowFailException(f"{self.mode} refused, nothing bought: {exc}") from None
        result = {**self._result(purchase, request, quote), "purchase_key": entry.identity}
        try:
            journal.record_placed(entry, purchase.order_id, result)
        except sa.exc.SQLAlchemyError as exc:  # bought, but the journal did not hear it
            raise AirflowFailException(
                f"bought: order {purchase.order_id} ({self._human_line(result)}), but the "
                f"journal could not record it ({type(exc).__name__}). Resolve it: "
                f"{RESOLVE_COMMAND} '{entry.identity}' --order-id {purchase.order_id}"
            ) from None
        self.log.info(self._human_line(result))
        return self._finish(result, context)

    def _quote(self, client: TronEnergyClient, request: dict[str, Any]) -> Quote | None:
        rent_time = Decimal(request["rent_time"])
        try:
            price = client.get_price(rent_time)
        except ValidationError:
            self.log.warning("the price endpoint does not quote %s rentals; no quote",
                             hours(rent_time))
            return None
        energy, activates = self.quote_energy(client, request, price.energy_per_transfer)
        return Quote(
            energy=energy,
            rent_time=rent_time,
            price_per_10k=price.price_per_10k,
            energy_cost=rental_cost(energy, price.price_per_10k),
            activation_cost=ACTIVATION_COST if activates else Decimal(0),
        )

    def _guard(self, client: TronEnergyClient, request: dict[str, Any], quote: Quote | None,
               max_cost: Decimal | None) -> None:
        if max_cost is not None:
            if quote is None:
                raise AirflowFailException(
                    f"max_cost_trx is set but {self.mode} for "
                    f"{hours(Decimal(request['rent_time']))} cannot be quoted (the price "
                    "endpoint does not offer that rent_time); nothing bought")
            if quote.total > max_cost:
                raise AirflowFailException(
                    f"quoted cost {quote.total} TRX exceeds max_cost_trx {max_cost} TRX "
                    f"({self._describe_quote(quote)}); nothing bought")
        if self.check_balance and quote is not None:
            available = client.get_account().available_balance
            if available < quote.total:
                raise AirflowFailException(
                    f"available balance {available} TRX is short by "
                    f"{quote.total - available} TRX for {self._describe_quote(quote)}; "
                    "nothing bought")

    def _describe_quote(self, quote: Quote | None) -> str:
        if quote is None:
            return f"{self.mode} for {self.target} (cost unknown)"
        extra = f" + activation {quote.activation_cost} TRX" if quote.activation_cost else ""
        return (f"{self.mode} {quote.energy:,} energy for {self.target} "
                f"({hours(quote.rent_time)}) at {quote.energy_cost} TRX{extra}")

    def _result(self, purchase: Purchase | SmartPurchase, request: dict[str, Any],
                quote: Quote | None) -> dict[str, Any]:
        energy = purchase.energy_amount or (quote.energy if quote else None)
        result: dict[str, Any] = {
            "mode": self.mode,
            "order_id": purchase.order_id,
            "status": OrderStatus.PENDING.value,
            "tx_hash": getattr(purchase, "tx_hash", "") or "",
            "target_address": self.target,
            "energy_amount": energy,
            "rent_time": request["rent_time"],
            "cost": text(purchase.cost),
            "burn_cost": text(burn_cost(energy)) if energy else None,
            "saving": text(burn_cost(energy) - purchase.cost) if energy else None,
            "quote": quote.to_dict() if quote else None,
            "reused": False,
            "dry_run": False,
        }
        if isinstance(purchase, SmartPurchase):
            result["activated"] = purchase.activated
        return result

    def _human_line(self, result: dict[str, Any]) -> str:
        energy = result["energy_amount"]
        burn = f" (burning would cost {trx(Decimal(result['burn_cost']))})" \
            if result.get("burn_cost") else ""
        activated = ", activated the recipient" if result.get("activated") else ""
        return (f"bought {energy:,} energy for {result['target_address']} "
                f"({hours(Decimal(result['rent_time']))}): order {result['order_id']}, "
                f"{trx(Decimal(result['cost']))}{burn}{activated}")

    # -- waiting ---------------------------------------------------------------------------

    def _finish(self, result: dict[str, Any], context: Context) -> dict[str, Any]:
        if not self.wait_for_completion:
            return result
        if self.deferrable:
            from airflow_provider_tronenergy.triggers.order import EnergyOrderTrigger

            self.defer(
                trigger=EnergyOrderTrigger(
                    order_id=result["order_id"],
                    tronenergy_conn_id=self.tronenergy_conn_id,
                    poll_interval=self.poll_interval,
                    end_time=time.time() + self.wait_timeout,
                ),
                method_name="execute_complete",
                kwargs={"result": result},
            )
        order = self._poll(result["order_id"])
        return self._completed(result, order.to_dict())

    def _poll(self, order_id: str) -> Order:
        client = self.hook.get_conn()
        deadline = time.monotonic() + self.wait_timeout
        last_status = None
        while True:
            try:
                order = client.get_order(order_id)
            except (InvalidRequestError, AmbiguousPurchaseError) as exc:
                raise AirflowException(f"cannot follow order {order_id}: {exc}") from None
            except TronEnergyError as exc:
                self.log.warning("order %s: transient error while polling (%s)", order_id, exc)
            else:
                if order.status is not last_status:
                    self.log.info("order %s is %s", order_id, order.status.value)
                    last_status = order.status
                if order.status.is_terminal():
                    return order
            if time.monotonic() > deadline:
                raise AirflowException(
                    f"order {order_id} not terminal after {self.wait_timeout:g} s")
            time.sleep(self.poll_interval)

    def _completed(self, result: dict[str, Any], order: dict[str, Any]) -> dict[str, Any]:
        status = order.get("status")
        if status != OrderStatus.SUCCESS.value:
            raise AirflowFailException(
                f"order {result['order_id']} ended {status}: the energy for "
                f"{result['target_address']} was not delivered")
        self.log.info("order %s succeeded: delegation tx %s", result["order_id"],
                      order.get("tx_hash"))
        return {**result, "status": status, "tx_hash": order.get("tx_hash", "")}

    def execute_complete(self, context: Context, event: dict[str, Any],
                         result: dict[str, Any] | None = None) -> dict[str, Any]:
        """Back from the triggerer: the order's terminal status decides the task."""
        if result is None:  # some runners drop defer kwargs: rebuild from the event
            order = event.get("order") or {}
            result = {"mode": self.mode, "order_id": event.get("order_id"),
                      "target_address": order.get("target_address", self.target),
                      "cost": order.get("cost"), "energy_amount": order.get("energy_amount")}
        status = event.get("status")
        if status in ("success", "failed", "cancelled"):
            return self._completed(result, event.get("order") or {"status": status})
        raise AirflowException(
            f"waiting for order {result['order_id']} ended with {status}: {event.get('message')}")


def _map_index(ti: Any) -> int:
    index = getattr(ti, "map_index", -1)
    return int(index) if index is not None else -1


def _scope(context: Context) -> str:
    ti = context["ti"]
    return scope_of(ti.dag_id, ti.run_id, ti.task_id, _map_index(ti))


@contextmanager
def _journal_errors() -> Iterator[None]:
    """A journal database failure before buying is retryable and buys nothing."""
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        raise AirflowException(
            f"the purchase journal is unavailable ({type(exc).__name__}); nothing was bought "
            "by this attempt") from None


def _unknown_outcome(entry: Entry) -> str:
    age = time.time() - entry.sent_at
    in_flight = (f" It was sent {age:.0f} s ago and may still be in flight in another "
                 "worker: if `tronenergy-purchases show` soon says placed, just run again."
                 if age < IN_FLIGHT_SECONDS else "")
    return (
        f"Purchase {entry.identity} ({entry.description}) was sent at {_utc(entry.sent_at)} "
        f"by {entry.scope} and its outcome is unknown: the service may or may not have "
        f"placed it.{in_flight} It is not placed again, in this run or any later run, until "
        "resolved. "
        f"Nothing was bought now. Look for an order for {entry.target_address} placed around "
        "that time in the service's console, then record what you found:\n"
        f"  {RESOLVE_COMMAND} '{entry.identity}' --order-id <ORDER_ID>\n"
        f"  {RESOLVE_COMMAND} '{entry.identity}' --not-placed")
