"""The chain's rule for one payout, as one function the sender and the watch both follow.

A round (:meth:`~.send.PayoutSender.send`) reads each payout's newest attempt and the
checked head once and asks :func:`next_step` once per payout; the watch
(:class:`~.watch.PayoutWatch`) asks it for the transactions it follows. What a step
hands over for transactions already signed (judge those past their expiration, offer
again those not yet acknowledged) is :meth:`~.verdict.Judge.settle`, one place for both.
"""

from __future__ import annotations

from enum import Enum
from typing import Final

from airflow_provider_tronenergy.payout.attempts import Attempt, PayoutState


class Step(str, Enum):
    """What a pass does with one payout, from its newest attempt."""

    DONE = "done"
    PERSON = "person"
    WAIT = "wait"
    REBROADCAST = "rebroadcast"
    JUDGE = "judge"
    SIGN = "sign"


def next_step(attempt: Attempt | None, head_ms: int, *, now: float, lease_s: float) -> Step:
    """The chain's rule for one payout: what may be done next, given its newest attempt,
    the checked head's time (``head_ms``) and the journal's clock (``now``, for leases).

    ``JUDGE`` is not yet a verdict: :class:`~.verdict.Judge` turns it into ``DONE``,
    ``PERSON``, ``SIGN`` (proven dead) or ``WAIT``."""
    if attempt is None or attempt.state.may_sign_next():
        return Step.SIGN
    state = attempt.state
    if state in (PayoutState.CONFIRMED, PayoutState.CANCELLED):
        return Step.DONE
    if state is PayoutState.FAILED:
        return Step.PERSON
    if state is PayoutState.SIGNING:
        return Step.SIGN if now - attempt.updated_at > lease_s else Step.WAIT
    assert attempt.expiration_ms is not None
    if attempt.expiration_ms >= head_ms:
        return Step.REBROADCAST if state is PayoutState.SIGNED else Step.WAIT
    return Step.JUDGE


JUDGED: Final = {PayoutState.CONFIRMED: Step.DONE, PayoutState.FAILED: Step.PERSON,
                 PayoutState.EXPIRED: Step.SIGN, None: Step.WAIT}
"""The step a judged payout is at (:class:`~.verdict.Judged`: its new state, or None)."""
