"""Operators that rent energy, activate addresses and check them.

Purchases spend real TRX, unattended, and Airflow retries tasks whose worker
died. So every purchase operator: validates its input before any call; quotes
first and refuses past ``max_cost_trx`` or the available balance; records its
intent and then its order id in ``task_state_store``, so a retry reuses the
order instead of buying again; and never guesses after an ambiguous failure.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timezone
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar

from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    BaseOperator,
    conf,
)

from airflow_provider_tronenergy.client import (
    AmbiguousPurchaseError,
    InvalidRequestError,
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
from airflow_provider_tronenergy.client import validation as checks
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.operators.params import as_bool, as_decimal, as_int
from airflow_provider_tronenergy.operators.purchase_ledger import PurchaseLedger
from airflow_provider_tronenergy.operators.quote import (
    ACTIVATION_COST,
    Quote,
    burn_cost,
    hours,
    rental_cost,
    text,
    transfer_energy,
    trx,
)

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context

ON_AMBIGUOUS = ("fail", "rebuy")


def _utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="seconds")


class EnergyPurchaseOperator(BaseOperator):
    """Shared life of the four purchase modes: validate, quote, guard, record, buy, wait.

    :param tronenergy_conn_id: connection of type ``tronenergy``.
    :param rent_time: hours the energy is rented for (purchases accept 0.25, 1, 24).
    :param max_cost_trx: refuse, before buying, when the quoted cost is higher.
    :param check_balance: refuse, before buying, when the available balance is short.
    :param dry_run: quote and plan only; nothing is bought.
    :param wait_for_completion: wait until the order is terminal (success, failed,
        cancelled); a failed or cancelled order fails the task.
    :param deferrable: wait in the triggerer instead of a worker slot.
    :param poll_interval: seconds between order polls while waiting.
    :param wait_timeout: seconds to wait for a terminal order before failing.
    :param on_ambiguous: what a retry does after an earlier try may or may not have
        bought: ``"fail"`` (default: stop and say what to check) or ``"rebuy"``.
    """

    mode: ClassVar[str] = ""
    template_fields: Sequence[str] = ("rent_time", "max_cost_trx", "dry_run_mode")
    ui_color = "#f9e79f"

    def __init__(
        self,
        *,
        tronenergy_conn_id: str = TronEnergyHook.default_conn_name,
        rent_time: Decimal | float | int | str = 1,
        max_cost_trx: Decimal | float | int | str | None = None,
        check_balance: bool = True,
        dry_run: bool | str = False,
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
        """The purchase's validated parameters, JSON-safe (they are recorded)."""
        raise NotImplementedError

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        """(energy to buy, whether an activation is part of the purchase)."""
        raise NotImplementedError

    def place(self, client: TronEnergyClient, request: dict[str, Any]) -> Purchase | SmartPurchase:
        raise NotImplementedError

    # -- the shared life -----------------------------------------------------------------

    @property
    def hook(self) -> TronEnergyHook:
        return TronEnergyHook(tronenergy_conn_id=self.tronenergy_conn_id)

    def execute(self, context: Context) -> dict[str, Any]:
        client = self.hook.get_conn()
        try:
            request = self.request(client.rules)
            max_cost = (None if self.max_cost_trx in (None, "", "None")
                        else as_decimal(self.max_cost_trx, "max_cost_trx"))
        except ValidationError as exc:
            raise AirflowFailException(f"{self.mode}: {exc}") from None
        ledger = PurchaseLedger(context.get("task_state_store"))
        prior = ledger.prior()
        if prior is not None:
            reused = self._resume(prior, request)
            if reused is not None:
                return self._finish(reused, context)
        if not ledger.durable:
            self.log.warning(
                "task_state_store is not available (Airflow < 3.3): a retry of this task "
                "cannot see an order placed by an earlier try. Purchases are still never "
                "resent by the client after an ambiguous failure.")

        quote = self._quote(client, request)
        self._guard(client, request, quote, max_cost)
        if as_bool(self.dry_run_mode):
            plan = {"mode": self.mode, "dry_run": True, "request": request,
                    "quote": quote.to_dict() if quote else None}
            self.log.info("dry run: would buy %s", self._describe_quote(quote))
            return plan

        ledger.record_intent(request)
        try:
            purchase = self.place(client, request)
        except AmbiguousPurchaseError as exc:
            message = (
                f"{exc}. The purchase may or may not have been made: check the account's "
                f"orders for {self.target} placed around {_utc(time.time())} before "
                "running this task again.")
            if self.on_ambiguous == "rebuy":
                raise AirflowException(
                    message + " on_ambiguous='rebuy': a retry buys again.") from None
            raise AirflowFailException(message) from None
        except (RateLimitedError, ServiceUnreachableError) as exc:
            ledger.forget()  # provably not processed: a retry may buy
            raise AirflowException(f"{self.mode}: nothing was bought ({exc})") from None
        except TronEnergyError as exc:
            ledger.forget()  # a definite refusal: nothing was bought
            raise AirflowFailException(f"{self.mode} refused, nothing bought: {exc}") from None
        result = self._result(purchase, request, quote)
        ledger.record_order(request, purchase.order_id, result)
        self.log.info(self._human_line(result))
        return self._finish(result, context)

    def _resume(self, prior: Any, request: dict[str, Any]) -> dict[str, Any] | None:
        if prior.request != request:
            raise AirflowFailException(
                f"an earlier try of this task recorded a different purchase ({prior.request}); "
                f"refusing to buy {request} in the same task instance. Clear the task's state "
                "or use a new run.")
        if prior.order_id is not None and prior.result is not None:
            self.log.info("order %s was placed by an earlier try of this task; reusing it, "
                          "nothing more is bought", prior.order_id)
            return {**prior.result, "reused": True}
        if self.on_ambiguous == "rebuy":
            self.log.warning(
                "an earlier try sent this purchase at %s and never learned its outcome; "
                "on_ambiguous='rebuy': buying again", _utc(prior.sent_at))
            return None
        raise AirflowFailException(
            f"an earlier try of this task sent {self.mode} for {self.target} at "
            f"{_utc(prior.sent_at)} and never learned whether it went through (the worker "
            "died or the answer was lost). Nothing was bought now. Check the account's orders "
            f"for {self.target} around that time; if there is none, run again with "
            "on_ambiguous='rebuy' (or clear the task's state).")

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
        return (f"{quote.energy:,} energy for {self.target} ({hours(quote.rent_time)}) at "
                f"{quote.energy_cost} TRX{extra}")

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
        if result is None:  # some runners drop defer kwargs: the ledger kept the result
            prior = PurchaseLedger(context.get("task_state_store")).prior()
            order = event.get("order") or {}
            result = prior.result if prior is not None and prior.result else {
                "mode": self.mode, "order_id": event.get("order_id"),
                "target_address": order.get("target_address", self.target),
                "cost": order.get("cost"), "energy_amount": order.get("energy_amount")}
        status = event.get("status")
        if status in ("success", "failed", "cancelled"):
            return self._completed(result, event.get("order") or {"status": status})
        raise AirflowException(
            f"waiting for order {result['order_id']} ended with {status}: {event.get('message')}")


