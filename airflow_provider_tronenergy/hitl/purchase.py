"""An unknown purchase outcome, answered by a person in Airflow (``on_ambiguous="ask"``).

Instead of failing with "run ``tronenergy-purchases resolve``", the purchase
operator writes a human-in-the-loop request (Airflow 3.1+: the UI's Required
Actions, the REST API's ``hitlDetails``) and waits for its answer:

* **placed**, with the order id from the service's console: the order is read
  from the service and checked against the purchase (as ``tronenergy-purchases
  resolve --order-id`` checks it); if it matches, the journal records it and the
  task goes on with it, buying nothing; if not, nothing is recorded and the try
  fails (retryable) naming both sides, so the retry asks again;
* **not placed**: the journal records it and the task buys now, once;
* **abort**: the task fails without retry, nothing is bought, and the outcome
  stays unknown (the journal keeps the note) for the next run to ask again.

The answer lives in the journal, not in the task: a retry, a clear or a later run
acts on it. The wait uses the standard provider's ``HITLTrigger`` (Airflow < 3.3)
or parks the task in ``awaiting_input`` (3.3+), as its ``HITLOperator`` does.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final, NoReturn

from airflow.providers.common.compat.sdk import AirflowException, AirflowFailException
from airflow.sdk import Param
from airflow.sdk.definitions.param import ParamsDict

from airflow_provider_tronenergy.client import Order
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.purchase.outcomes import (
    RESOLVE_COMMAND,
    UnknownOutcome,
    journal_errors,
    utc,
)
from airflow_provider_tronenergy.purchase_journal import (
    Entry,
    EntryState,
    JournalError,
    OrderMismatch,
    PurchaseJournal,
    read_order,
    resolve_placed,
)

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context

PLACED: Final = "It was placed"
NOT_PLACED: Final = "It was not placed: buy now, once"
ABORT: Final = "Abort"
OPTIONS: Final = [PLACED, NOT_PLACED, ABORT]


def question(entry: Entry, cause: str = "") -> tuple[str, str]:
    """The request's subject and Markdown body for one unknown attempt."""
    subject = (f"Was this energy purchase placed? {entry.description}, sent "
               f"{utc(entry.sent_at)}")
    lost = f" ({cause})" if cause else ""
    body = "\n".join([
        f"The purchase **{entry.description}**, sent at **{utc(entry.sent_at)}**, may or may "
        f"not have been placed: its answer was lost{lost}. Check the service console for an "
        f"order for `{entry.target_address}` placed around that time, then answer:",
        "",
        f"- **{PLACED}**: enter its order id below. It is checked with the service first: "
        "an order for another address, energy or rent time, or one another purchase "
        "already holds, is refused. The journal records it and the run waits for that "
        "order; nothing more is bought.",
        f"- **{NOT_PLACED}**: the run buys it now, once.",
        f"- **{ABORT}**: the task fails and nothing is bought; the outcome stays unknown "
        "and the next run asks again.",
        "",
        f"Journal identity `{entry.identity}`, attempt {entry.attempt}. The same answer can "
        f"be given on a command line: `{RESOLVE_COMMAND} '{entry.identity}' --order-id ...` "
        "or `--not-placed`.",
    ])
    return subject, body


def _params() -> dict[str, Any]:
    form = ParamsDict({"order_id": Param(
        "", type="string", title="Order id",
        description=f"only for '{PLACED}': the order id shown in the service's console")})
    return {k: form.get_param(k).serialize() for k in form}


def parks_tasks() -> bool:
    """Airflow 3.3+ parks a waiting task in ``awaiting_input``; older releases defer."""
    from airflow import __version__
    from packaging.version import Version

    return Version(Version(__version__).base_version) >= Version("3.3")


def _responder(event: dict[str, Any]) -> str:
    user = event.get("responded_by_user") or {}
    name = user.get("name") or user.get("id") or "unknown user"
    return f"{name} (Airflow, {event.get('responded_at')})"


