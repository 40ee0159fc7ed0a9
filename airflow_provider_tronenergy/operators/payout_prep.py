"""A payout batch's preparation as operators: the sheet, the pre-flight, the plan, the
confirmation and the ``payout batch ready`` event.

Each is thin over the payout room (:mod:`~airflow_provider_tronenergy.payout`: ``sheet``,
``onchain``, ``energy_plan``, ``ready``), takes typed, templated arguments (checked into
:class:`~..payout.params.BatchParams` / :class:`~..payout.params.ChainParams` when it
runs) and turns the room's errors into its verdict with ``as_airflow()``: bad input fails
without retry, a node not answering is retried, no batch skips. Between them sit the
provider's other operators: address checks and activation, the approval gate, the batch
buy, the orders sensor; :func:`prepare_payout_batch` wires the whole preparation in the
DAG being defined, under the task ids the ``batch_payout_send`` example and the docs name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.sdk import BaseOperator
from airflow.sdk import Asset

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.payout import (
    energy_plan,
    onchain,
    ready,
    sheet,
    token_preflight,
)
from airflow_provider_tronenergy.payout.params import (
    DEFAULT_NODE_CONN,
    NOTHING_BOUGHT,
    BatchParams,
    ChainParams,
    checked_sender,
)
from airflow_provider_tronenergy.payout.rows import PayoutInputError
from airflow_provider_tronenergy.templated import money_given

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context

PAYOUT_BATCH_READY = Asset("tronenergy://payout-batch-ready", group="tronenergy")
"""The asset whose events carry a prepared batch (what ``TronPayoutOperator`` sends)."""
RECIPIENTS_KEY = "recipients"
"""The XCom key of the sheet's recipients, each once (what is checked on the service)."""
ACTIVATIONS_KEY = "activations"
"""The XCom key of the plan's recipients that need activating."""


