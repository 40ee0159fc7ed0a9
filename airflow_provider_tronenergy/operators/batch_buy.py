"""Place a payout plan's orders in one task: task instances independent of the order count.

A 10,000-recipient batch plans a hundred or more orders. Mapping one purchase task
per order pays Airflow's per-task overhead (scheduling, a process, XCom, logs) a
hundred times over. :class:`TronEnergyBatchBuyOperator` places them all in one task,
each through exactly the life a single purchase has
(:class:`~airflow_provider_tronenergy.purchase.run.Purchase`: journal, quote,
guard, buy), under the order's own ``purchase_key``. So a
retry, a cleared task, a second worker or a new run of the same batch reuses every
order already placed and buys only the rest; an order whose outcome nobody knows
stops the batch there, the orders before it staying placed and journaled. With
``on_ambiguous="ask"`` the batch asks a person about that order (a Required Action,
:mod:`~airflow_provider_tronenergy.hitl.purchase`), records the answer in the journal
and goes on with the rest, reusing every order already placed.

With a ``tron_node`` connection, an order is reused only while the chain still shows
its energy on the wallet (:class:`~airflow_provider_tronenergy.payout.onchain.WalletEnergy`);
otherwise the energy missing is bought, once, under the order's key and
:data:`REFILL_SUFFIX`, so a retry reuses that refill instead of buying it again. A rerun's
plan may size an order anew (energy recovered on chain counts as on hand): the journaled
purchase of its key stands as recorded, and a shortfall is bought once under the key and
:data:`TOPUP_SUFFIX` (docs/decisions.md "A resized plan meets its journaled purchase").
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    BaseOperator,
)

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.client import TronEnergyClient
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.hitl.purchase import Asker
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.links.explorer import TronEnergyDelegationLink, publish
from airflow_provider_tronenergy.money.burn import DEFAULT_PRICES, BurnPrices
from airflow_provider_tronenergy.money.guard import max_order, max_spend
from airflow_provider_tronenergy.money.quote import trx_exact
from airflow_provider_tronenergy.operators.purchase import ask_timeout
from airflow_provider_tronenergy.payout import onchain
from airflow_provider_tronenergy.purchase import (
    ON_AMBIGUOUS,
    Buy,
    BuyCount,
    EnergyCheck,
    EnergyGone,
    Purchase,
    Settings,
    journal_for,
    refused,
)
from airflow_provider_tronenergy.purchase.outcomes import journal_errors, order_energy, utc
from airflow_provider_tronenergy.purchase_journal import (
    EntryState,
    PurchaseJournal,
    explicit_identity,
    open_journal,
    task_scope,
)
from airflow_provider_tronenergy.templated import chosen_none, money_given

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context

    from airflow_provider_tronenergy.client import Order
    from airflow_provider_tronenergy.purchase_journal import Entry

BATCH_ON_AMBIGUOUS = ON_AMBIGUOUS
# The order kinds of a plan (payouts.plan_energy), in the order they are bought.
PLAN_ORDER_KINDS = ("count_orders", "buy_orders")
REFILL_SUFFIX = ":refill"
"""Appended to an order's purchase_key for the energy bought because its own was gone."""
TOPUP_SUFFIX = ":topup"
"""Appended to an order's purchase_key for what a rerun's plan needs beyond its journaled
purchase (which stands as recorded)."""


def energy_kept(orders: Any) -> dict[str, int]:
    """What a plan counts on its sender's wallet besides its orders: the energy on hand it
    used and the margin kept back (nothing for a bare list of orders)."""
    if isinstance(orders, Mapping) and isinstance(orders.get("sender"), str):
        return {orders["sender"]: int(orders.get("energy_on_hand_used") or 0)
                + int(orders.get("energy_margin") or 0)}
    return {}


