"""The energy keeper in Airflow: a run over the wallets, and the approval above a threshold.

:class:`TronEnergyKeeperOperator` reads the task's values once, builds a
:class:`~airflow_provider_tronenergy.keeper.keep.Keeper` and calls it; the keeper reads,
decides, buys and logs one line per wallet. A run woken by the keeper's watcher hands it
what the watcher read (the triggering Asset events' payloads), so a fresh reading is
not read again. :class:`TronEnergyKeeperApprovalOperator`
is the standard ``ApprovalOperator`` asking a person about the purchases the keeper left
for one (above ``approval_above_trx``); a second keeper task then buys what was approved, up
to the cost the person saw.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

from airflow.providers.common.compat.sdk import (
    AirflowFailException,
    AirflowSkipException,
    BaseOperator,
)
from airflow.providers.standard.operators.hitl import ApprovalOperator

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.keeper.book import checked_name
from airflow_provider_tronenergy.keeper.keep import NODE_NEEDED, Keeper, summary
from airflow_provider_tronenergy.keeper.policy import KeeperPolicy, KeeperPolicyError
from airflow_provider_tronenergy.keeper.reading import Seen, seen_in
from airflow_provider_tronenergy.keeper.registry import KeeperRegistry
from airflow_provider_tronenergy.purchase import journal_for
from airflow_provider_tronenergy.purchase_journal import task_scope
from airflow_provider_tronenergy.templated import as_decimal, money_given, optional_text
from airflow_provider_tronenergy.triggers.stops import stops_in, watcher_payloads
from tronenergy_protocol.address import is_valid_address

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context

NOTHING_BOUGHT = "nothing was bought"
ENV_HOUR_SECONDS: Final = "TRONENERGY_RENTAL_HOUR_SECONDS"
HOUR_SECONDS: Final = 3600.0
"""Seconds a rented hour lasts on a public chain."""


class TronEnergyKeeperOperator(BaseOperator):
    """Keep ``wallets`` at or above ``floor`` energy, within a price cap and a daily budget.

    :param wallets: the hot wallets (TRON addresses) to keep supplied; templated.
    :param floor: energy below which a wallet is topped up, or ``"N transfers"`` (first-time
        USDT transfers at the node's estimate now; ``target`` then too); templated.
    :param target: energy a top-up brings it to (or ``"N transfers"``); templated.
    :param max_price_per_10k_trx: the most it pays, in TRX per 10,000 energy; templated.
    :param max_daily_spend_trx: TRX it may spend per UTC day, all wallets; templated.
    :param approval_above_trx: a purchase costing more (TRX) is left for a person (the
        approval task), not bought; empty: never; templated.
    :param renew_before_seconds: seconds before one of its rentals ends that it renews it,
        while the wallet is in use; templated.
    :param rent_time: hours each rental lasts: a duration purchases accept that the price
        endpoint quotes too (1 on the spec's service; the connection's
        ``purchase_rent_times`` / ``price_rent_times`` extras follow another); any other
        fails the task before anything is read or bought; templated.
    :param approved: the approval task's answer (``{"approved": {wallet: max cost}}``):
        buy the purchases a person approved, at most at the cost they saw.
    :param keeper_name: names the keeper's purchases in the journal and its watcher's
        registry (default: the DAG id).
    :param wake_max_age_seconds: seconds (of chain time) a wake's reading of a wallet is
        used instead of reading the wallet again; older, or 0: the run reads the chain.
    :param tronenergy_conn_id: the ``tronenergy`` connection; templated.
    :param tron_node_conn_id: the ``tron_node`` connection; templated.
    """

    template_fields: Sequence[str] = ("wallets", "floor", "target", "max_price_per_10k_trx",
                                      "max_daily_spend_trx", "approval_above_trx",
                                      "renew_before_seconds", "rent_time", "approved",
                                      "keeper_name", "tronenergy_conn_id", "tron_node_conn_id")
    ui_color = "#d5f5e3"

    def __init__(self, *, wallets: str | Sequence[str], floor: int | str, target: int | str,
                 max_price_per_10k_trx: Decimal | int | str,
                 max_daily_spend_trx: Decimal | int | str,
                 approval_above_trx: Decimal | int | str | None = None,
                 renew_before_seconds: int | str = 600,
                 rent_time: Decimal | float | int | str = "1", approved: Any = None,
                 keeper_name: str | None = None, wake_max_age_seconds: float = 60.0,
                 tronenergy_conn_id: str = TronEnergyHook.default_conn_name,
                 tron_node_conn_id: str = TronNodeHook.default_conn_name,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        money_given(max_price_per_10k_trx=max_price_per_10k_trx,
                    max_daily_spend_trx=max_daily_spend_trx, approval_above_trx=approval_above_trx)
        self.wallets = wallets
        self.floor = floor
        self.target = target
        self.max_price_per_10k_trx = max_price_per_10k_trx
        self.max_daily_spend_trx = max_daily_spend_trx
        self.approval_above_trx = approval_above_trx
        self.renew_before_seconds = renew_before_seconds
        self.rent_time = rent_time
        self.approved = approved
        self.keeper_name = keeper_name
        self.wake_max_age_seconds = float(wake_max_age_seconds)
        self.tronenergy_conn_id = tronenergy_conn_id
        self.tron_node_conn_id = tron_node_conn_id

    def execute(self, context: Context) -> dict[str, Any]:
        """One keeper run; its result lists every wallet's decision."""
        policy, wallets, approved = self._checked()
        hour_seconds = rental_hour_seconds()
        try:
            name = checked_name(self.keeper_name or context["ti"].dag_id)
        except KeeperPolicyError as exc:
            raise AirflowFailException(f"{exc}; {NOTHING_BOUGHT}") from None
        stops = ([] if self.approved is not None
                 else stops_in(watcher_payloads(context), keeper=name))
        if stops:  # woken by a watcher that stopped: a person fixes what it says
            raise AirflowFailException(f"the keeper's watcher stopped: {stops[-1]}; "
                                       f"{NOTHING_BOUGHT}")
        with as_airflow():  # a node connection that names nothing: failed, nothing bought
            node = TronNodeHook.required(optional_text(self.tron_node_conn_id),
                                         needs=NODE_NEEDED)
        if hour_seconds != HOUR_SECONDS:
            with as_airflow():  # an unreadable network extra: failed, nothing bought
                network = TronNodeHook.network(node.connection()).name
            if network != "custom":  # node.network.CUSTOM: a sandbox or private chain
                node.close()
                raise AirflowFailException(
                    f"{ENV_HOUR_SECONDS}={hour_seconds:g} is set where the keeper's node "
                    f"connection {node.tron_node_conn_id!r} is on {network}, where a rented "
                    f"hour lasts {HOUR_SECONDS:g} s: unset it (it is for a time-compressed "
                    f"sandbox, a custom chain); {NOTHING_BOUGHT}")
        service = TronEnergyHook(tronenergy_conn_id=self.tronenergy_conn_id)
        try:
            with as_airflow():  # a registry on one host's file where tasks run on several
                registry = KeeperRegistry()
        except BaseException:
            node.close()
            raise
        try:
            with as_airflow():  # KeeperBlind is retryable: the next try, or wake, reads again
                node.check_chain()  # WrongChain (not retried) before anything is bought
                keeper = Keeper(name, policy,
                                service.get_conn(), node, journal_for("keeper"),
                                scope=task_scope(context, self.task_id), log=self.log,
                                hour_seconds=hour_seconds, registry=registry,
                                wake_max_age=self.wake_max_age_seconds)
                # A run buying what a person approved reads the chain again: it moved
                # while they read.
                seen = {} if self.approved is not None else wakes(context, name)
                decisions = keeper.keep(wallets, approved, seen=seen)
            return {**summary(decisions), "policy": policy.to_dict()}
        finally:
            registry.close()
            node.close()
            service.close()

    def _checked(self) -> tuple[KeeperPolicy, list[str], dict[str, Decimal]]:
        """The task's values, checked before anything is read or bought."""
        try:
            policy = KeeperPolicy.from_values({
                "floor": self.floor, "target": self.target,
                "max_price_per_10k_trx": self.max_price_per_10k_trx,
                "max_daily_spend_trx": self.max_daily_spend_trx,
                "approval_above_trx": self.approval_above_trx,
                "renew_before_seconds": self.renew_before_seconds, "rent_time": self.rent_time})
        except KeeperPolicyError as exc:
            raise AirflowFailException(f"{exc}; {NOTHING_BOUGHT}") from None
        wallets = [self.wallets] if isinstance(self.wallets, str) else list(self.wallets or [])
        bad = [w for w in wallets if not is_valid_address(w)]
        if not wallets or bad:
            raise AirflowFailException(
                f"wallets must be TRON addresses (base58check): {bad or 'none given'}; "
                f"{NOTHING_BOUGHT}")
        if len(set(wallets)) != len(wallets):
            raise AirflowFailException(f"wallets lists an address twice; {NOTHING_BOUGHT}")
        try:
            approved = approved_costs(self.approved)
        except ValueError as exc:
            raise AirflowFailException(f"{exc}; {NOTHING_BOUGHT}") from None
        return policy, wallets, approved


def rental_hour_seconds() -> float:
    """Seconds of chain time a rented hour lasts: 3,600, unless ``$TRONENERGY_RENTAL_HOUR_
    SECONDS`` says otherwise for a time-compressed sandbox (a ``custom`` chain; on any other
    network the keeper refuses it before buying). A setting of the deployment, not of a
    DAG: a parameter would offer every DAG a wrong clock on mainnet."""
    text = os.environ.get(ENV_HOUR_SECONDS, "").strip()
    if not text:
        return HOUR_SECONDS
    try:
        value = float(as_decimal(text, ENV_HOUR_SECONDS))
    except ValueError as exc:
        raise AirflowFailException(f"{exc}; {NOTHING_BOUGHT}") from None
    if value <= 0:
        raise AirflowFailException(f"{ENV_HOUR_SECONDS} must be above 0; {NOTHING_BOUGHT}")
    return value


def wakes(context: Mapping[str, Any], keeper: str) -> dict[str, Seen]:
    """What the watcher read, per wallet, in the Asset events that triggered this run (the
    newest per wallet)."""
    return seen_in(watcher_payloads(context), keeper)


def approved_costs(answer: Any) -> dict[str, Decimal]:
    """``{wallet: the most a person allowed}`` from the approval task's answer."""
    if not isinstance(answer, Mapping):
        return {}
    allowed = answer.get("approved") or {}
    if not isinstance(allowed, Mapping):
        raise AirflowFailException(f"approved is not a mapping of wallets; {NOTHING_BOUGHT}")
    return {str(w): as_decimal(cost, "approved") for w, cost in allowed.items()}


class TronEnergyKeeperApprovalOperator(ApprovalOperator):
    """Ask a person about the purchases a keeper run left for one; skip when there are none.

    :param kept: the keeper task's result. Approve returns ``{"approved": {wallet: cost}}``
        for the buying task; Reject, or no answer in ``response_timeout``, skips it.
    """

    template_fields: Sequence[str] = (*ApprovalOperator.template_fields, "kept")
    ui_color = "#fadbd8"

    def __init__(self, *, kept: Any, response_timeout: timedelta | None = timedelta(hours=1),
                 **kwargs: Any) -> None:
        kwargs.setdefault("subject", "Approve energy purchases of the keeper")
        super().__init__(defaults=ApprovalOperator.REJECT, response_timeout=response_timeout,
                         **kwargs)
        self.kept = kept

    def _asked(self) -> list[Mapping[str, Any]]:
        decisions = (self.kept or {}).get("decisions", []) if isinstance(self.kept, Mapping) \
            else []
        return [d for d in decisions if d.get("action") == "ask"]

    def execute(self, context: Context) -> Any:
        """Skip at once when nothing waits for a person; otherwise ask, listing it."""
        asked = self._asked()
        if not asked:
            raise AirflowSkipException("no purchase above approval_above_trx: nothing to approve")
        self.body = "\n".join(
            ["The keeper would buy, for each wallet below, more than `approval_above_trx`:", "",
             "| Wallet | Available | Energy | Cost (TRX) | Why |", "|---|---|---|---|---|",
             *(f"| `{d['address']}` | {d['available']:,} | {d['energy']:,} | {d['cost']} | "
               f"{d['reason']} |" for d in asked), "",
             "Approve: the next task buys them, each at most at the cost shown (it reads the "
             "chain again first). Reject, or no answer: nothing is bought; the next wake "
             "asks again."])
        return super().execute(context)

    def execute_complete(self, context: Context, event: dict[str, Any]) -> Any:
        """Approved: the wallets and costs to buy; otherwise the buying task is skipped."""
        if "error" in event:
            return super().execute_complete(context=context, event=event)
        approved = list(event.get("chosen_options") or []) == [self.APPROVE]
        super().execute_complete(context=context, event=event)  # skips downstream if not
        if not approved:
            return {"approved": {}}
        return {"approved": {d["address"]: d["cost"] for d in self._asked()}}
