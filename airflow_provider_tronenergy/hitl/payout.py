"""Payouts that failed on chain, put to a person in Airflow (``on_ambiguous="ask"``).

A transfer that ended ``REVERT`` or ``OUT_OF_ENERGY`` spent its fee and moved no
tokens. Whether to pay it again is a person's call (was the recipient's contract
refusing? was the energy gone?), never the task's: the question shows each receipt,
and the answer goes to the payout journal, where the CLI (``tronenergy-payouts
resolve``) would have put it:

* **send again**: each failed payout gets a new transaction, once;
* **do not send**: they are cancelled, and the batch ends without them;
* **abort**: nothing is recorded; the task fails and the next run asks again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final, NoReturn

from airflow.providers.common.compat.sdk import AirflowException, AirflowFailException

from airflow_provider_tronenergy.hitl.purchase import parks_tasks
from airflow_provider_tronenergy.payout.by_token import shown_amount
from airflow_provider_tronenergy.payout.journal import (
    Attempt,
    PayoutJournal,
    PayoutJournalError,
    PayoutState,
)

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context

RESEND: Final = "Send them again (new transactions)"
CANCEL: Final = "Do not send them"
ABORT: Final = "Abort"
OPTIONS: Final = [RESEND, CANCEL, ABORT]


def failed_lines(failed: Sequence[Attempt]) -> list[str]:
    """One line per failed payout: identity, recipient, amount, tx and what the chain said."""
    lines = []
    for a in failed:
        receipt = a.receipt or {}
        lines.append(f"  {a.identity}: {shown_amount(a.token, a.units)} to {a.recipient}, "
                     f"tx {a.txid} in block {a.block_number}: "
                     f"{receipt.get('result', 'FAILED')} (energy "
                     f"{receipt.get('energy_total', '?')}, TRX burned "
                     f"{receipt.get('trx_burned', '?')})")
    return lines


@dataclass
class PayoutAsker:
    """Asks a person about one batch's failed payouts and records the answer."""

    journal: PayoutJournal
    log: Any
    defer: Callable[..., Any]
    ask_timeout: timedelta | None

    def ask(self, context: Context, batch_id: str, failed: Sequence[Attempt]) -> NoReturn:
        """Write the Required Action and wait for its answer (``execute_answer``)."""
        from airflow.sdk.execution_time.hitl import upsert_hitl_detail

        subject = f"{len(failed)} payout(s) of batch {batch_id} FAILED on chain: pay again?"
        body = "\n".join([
            f"These payouts of batch **{batch_id}** reached a block and **failed**: the fee "
            "was spent, no tokens moved. Nothing is sent again unless you say so.", "",
            *[f"- {line.strip()}" for line in failed_lines(failed)], "",
            f"- **{RESEND}**: each gets a new transaction, once.",
            f"- **{CANCEL}**: they are cancelled; the batch ends without them.",
            f"- **{ABORT}**: nothing is recorded; the task fails and the next run asks again.",
            "", "The same answer on a command line: `tronenergy-payouts resolve IDENTITY "
            "--resend` or `--cancel`."])
        ti_id = context["task_instance"].id
        upsert_hitl_detail(ti_id=ti_id, options=list(OPTIONS), subject=subject, body=body,
                           defaults=None, multiple=False, params={})
        self.log.warning("%d payouts of batch %s failed on chain: asking a person (Required "
                         "Actions)", len(failed), batch_id)
        kwargs = {"identities": [a.identity for a in failed]}
        if not parks_tasks():
            from airflow.providers.standard.triggers.hitl import HITLTrigger
            from airflow.sdk.timezone import utcnow

            self.defer(trigger=HITLTrigger(
                ti_id=ti_id, options=list(OPTIONS), params={}, defaults=None, multiple=False,
                timeout_datetime=utcnow() + self.ask_timeout if self.ask_timeout else None),
                method_name="execute_answer", kwargs=kwargs)
            raise AssertionError("defer() returned")
        from airflow.sdk.exceptions import TaskAwaitingInput

        raise TaskAwaitingInput(method_name="execute_answer", kwargs=kwargs,
                                timeout=self.ask_timeout)

    def record_answer(self, event: dict[str, Any], identities: Sequence[str]) -> None:
        """Write the person's answer to the journal, or stop the task as they said."""
        if "error" in event:
            raise AirflowFailException(f"nobody answered about the failed payouts "
                                       f"({event.get('error')}); nothing was sent again")
        chosen = list(event.get("chosen_options") or [])
        user = event.get("responded_by_user") or {}
        by = f"{user.get('name') or user.get('id') or 'unknown user'} (Airflow)"
        if chosen not in ([RESEND], [CANCEL]):
            raise AirflowFailException(f"{by} chose to abort: the failed payouts stay failed "
                                       "and nothing was sent again")
        for identity in identities:
            newest = self.journal.latest([identity]).get(identity)
            if newest is None or newest.state is not PayoutState.FAILED:
                continue  # resolved meanwhile (the CLI, another try)
            try:
                self.journal.resolve(identity, resend=chosen == [RESEND], by=by,
                                     note="answered in Airflow's Required Actions",
                                     attempt=newest.attempt)
            except PayoutJournalError as exc:
                raise AirflowException(f"{by}'s answer could not be recorded ({exc})") from None
        self.log.info("%s: %s for %d payouts", by, chosen[0], len(identities))
