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
from collections.abc import Sequence
from datetime import timedelta
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
    default_identity,
    explicit_identity,
    open_journal,
    scope_of,
)
from airflow_provider_tronenergy.money.guard import guard_cost, max_cost, trusted_answers
from airflow_provider_tronenergy.money.quote import (
    ACTIVATION_COST,
    Quote,
    burn_cost,
    hours,
    rental_cost,
    text,
    trx,
)
from airflow_provider_tronenergy.operators.ask import AskSteps
from airflow_provider_tronenergy.operators.reuse import (
    ON_AMBIGUOUS,
    RESOLVE_COMMAND,
    JournalSteps,
    UnknownOutcome,
    journal_errors,
    unknown_outcome,
)
from airflow_provider_tronenergy.templated import as_flag, is_unset

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context

class TronEnergyPurchaseOperator(JournalSteps, AskSteps, BaseOperator):
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
    :param on_ambiguous: what an attempt does when it, or an earlier one, may or may not
        have bought: ``"fail"`` (default: stop and name the resolve command), ``"ask"``
        (a Required Action in Airflow: placed with its order id, not placed, or abort;
        the answer goes to the journal) or ``"rebuy"``; templated (checked when the DAG
        is parsed unless it is a template).
    :param ask_timeout: with ``on_ambiguous="ask"``, how long to wait for the answer
        before the task fails (nothing bought, still unknown); None: no limit.
    """

    mode: ClassVar[str] = ""
    template_fields: Sequence[str] = ("rent_time", "max_cost_trx", "dry_run_mode",
                                      "purchase_key", "on_ambiguous")
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
        ask_timeout: timedelta | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if on_ambiguous not in ON_AMBIGUOUS and "{{" not in str(on_ambiguous):
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
        self.ask_timeout = ask_timeout

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

    def purchase(self, context: Context) -> dict[str, Any]:
        """The purchase's life inside another task (a batch): the hook stays open."""
        return self._execute(context)

    def _execute(self, context: Context) -> dict[str, Any]:
        client = self.hook.get_conn()
        try:
            request = self.request(client.rules)
            ceiling = max_cost(self.max_cost_trx)
            identity, explicit = self._identity(context, request)
            dry_run = as_flag(self.dry_run_mode, "dry_run")
            if self.on_ambiguous not in ON_AMBIGUOUS:  # templated: known only now
                raise ValidationError("on_ambiguous", f"must be one of {ON_AMBIGUOUS}, not "
                                      f"{self.on_ambiguous!r}")
        except (ValidationError, IdentityError) as exc:
            raise AirflowFailException(f"{self.mode}: {exc}") from None
        scope = _scope(context, self.task_id)
        journal = self._journal()
        while True:
            try:
                prior = self._decide(journal, client, identity, scope, request)
            except UnknownOutcome as unknown:
                self._ask(context, unknown)
            if isinstance(prior, dict):
                return self._finish(prior, context)
            with trusted_answers(self.mode):
                quote = self._quote(client, request)
                self._guard(client, request, quote, ceiling)
            if dry_run:
                self.log.info("dry run: would buy %s", self._describe_quote(quote))
                return {"mode": self.mode, "dry_run": True, "request": request,
                        "purchase_key": identity,
                        "quote": quote.to_dict() if quote else None}
            try:
                with journal_errors():
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
        if not is_unset(self.purchase_key):
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

    def _buy(self, journal: PurchaseJournal, entry: Entry, client: TronEnergyClient,
             request: dict[str, Any], quote: Quote | None, context: Context) -> dict[str, Any]:
        try:
            purchase = self.place(client, request)
        except AmbiguousPurchaseError as exc:
            if self.on_ambiguous == "ask":
                self._ask(context, UnknownOutcome(entry, str(exc)))
            message = f"{exc}. {unknown_outcome(entry)}"
            if self.on_ambiguous == "rebuy":
                raise AirflowException(
                    message + " on_ambiguous='rebuy': a retry buys again.") from None
            raise AirflowFailException(message) from None
        except (RateLimitedError, ServiceUnreachableError) as exc:
            with journal_errors():
                journal.record_refused(entry, str(exc))
            raise AirflowException(f"{self.mode}: nothing was bought ({exc})") from None
        except TronEnergyError as exc:
            with journal_errors():
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
        if not price.min_energy <= energy <= price.max_energy:
            raise AirflowFailException(
                f"{self.mode}: {energy:,} energy is outside what the service sells "
                f"({price.min_energy:,} to {price.max_energy:,}); nothing bought")
        return Quote(
            energy=energy,
            rent_time=rent_time,
            price_per_10k=price.price_per_10k,
            energy_cost=rental_cost(energy, price.price_per_10k),
            activation_cost=ACTIVATION_COST if activates else Decimal(0),
        )

    def _guard(self, client: TronEnergyClient, request: dict[str, Any], quote: Quote | None,
               ceiling: Decimal | None) -> None:
        if quote is None:
            if ceiling is not None:
                raise AirflowFailException(
                    f"max_cost_trx is set but {self.mode} for "
                    f"{hours(Decimal(request['rent_time']))} cannot be quoted (the price "
                    "endpoint does not offer that rent_time); nothing bought")
            return
        guard_cost(client, quote.total, what=self._describe_quote(quote), ceiling=ceiling,
                   check_balance=self.check_balance)

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
            from airflow_provider_tronenergy.triggers.order import TronEnergyOrderTrigger

            self.defer(
                trigger=TronEnergyOrderTrigger(
                    order_id=result["order_id"],
                    tronenergy_conn_id=self.tronenergy_conn_id,
                    poll_interval=self.poll_interval,
                    end_time=time.time() + self.wait_timeout,
                ),
                method_name="execute_complete",
                kwargs={"result": result},
            )
        event = self.hook.wait_for_order(result["order_id"], poll_interval=self.poll_interval,
                                         timeout=self.wait_timeout, log=self.log)
        return self._completed(result, event)

    def _completed(self, result: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
        """The result of an ended wait: a delivered order, else the matching failure."""
        status = event.get("status")
        if status in ("failed", "cancelled"):
            raise AirflowFailException(
                f"order {result['order_id']} ended {status}: the energy for "
                f"{result['target_address']} was not delivered")
        if status != OrderStatus.SUCCESS.value:
            raise AirflowException(f"waiting for order {result['order_id']} ended with "
                                   f"{status}: {event.get('message')}")
        order = event.get("order") or {}
        self.log.info("order %s succeeded: delegation tx %s", result["order_id"],
                      order.get("tx_hash"))
        return {**result, "status": status, "tx_hash": order.get("tx_hash", "")}

    def execute_answer(self, context: Context, event: dict[str, Any], identity: str,
                       attempt: int) -> dict[str, Any]:
        """Back from a person's answer (``on_ambiguous="ask"``): record it, then go on."""
        try:
            self._record_answer(event, identity, attempt)
            return self._execute(context)
        finally:
            self.hook.close()

    def execute_complete(self, context: Context, event: dict[str, Any],
                         result: dict[str, Any] | None = None) -> dict[str, Any]:
        """Back from the triggerer: the order's terminal status decides the task."""
        if result is None:  # some runners drop defer kwargs: rebuild from the event
            order = event.get("order") or {}
            result = {"mode": self.mode, "order_id": event.get("order_id"),
                      "target_address": order.get("target_address", self.target),
                      "cost": order.get("cost"), "energy_amount": order.get("energy_amount")}
        return self._completed(result, event)


def _map_index(ti: Any) -> int:
    index = getattr(ti, "map_index", -1)
    return int(index) if index is not None else -1


def _scope(context: Context, task_id: str) -> str:
    """The task instance a purchase belongs to; one order of a batch task is its own."""
    ti = context["ti"]
    return scope_of(ti.dag_id, ti.run_id, task_id, _map_index(ti))