@dataclass
class Asker:
    """Asks a person about one unknown outcome and records the answer, for one operator.

    ``defer`` is the operator's: the wait resumes in its ``execute_answer``.
    """

    tronenergy_conn_id: str
    ask_timeout: timedelta | None
    log: Any
    defer: Callable[..., Any]
    journal: Callable[[], PurchaseJournal]
    # Airflow keeps one Required Action per task try, and a second request in the same
    # try would keep the first one's text: a batch that already asked says "next try".
    may_ask: bool = True

    def _read_order(self, order_id: str) -> Order | str:
        """The order a person named, from the service (or why it could not be read)."""
        hook = TronEnergyHook(tronenergy_conn_id=self.tronenergy_conn_id)
        try:
            return read_order(hook.get_conn(), order_id)
        finally:
            hook.close()

    def ask(self, context: Context, unknown: UnknownOutcome) -> NoReturn:
        """Write the request for ``unknown`` and wait for its answer (``execute_answer``)."""
        from airflow.sdk.execution_time.hitl import upsert_hitl_detail
        from airflow.sdk.timezone import utcnow

        entry = unknown.entry
        if not self.may_ask:
            raise AirflowException(
                f"purchase {entry.identity} ({entry.description}) has an unknown outcome "
                "too, and this task try already asked about another one (Airflow keeps one "
                "Required Action per try); nothing was bought for it. The next try asks.")
        subject, body = question(entry, unknown.cause)
        params = _params()
        ti_id = context["task_instance"].id
        upsert_hitl_detail(ti_id=ti_id, options=list(OPTIONS), subject=subject, body=body,
                           defaults=None, multiple=False, params=params)
        self.log.warning("purchase %s (%s, sent %s) has an unknown outcome: asking a person "
                         "(Required Actions in the UI)", entry.identity, entry.description,
                         utc(entry.sent_at))
        kwargs = {"identity": entry.identity, "attempt": entry.attempt}
        if not parks_tasks():
            from airflow.providers.standard.triggers.hitl import HITLTrigger

            timeout_at = utcnow() + self.ask_timeout if self.ask_timeout else None
            # HITLTrigger pops from the params it is given: hand it its own copy.
            self.defer(trigger=HITLTrigger(ti_id=ti_id, options=list(OPTIONS),
                                           params=copy.deepcopy(params),
                                           defaults=None, multiple=False,
                                           timeout_datetime=timeout_at),
                       method_name="execute_answer", kwargs=kwargs)
            raise AssertionError("defer() returned") from None
        from airflow.sdk.exceptions import TaskAwaitingInput

        raise TaskAwaitingInput(method_name="execute_answer", kwargs=kwargs,
                                timeout=self.ask_timeout)

    def record_answer(self, event: dict[str, Any], identity: str, attempt: int) -> None:
        """Write the person's answer to the journal, or stop the task as they said."""
        if "error" in event:
            raise AirflowFailException(
                f"nobody answered whether purchase {identity} (attempt {attempt}) was placed "
                f"({event.get('error')}); nothing was bought. It is still unknown: the next "
                f"run asks again, or resolve it with {RESOLVE_COMMAND} '{identity}' ...")
        chosen = list(event.get("chosen_options") or [])
        by = _responder(event)
        journal = self.journal()
        with journal_errors():
            entry = journal.latest(identity)
        if entry is None or entry.attempt != attempt or entry.state is not EntryState.SENDING:
            self.log.info("purchase %s was resolved meanwhile (%s); going on with the journal's "
                          "answer", identity, entry.state.value if entry else "no entry")
            return
        order_id = str((event.get("params_input") or {}).get("order_id") or "").strip()
        try:
            if chosen == [PLACED]:
                if not order_id:
                    raise AirflowException(
                        f"{by} answered '{PLACED}' without an order id; nothing was recorded "
                        "or bought. A retry asks again.")
                try:
                    with journal_errors():
                        _, check = resolve_placed(journal, identity, order_id, self._read_order,
                                                  by=by, note="answered in Airflow's Required "
                                                  "Actions")
                except OrderMismatch as mismatch:
                    raise self._refused(journal, entry, by, mismatch) from None
                self.log.info("%s: purchase %s was placed: %s", by, identity, check.agreed())
            elif chosen == [NOT_PLACED]:
                with journal_errors():
                    journal.resolve(identity, not_placed=True, by=by,
                                    note="answered in Airflow's Required Actions")
                self.log.info("%s: purchase %s was not placed; buying it now, once", by,
                              identity)
            else:
                with journal_errors():
                    journal.annotate(entry, f"abort chosen by {by}")
                raise AirflowFailException(
                    f"{by} chose to abort: purchase {identity} ({entry.description}) stays "
                    "unknown and nothing was bought")
        except JournalError as exc:  # e.g. an order id that is not one
            raise AirflowException(f"{by}'s answer could not be recorded ({exc}); nothing "
                                   "was bought. A retry asks again.") from None

    def _refused(self, journal: PurchaseJournal, entry: Entry, by: str,
                 mismatch: OrderMismatch) -> AirflowException:
        """A "placed" answer whose order is not this purchase's: noted, not recorded."""
        check = mismatch.check
        what = ", ".join([d.what for d in check.differences] + list(check.problems))
        with journal_errors():
            journal.annotate(entry, f"order {check.order_id} from {by} refused: {what}")
        return AirflowException(
            f"{by} answered '{PLACED}', but {mismatch}\nNothing was bought. A retry asks "
            f"again. If it is this purchase's order all the same, record it on the command "
            f"line: {RESOLVE_COMMAND} '{entry.identity}' --order-id {check.order_id} --force "
            "--reason \"...\"")