class TronPayoutBatchSettingsOperator(BaseOperator):
    """The base of the steps that check the batch's settings (who pays, how long, up to
    what cost): load and plan. Not a task of its own."""

    def __init__(self, *, sender_address: str, rent_time: Decimal | float | int | str = "1",
                 max_spend_trx: Decimal | int | str, batch_id: str = "",
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        money_given(max_spend_trx=max_spend_trx)
        self.sender_address = sender_address
        self.rent_time = rent_time
        self.max_spend_trx = max_spend_trx
        self.batch_id = batch_id

    def batch(self) -> BatchParams:
        return BatchParams.checked(sender_address=self.sender_address, rent_time=self.rent_time,
                                   max_spend_trx=self.max_spend_trx, batch_id=self.batch_id)


class TronPayoutLoadOperator(TronPayoutBatchSettingsOperator):
    """Read and check a payout batch: ``payouts_file`` (CSV of ``recipient,amount`` or
    ``recipient,amount,token``, header optional) or the ``payouts`` rows (``token``
    optional: TRX, USDT, a ``T...`` contract or a name of the node connection's ``tokens``
    extra; none: the network's USDT); every bad row named by its line, the batch's
    settings checked too, so a bad one fails here, before anything is activated. Neither
    file nor rows: skipped (a scheduled run nobody handed a batch).

    Returns the rows; pushes each recipient once under :data:`RECIPIENTS_KEY`.
    """

    template_fields: Sequence[str] = ("payouts_file", "payouts", "sender_address",
                                      "rent_time", "max_spend_trx", "batch_id")

    def __init__(self, *, payouts_file: str = "",
                 payouts: Sequence[Mapping[str, Any]] | str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.payouts_file = payouts_file
        self.payouts: Any = payouts or []  # rows, or a template that renders to them

    def execute(self, context: Context) -> list[dict[str, str]]:
        with as_airflow():  # a bad row or setting fails at once; no batch: skipped
            if isinstance(self.payouts, str):  # a template rendered as text, not rows
                raise PayoutInputError(
                    f"bad parameter ({NOTHING_BOUGHT}): payouts must be a list of rows, not "
                    "text; a template needs the DAG's render_template_as_native_obj=True")
            if not sheet.no_batch(self.payouts_file, self.payouts):
                self.batch()
            rows = sheet.load_payouts(self.payouts_file or "", self.payouts or [])
        context["ti"].xcom_push(key=RECIPIENTS_KEY, value=sheet.recipients(rows))
        return rows


class TronPayoutPreflightOperator(BaseOperator):
    """Check the batch against the chain before any spend: the hot wallet's balance of each
    token, its TRX for all of them (TRX payouts, accounts they create, activations,
    bandwidth, plus ``reserve_trx``), the chain's prices, each transfer's energy estimate
    for its contract (:mod:`~..payout.token_preflight`).
    ``tron_node_conn_id=None`` is the written-out choice of no on-chain checks; an id that
    names no connection fails before anything is bought."""

    template_fields: Sequence[str] = ("payouts", "checks", "sender_address",
                                      "tron_node_conn_id", "reserve_trx")

    def __init__(self, *, payouts: Any, checks: Any, sender_address: str,
                 tron_node_conn_id: str | None = DEFAULT_NODE_CONN,
                 reserve_trx: Decimal | int | str = "0", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        money_given(reserve_trx=reserve_trx)
        self.payouts = payouts
        self.checks = checks
        self.sender_address = sender_address
        self.tron_node_conn_id = tron_node_conn_id
        self.reserve_trx = reserve_trx

    def execute(self, context: Context) -> dict[str, Any]:
        with as_airflow():  # a wallet that cannot pay fails at once; a node down retries
            settings = ChainParams.checked(tron_node_conn_id=self.tron_node_conn_id,
                                           reserve_trx=self.reserve_trx)
            return token_preflight.check_batch(self.payouts, self.checks,
                                               checked_sender(self.sender_address), settings)


class TronPayoutPlanOperator(TronPayoutBatchSettingsOperator):
    """Quote the whole batch (activations and energy) and plan its orders, refusing before
    any spend when the quote is over ``max_spend_trx`` or the service's balance. With the
    pre-flight's answer (``chain``), only the energy the wallet lacks (less
    ``energy_margin``) is rented. ``batch_id`` empty: the run's data interval.

    Returns the plan; pushes the recipients to activate under :data:`ACTIVATIONS_KEY`.
    """

    template_fields: Sequence[str] = ("payouts", "checks", "chain", "sender_address",
                                      "rent_time", "max_spend_trx", "batch_id",
                                      "energy_margin", "tronenergy_conn_id")

    def __init__(self, *, payouts: Any, checks: Any, chain: Any = None,
                 energy_margin: int | str = "0",
                 tronenergy_conn_id: str = "tronenergy_default", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.payouts = payouts
        self.checks = checks
        self.chain = chain
        self.energy_margin = energy_margin
        self.tronenergy_conn_id = tronenergy_conn_id

    def execute(self, context: Context) -> dict[str, Any]:
        hook = TronEnergyHook(self.tronenergy_conn_id)
        try:
            with as_airflow():  # a bad setting or a refused spend fails the task at once
                margin = ChainParams.checked(tron_node_conn_id=None,
                                             energy_margin=self.energy_margin).energy_margin
                plan = energy_plan.plan_energy(hook.get_conn(), self.payouts, self.checks,
                                               self.batch(), self.chain, energy_margin=margin,
                                               context=context)
        finally:
            hook.close()
        context["ti"].xcom_push(key=ACTIVATIONS_KEY, value=[
            c["address"] for c in self.checks if c["need_activate"]])
        return plan


class TronPayoutConfirmOperator(BaseOperator):
    """See the batch's delegations on chain (solidified unless ``confirm_solidified`` is
    false) within ``confirm_timeout_seconds``; a plan made without a node: nothing to see."""

    template_fields: Sequence[str] = ("plan", "orders", "tron_node_conn_id",
                                      "confirm_solidified", "confirm_timeout_seconds")

    def __init__(self, *, plan: Any, orders: Any,
                 tron_node_conn_id: str | None = DEFAULT_NODE_CONN,
                 confirm_solidified: bool | str = True,
                 confirm_timeout_seconds: float | str = "300", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan = plan
        self.orders = orders
        self.tron_node_conn_id = tron_node_conn_id
        self.confirm_solidified = confirm_solidified
        self.confirm_timeout_seconds = confirm_timeout_seconds

    def execute(self, context: Context) -> dict[str, Any]:
        with as_airflow():  # a delegation failed or not seen fails at once
            settings = ChainParams.checked(
                tron_node_conn_id=self.tron_node_conn_id,
                confirm_solidified=self.confirm_solidified,
                confirm_timeout_seconds=self.confirm_timeout_seconds)
            return onchain.confirm_batch(self.plan, self.orders or [], settings)


class TronPayoutBatchReadyOperator(BaseOperator):
    """Emit the ``payout batch ready`` event (:data:`PAYOUT_BATCH_READY`): the plan, the
    orders, the activations, the on-chain confirmation and the approval, as
    :func:`~..payout.ready.batch_ready` builds it; returned as the task's XCom too."""

    template_fields: Sequence[str] = ("plan", "orders", "activations", "confirmation",
                                      "approval")

    def __init__(self, *, plan: Any, orders: Any, activations: Any, confirmation: Any,
                 approval: Any, **kwargs: Any) -> None:
        kwargs.setdefault("outlets", [PAYOUT_BATCH_READY])
        super().__init__(**kwargs)
        self.plan = plan
        self.orders = orders
        self.activations = activations
        self.confirmation = confirmation
        self.approval = approval

    def execute(self, context: Context) -> dict[str, Any]:
        event = ready.batch_ready(self.plan, self.orders or [], self.activations or [],
                                  self.confirmation, self.approval)
        for outlet in self.outlets:
            if isinstance(outlet, Asset):
                context["outlet_events"][outlet].extra = event
        return event
