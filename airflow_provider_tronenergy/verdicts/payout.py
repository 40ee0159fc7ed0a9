"""The payout room's errors as a payout task's verdict, decided in one place.

The payout room (:mod:`..payout`) raises the provider's errors only
(:mod:`..errors`); the send operator runs each entry point through :func:`as_task`,
so "bad input is never retried" is read in :func:`task_verdict` and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from airflow.providers.common.compat.sdk import AirflowException, AirflowFailException

from airflow_provider_tronenergy.airflow_errors import to_airflow
from airflow_provider_tronenergy.errors import TronEnergyProviderError
from airflow_provider_tronenergy.payout.rows import PayoutInputError
from airflow_provider_tronenergy.payout.trust import UnreliableNode
from airflow_provider_tronenergy.signer import SignerError

__all__ = ["NOTHING_SIGNED", "as_task", "signer_failure", "task_verdict"]
NOTHING_SIGNED: Final = "nothing was signed"


def as_task(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run a task entry point; the payout room's errors become the task's verdict here,
    in one place (:func:`task_verdict`)."""
    try:
        return call()
    except TronEnergyProviderError as exc:
        raise task_verdict(exc) from None


def task_verdict(exc: TronEnergyProviderError) -> BaseException:
    """What the task does with an error of the payout room: the provider's rule
    (:func:`~..airflow_errors.to_airflow`: its errors say whether a retry may help), with
    what the payout task adds to the message.

    **Never retried**: bad input (the rows, a setting, a payout id journaled for another
    payout), a batch the sender cannot pay, a signer that cannot sign for good: a retry
    would fail the same way, and money must not move on a guess. **Retried**: what time
    may fix (a node that lies, lags or does not answer, transfers in flight, the sender's
    lease held by another task, a signer throttled or unreachable). Nothing was signed in
    either case, or what was is in the journal, which the retry reads first."""
    if isinstance(exc, SignerError):
        return signer_failure(exc)
    verdict = to_airflow(exc)
    if verdict is exc:
        return exc
    return type(verdict)(_message(exc))


def _message(exc: TronEnergyProviderError) -> str:
    if isinstance(exc, PayoutInputError):
        return f"bad input ({NOTHING_SIGNED}): {exc}"
    if isinstance(exc, UnreliableNode):
        return (f"the node is not believed ({NOTHING_SIGNED} or judged on its word): {exc}; "
                "a retry asks again")
    return str(exc)


def signer_failure(exc: SignerError) -> AirflowException:
    """A signer's refusal as the task's verdict: throttled or unreachable fails the try
    (retried); any other (no such key, not permitted, disabled) fails the task. The
    payouts it did not sign were never journaled as signed (:mod:`..payout.send`)."""
    if exc.retryable:
        return AirflowException(f"{exc} ({NOTHING_SIGNED} with it; a retry signs again)")
    return AirflowFailException(f"{exc} ({NOTHING_SIGNED} with it)")