def checked_orders(orders: Any) -> list[dict[str, Any]]:
    """The plan's orders, each ``{"target_address", "purchase_key"}`` and one amount field.

    ``orders`` is a list of orders or a whole plan (its buy-count orders, then its buy
    orders), so a DAG needs no task of its own to pick them out. Refused before
    anything is bought: a batch half placed because its fifth order was malformed is
    a batch a person has to untangle.
    """
    if isinstance(orders, Mapping) and any(kind in orders for kind in PLAN_ORDER_KINDS):
        orders = [order for kind in PLAN_ORDER_KINDS for order in orders.get(kind) or []]
    if isinstance(orders, (str, bytes)) or not isinstance(orders, Sequence):
        raise AirflowFailException(
            f"orders must be a list of orders, got {type(orders).__name__}; if it comes from "
            "XCom, pass the XComArg or render it as a native object")
    problems = []
    keys: set[str] = set()
    for i, order in enumerate(orders):
        if not isinstance(order, Mapping):
            problems.append(f"order {i} is not a mapping")
            continue
        amounts = [name for name in ("energy_amount", "count") if name in order]
        if len(amounts) != 1:
            problems.append(f"order {i} needs exactly one of energy_amount or count")
        key = order.get("purchase_key")
        if not isinstance(key, str) or not key.strip():
            problems.append(f"order {i} has no purchase_key (it names the order across "
                            "retries and runs)")
        elif key in keys:
            problems.append(f"order {i} repeats purchase_key {key!r}")
        else:
            keys.add(key)
        if not isinstance(order.get("target_address"), str):
            problems.append(f"order {i} has no target_address")
    if problems:
        raise AirflowFailException("bad orders, nothing bought: " + "; ".join(problems))
    return [dict(order) for order in orders]


