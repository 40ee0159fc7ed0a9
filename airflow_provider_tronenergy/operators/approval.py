"""The approval gate of a payout batch: ask a person above a threshold, before any spend.

Built on the standard provider's ``ApprovalOperator`` (Airflow 3.1+): the request
appears in the UI's Required Actions (and the REST API's ``hitlDetails``) with the
plan as its body. At or below the threshold (default 0: any spend asks), or with the
threshold written out as empty or ``None``, nothing is asked and the run goes on.
Reject, or no answer within ``response_timeout`` (the default option is Reject),
skips every task after the gate: nothing is activated or bought.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.sdk import AirflowFailException
from airflow.providers.standard.operators.hitl import ApprovalOperator

from airflow_provider_tronenergy.payout import approvals
from airflow_provider_tronenergy.payout.params import NOTHING_BOUGHT
from airflow_provider_tronenergy.templated import money_given

XCOM_RETURN_KEY = "return_value"

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context


class TronEnergyBatchApprovalOperator(ApprovalOperator):
    """Wait for a person's approval when a batch's quote is above ``approval_above_trx``.

    :param plan: the batch's plan
        (:func:`~airflow_provider_tronenergy.payout.energy_plan.plan_energy`), usually the
        planning task's output.
    :param approval_above_trx: ask when the quote (activations + energy) is above this
        many TRX (templated; default ``"0"``: a batch that spends anything asks, since a
        gate nobody set must not let money through); empty or ``None``: never ask.
    :param response_timeout: how long to wait for an answer; then the batch is
        rejected (default: 4 hours, well within an hourly schedule's next batches).

    Returns :func:`~airflow_provider_tronenergy.payout.approvals.record` (who answered, when,
    approved or not), which the ``payout batch ready`` event carries.
    """

    template_fields: Sequence[str] = (*ApprovalOperator.template_fields, "plan",
                                      "approval_above_trx")
    ui_color = "#fadbd8"

    def __init__(self, *, plan: Any, approval_above_trx: Decimal | int | str | None = "0",
                 response_timeout: timedelta | None = timedelta(hours=4),
                 **kwargs: Any) -> None:
        money_given(approval_above_trx=approval_above_trx)
        kwargs.setdefault("subject", "Approve payout batch")
        super().__init__(defaults=ApprovalOperator.REJECT, response_timeout=response_timeout,
                         ignore_downstream_trigger_rules=True, **kwargs)
        self.plan = plan
        self.approval_above_trx = approval_above_trx

    def _threshold(self) -> Any:
        try:
            return approvals.threshold(self.approval_above_trx)
        except ValueError as exc:
            raise AirflowFailException(f"bad parameter ({NOTHING_BOUGHT}): {exc}") from None

    def execute(self, context: Context) -> Any:
        """Go on at once when no approval is needed; otherwise ask, showing the plan."""
        above = self._threshold()
        if not approvals.needs_approval(self.plan, above):
            self.log.info("quote %s TRX, approval_above_trx %s: no approval needed",
                          self.plan["total_cost_quote"], above)
            return approvals.record(required=False, approved=True, above=above)
        self.subject = approvals.subject(self.plan)
        self.body = approvals.plan_markdown(self.plan, above)
        self.log.info("quote %s TRX is above approval_above_trx %s TRX: waiting for a person "
                      "(Required Actions in the UI)", self.plan["total_cost_quote"], above)
        return super().execute(context)

    def execute_complete(self, context: Context, event: dict[str, Any]) -> Any:
        """The answer: approved goes on; rejected or timed out skips the rest of the run."""
        if "error" in event:  # not answered and no default: the standard provider fails it
            return super().execute_complete(context=context, event=event)
        approved = list(event.get("chosen_options") or []) == [self.APPROVE]
        result = approvals.record(required=True, approved=approved, event=event,
                                  above=self._threshold())
        if approved:
            self.log.info("approved by %s at %s", result["by"], result["at"])
        else:
            self.log.warning("%s (%s at %s): %s; the rest of the run is skipped",
                             "no answer in time" if result["timed_out"] else "rejected",
                             result["by"], result["at"], NOTHING_BOUGHT)
            # Skipping the rest ends this call with an exception, before any return value
            # is stored: store the answer first, so the run says who rejected it and when.
            context["ti"].xcom_push(key=XCOM_RETURN_KEY, value=result)
        super().execute_complete(context=context, event=event)
        return result