class BuyEnergyOperator(EnergyPurchaseOperator):
    """Rent a fixed amount of energy to ``target_address``."""

    mode = "buy"
    template_fields: Sequence[str] = (*EnergyPurchaseOperator.template_fields,
                                      "target_address", "energy_amount")

    def __init__(self, *, target_address: str, energy_amount: int | str = 65_000,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_address = target_address
        self.energy_amount = energy_amount

    @property
    def target(self) -> str:
        return str(self.target_address)

    def request(self, rules: ValidationRules) -> dict[str, Any]:
        energy = checks.energy_amount(as_int(self.energy_amount, "energy_amount"), rules)
        return {"target_address": checks.address(self.target_address, "target_address"),
                "energy_amount": energy,
                "rent_time": text(checks.rent_time(self.rent_time, rules.buy_rent_times))}

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        return int(request["energy_amount"]), False

    def place(self, client: TronEnergyClient, request: dict[str, Any]) -> Purchase:
        return client.buy_energy(request["target_address"], request["energy_amount"],
                                 Decimal(request["rent_time"]))


class BuyEnergyByCountOperator(EnergyPurchaseOperator):
    """Rent energy for ``count`` transfers (to addresses that already hold the token)."""

    mode = "buy_count"
    template_fields: Sequence[str] = (*EnergyPurchaseOperator.template_fields,
                                      "target_address", "count")

    def __init__(self, *, target_address: str, count: int | str = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_address = target_address
        self.count = count

    @property
    def target(self) -> str:
        return str(self.target_address)

    def request(self, rules: ValidationRules) -> dict[str, Any]:
        count = checks.count(as_int(self.count, "count"))
        return {"target_address": checks.address(self.target_address, "target_address"),
                "count": count,
                "rent_time": text(checks.rent_time(self.rent_time, rules.buy_count_rent_times))}

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        return int(request["count"]) * energy_per_transfer, False

    def place(self, client: TronEnergyClient, request: dict[str, Any]) -> Purchase:
        return client.buy_energy_by_count(request["target_address"], request["count"],
                                          Decimal(request["rent_time"]))


class AutoBuyEnergyOperator(EnergyPurchaseOperator):
    """Rent what one transfer from ``from_address`` to ``to_address`` needs (65k or 131k)."""

    mode = "auto_buy"
    template_fields: Sequence[str] = (*EnergyPurchaseOperator.template_fields,
                                      "from_address", "to_address")

    def __init__(self, *, from_address: str, to_address: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.from_address = from_address
        self.to_address = to_address

    @property
    def target(self) -> str:
        return str(self.from_address)

    def request(self, rules: ValidationRules) -> dict[str, Any]:
        return {"from_address": checks.address(self.from_address, "from_address"),
                "to_address": checks.address(self.to_address, "to_address"),
                "rent_time": text(checks.rent_time(self.rent_time, rules.auto_buy_rent_times))}

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        check = client.check_address(request["to_address"])
        return transfer_energy(check.transfer_count), False

    def place(self, client: TronEnergyClient, request: dict[str, Any]) -> Purchase:
        return client.auto_buy_energy(request["from_address"], request["to_address"],
                                      Decimal(request["rent_time"]))


class SmartBuyEnergyOperator(EnergyPurchaseOperator):
    """One call: activate ``to_address`` if needed, estimate, buy for ``receiver_address``."""

    mode = "smart_buy"
    template_fields: Sequence[str] = (*EnergyPurchaseOperator.template_fields,
                                      "receiver_address", "to_address", "from_address")

    def __init__(self, *, receiver_address: str, to_address: str,
                 from_address: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.receiver_address = receiver_address
        self.to_address = to_address
        self.from_address = from_address

    @property
    def target(self) -> str:
        return str(self.receiver_address)

    def request(self, rules: ValidationRules) -> dict[str, Any]:
        return {
            "receiver_address": checks.address(self.receiver_address, "receiver_address"),
            "to_address": checks.address(self.to_address, "to_address"),
            "from_address": checks.optional_address(self.from_address or None, "from_address"),
            "rent_time": text(checks.rent_time(self.rent_time, rules.smart_buy_rent_times)),
        }

    def quote_energy(self, client: TronEnergyClient, request: dict[str, Any],
                     energy_per_transfer: int) -> tuple[int, bool]:
        check = client.check_address(request["to_address"])
        return transfer_energy(check.transfer_count), check.need_activate

    def place(self, client: TronEnergyClient, request: dict[str, Any]) -> SmartPurchase:
        return client.smart_buy_energy(request["receiver_address"], request["to_address"],
                                       request["from_address"], Decimal(request["rent_time"]))


# The address operators lived here; DAGs importing them from this module keep working.
from airflow_provider_tronenergy.operators.address import (  # noqa: E402
    ActivateAddressOperator,
    CheckAddressOperator,
)

__all__ = [
    "ActivateAddressOperator",
    "AutoBuyEnergyOperator",
    "BuyEnergyByCountOperator",
    "BuyEnergyOperator",
    "CheckAddressOperator",
    "EnergyPurchaseOperator",
    "SmartBuyEnergyOperator",
]