class TronEnergyBatchBuyOperator(BaseOperator):
    """Buy every order of a plan in one task; return each order's result, in order.

    :param orders: the orders (templated; e.g. a plan task's XComArg): dicts with
        ``target_address``, ``purchase_key`` and either ``energy_amount`` (a buy) or
        ``count`` (a buy-count), as
        :func:`~airflow_provider_tronenergy.payout.energy_plan.plan_energy` plans them; or
        the plan itself (its ``count_orders``, then its ``buy_orders``).
    :param tronenergy_conn_id: connection of type ``tronenergy``.
    :param rent_time: hours the energy is rented for.
    :param max_spend_trx: required: what the batch may spend in all, in every try and run
        of it, its refills and top-ups counted: before each order is bought, its quote and
        what the batch's keys already spent (as the purchase journal holds it; an unknown
        outcome counted at its quote) must be within it. The batch's keys: a plan's
        ``purchase_key``, else each order's ``purchase_key`` (each with its ``:refill`` and
        ``:topup``). None, written out: no limit but the balance.
    :param max_order_trx: refuse an order (a refill and a top-up each one too), before
        buying it, when its quote is higher. None (the default): each order is bounded by
        ``max_spend_trx``.
    :param on_ambiguous: an order whose outcome is unknown: ``"fail"`` (default: stop the
        batch there, naming the resolve command), ``"ask"`` (a Required Action, as a single
        purchase asks; the answer goes to the journal and the batch goes on) or
        ``"rebuy"``; templated (checked when the DAG is parsed unless it is a template).
    :param ask_timeout_seconds: with ``on_ambiguous="ask"``, seconds to wait for the answer
        before the task fails (nothing more bought, still unknown); None: no limit.
    :param tron_node_conn_id: a ``tron_node`` connection (templated): an order placed
        earlier is reused only while its delegation is on chain and the wallet still has
        its energy (beyond what the plan counts on hand); else the energy missing is
        bought, once. None (the default; ``"None"`` as a template renders it): no on-chain
        check. Empty, or an id that names no connection: the task fails before anything is
        bought (``ConnectionMissing``).
    """

    template_fields: Sequence[str] = ("orders", "rent_time", "max_spend_trx", "max_order_trx",
                                      "tronenergy_conn_id", "on_ambiguous",
                                      "tron_node_conn_id")
    ui_color = "#f9e79f"
    operator_extra_links = (TronEnergyDelegationLink(),)

    def __init__(self, *, orders: Sequence[Mapping[str, Any]] | Mapping[str, Any] | str,
                 tronenergy_conn_id: str = TronEnergyHook.default_conn_name,
                 rent_time: Decimal | float | int | str = 1,
                 max_spend_trx: Decimal | int | str | None,
                 max_order_trx: Decimal | int | str | None = None,
                 on_ambiguous: str = "fail", ask_timeout_seconds: float | None = None,
                 tron_node_conn_id: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        money_given(max_spend_trx=max_spend_trx, max_order_trx=max_order_trx)
        if on_ambiguous not in BATCH_ON_AMBIGUOUS and "{{" not in str(on_ambiguous):
            raise ValueError(f"on_ambiguous must be one of {BATCH_ON_AMBIGUOUS}, not "
                             f"{on_ambiguous!r}")
        self.orders = orders
        self.tronenergy_conn_id = tronenergy_conn_id
        self.rent_time = rent_time
        self.max_spend_trx = max_spend_trx
        self.max_order_trx = max_order_trx
        self.on_ambiguous = on_ambiguous
        self.ask_timeout_seconds = ask_timeout_seconds
        self.tron_node_conn_id = tron_node_conn_id

    def execute(self, context: Context) -> list[dict[str, Any]]:
        """Place (or reuse) each order in turn, through one client."""
        with as_airflow():
            return self._place_all(context, may_ask=True)

    def execute_answer(self, context: Context, event: dict[str, Any], identity: str,
                       attempt: int) -> list[dict[str, Any]]:
        """Back from a person's answer about one order: record it, then go on with the batch.

        The orders before it are reused from the journal, the answered one is reused
        (placed) or bought once (not placed), and the rest are bought. Another unknown
        outcome in this try is not asked about (Airflow keeps one request per try): it
        fails this try, and the next try asks.
        """
        with as_airflow():
            self._asker(may_ask=False).record_answer(event, identity, attempt)
            return self._place_all(context, may_ask=False)

    def _asker(self, *, may_ask: bool) -> Asker:
        return Asker(self.tronenergy_conn_id, ask_timeout(self.ask_timeout_seconds), self.log,
                     self.defer, self._journal, may_ask=may_ask)

    def _journal(self) -> PurchaseJournal:
        try:
            return open_journal()
        except NotRetryable:  # StoreNotShared: as_airflow fails the task, not retried
            raise
        except Exception as exc:
            raise AirflowException(f"the purchase journal cannot be opened ({exc}); the "
                                   "answer was not recorded and nothing was bought") from None

    def _place_all(self, context: Context, *, may_ask: bool) -> list[dict[str, Any]]:
        orders = checked_orders(self.orders)
        if self.on_ambiguous not in BATCH_ON_AMBIGUOUS:  # templated: known only now
            raise AirflowFailException(f"on_ambiguous must be one of {BATCH_ON_AMBIGUOUS}, "
                                       f"not {self.on_ambiguous!r}; nothing bought")
        hook = TronEnergyHook(self.tronenergy_conn_id)
        wallet = self._wallet_energy()
        check = _checker(wallet) if wallet is not None else None
        asker = self._asker(may_ask=may_ask)
        results: list[dict[str, Any]] = []
        try:
            for index, order in enumerate(orders):
                client = hook.get_conn()  # one client, one pool for the batch
                result = self._run_order(context, order, index, client, asker, check)
                results.append(result)
                topup = _topup(order, result, client.rules.min_energy)
                if topup is not None:
                    results.append(self._run_order(context, topup, index, client, asker,
                                                   check, suffix="__topup"))
        finally:
            hook.close()
            if wallet is not None:
                wallet.close()
            # Also when the batch stops, or defers to ask: the orders placed stay linked.
            publish(context, hook.get_explorer, "delegation", count=len(results),
                    txids=[r.get("tx_hash") or "" for r in results],
                    addresses=[r.get("target_address") or "" for r in results], log=self.log)
        reused = sum(bool(r.get("reused")) for r in results)
        spent = sum((Decimal(r["cost"]) for r in results if not r.get("reused")), Decimal(0))
        self.log.info("%d orders: %d bought for %s, %d reused from earlier attempts",
                      len(results), len(results) - reused, trx_exact(spent), reused)
        return results

    def _wallet_energy(self) -> onchain.WalletEnergy | None:
        """The on-chain check of reused orders, unless ``tron_node_conn_id`` is None."""
        node = onchain.node_hook(chosen_none(self.tron_node_conn_id))
        if node is None:
            return None
        return onchain.WalletEnergy(node, energy_kept(self.orders))

    def _run_order(self, context: Context, order: Mapping[str, Any], index: int,
                   client: TronEnergyClient, asker: Asker, check: EnergyCheck | None,
                   suffix: str = "") -> dict[str, Any]:
        """One order placed or reused; its energy gone on chain is bought once (refill)."""
        purchase = self._purchase(context, order, index, client, asker, check, suffix)
        try:
            return purchase.run()
        except EnergyGone as gone:
            return self._refill(context, order, index, gone, client, asker)

    def _refill(self, context: Context, order: Mapping[str, Any], index: int, gone: EnergyGone,
                client: TronEnergyClient, asker: Asker) -> dict[str, Any]:
        """Buy the energy an order no longer has on chain, once: under the order's key and
        :data:`REFILL_SUFFIX`, so every later attempt finds it in the journal."""
        key = f"{order['purchase_key']}{REFILL_SUFFIX}"
        journal = self._journal()
        with journal_errors():
            prior = journal.latest(key)
        if prior is not None and prior.state is EntryState.PLACED:
            energy = int(prior.request["energy_amount"])  # already bought: the same request
        else:
            energy = max(gone.missing, client.rules.min_energy)
            with journal_errors():
                journal.annotate(gone.entry, f"{utc(time.time())}: {gone.missing:,} of its "
                                 f"{gone.energy:,} energy gone on chain; not reused, the "
                                 f"shortfall is bought once as {key}")
        self.log.warning("order %s (purchase %s) is not reused: %s of its %s energy is gone on "
                         "chain; %s energy is bought once, as purchase %s", gone.entry.order_id,
                         gone.entry.identity, f"{gone.missing:,}", f"{gone.energy:,}",
                         f"{energy:,}", key)
        refill = {"target_address": gone.entry.target_address, "energy_amount": energy,
                  "purchase_key": key}
        purchase = self._purchase(context, refill, index, client, asker, None,
                                  suffix="__refill")
        return {**purchase.run(), "refill_of": order["purchase_key"]}

    def _purchase(self, context: Context, order: Mapping[str, Any], index: int,
                  client: TronEnergyClient, asker: Asker, check: EnergyCheck | None,
                  suffix: str = "") -> Purchase:
        """The single purchase of one order: the same life as a mapped purchase task."""
        mode = (BuyCount(rent_time=self.rent_time, target_address=order["target_address"],
                         count=order["count"]) if "count" in order else
                Buy(rent_time=self.rent_time, target_address=order["target_address"],
                    energy_amount=order["energy_amount"]))
        with refused(mode.name):
            call = mode.call(client.endpoints)  # the order's values checked here, once
            identity = explicit_identity(order["purchase_key"])
            order_limit, spend_limit = max_order(self.max_order_trx), max_spend(self.max_spend_trx)
            keys = spend_keys(self.orders)
        scope = task_scope(context, f"{self.task_id}__order_{index}{suffix}")
        settings = Settings(max_order=order_limit, max_spend=spend_limit, spend_keys=keys,
                            on_ambiguous=self.on_ambiguous,
                            keep_journaled=True)  # a rerun's plan may size it anew
        return Purchase(mode, call, client, journal_for(mode.name), settings,
                        identity=identity, explicit=True, scope=scope, log=self.log,
                        ask=lambda unknown: asker.ask(context, unknown), energy_check=check,
                        prices=plan_prices(self.orders))


def _topup(order: Mapping[str, Any], result: Mapping[str, Any], min_energy: int
           ) -> dict[str, Any] | None:
    """The top-up of an order whose journaled purchase stood for a larger plan: the shortfall,
    once, under the order's key and :data:`TOPUP_SUFFIX` (docs/decisions.md "A resized plan
    meets its journaled purchase"). None when nothing is short, or for a top-up itself."""
    journaled = result.get("journaled_request")
    if not isinstance(journaled, Mapping) or str(order["purchase_key"]).endswith(TOPUP_SUFFIX):
        return None
    field = "count" if "count" in order else "energy_amount"
    short = int(order[field]) - int(journaled.get(field) or 0)
    if short <= 0:
        return None
    amount = short if field == "count" else max(short, min_energy)
    return {"target_address": order["target_address"], field: amount,
            "purchase_key": f"{order['purchase_key']}{TOPUP_SUFFIX}"}


def spend_keys(orders: Any) -> tuple[str, ...]:
    """The keys the batch's ``max_spend_trx`` counts under: a plan's own ``purchase_key``
    (every order of the batch, in any run, is journaled under it), else each order's."""
    if isinstance(orders, Mapping) and isinstance(orders.get("purchase_key"), str):
        return (explicit_identity(orders["purchase_key"]),)
    return tuple(explicit_identity(order["purchase_key"]) for order in checked_orders(orders))


def plan_prices(orders: Any) -> BurnPrices:
    """The burn prices a plan was made at (its node's, read once for the run), else the
    defaults: the saving each purchase logs is the plan's, not another reading's."""
    if not isinstance(orders, Mapping):
        return DEFAULT_PRICES
    try:
        return BurnPrices.of(orders.get("prices"))
    except ValueError as exc:
        raise AirflowFailException(f"the plan's prices cannot be read ({exc}); nothing "
                                   "bought") from None


def _checker(wallet: onchain.WalletEnergy) -> EnergyCheck:
    """The purchase's ``energy_check``: what of a reusable order the wallet no longer has."""

    def missing(entry: Entry, order: Order) -> int:
        return wallet.missing(order.target_address or entry.target_address,
                              order_energy(order, entry), status=order.status.value,
                              tx_hash=order.tx_hash)

    return missing
