"""Judging payout transactions, and offering their bytes again: one rule for sender and watch.

An attempt past its expiration by the head is judged **dead** (it can never execute, and
its payout may be signed anew) only when all of these hold:

1. the node's newest solidified block, checked and read by number on the solidity API
   (:meth:`~.trust.ChainView.solid`: not ahead of this worker's clock, not backwards),
   is past its expiration;
2. the node has no receipt for it there;
3. its own signed bytes, offered once more, are refused as expired
   (``TRANSACTION_EXPIRATION_ERROR``). java-tron's ``Wallet.broadcastTransaction`` checks
   the expiration against its next block slot before TAPOS, the signature or duplicates,
   so an expired transaction gets that code from an honest node whose head is past it.
   Any other answer means wait: accepted (it may still execute), ``DUP_TRANSACTION_ERROR``
   (the node's txID cache, up to an hour), ``TAPOS_ERROR`` (the node lacks the reference
   block, so its head is not past the expiration: it says nothing of expiry), no answer;
4. with a confirming node (a second connection): its solidified block, checked the same
   way, is past the expiration too and it has no receipt either.

A receipt found on the way counts only once :meth:`~.trust.ChainView.receipt_problem`
finds none; one that does not hold up leaves the attempt in flight (logged, counted).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from airflow_provider_tronenergy.fanout import side_by_side
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.models import Block, BroadcastAnswer, TransactionInfo
from airflow_provider_tronenergy.node.tokens import TRX
from airflow_provider_tronenergy.payout.journal import Attempt, PayoutJournal, PayoutState
from airflow_provider_tronenergy.payout.receipts import CONFIRMED_ON, HEAD, SOLIDIFIED, outcome_of
from airflow_provider_tronenergy.payout.trust import BudgetSpent, ChainView

log = logging.getLogger(__name__)
EXPIRED: Final = "TRANSACTION_EXPIRATION_ERROR"
Answer = BroadcastAnswer | str
"""The node's answer to a broadcast, or ``"no answer (...)"``."""
UNREAD: Final = "unread"
"""A receipt (or its block) a watch step's budget did not reach: the attempt waits."""
LATER: Final = "later"
"""A receipt in a block above the one read as the top (a newer block, or a node that
contradicts itself): not yet counted, and never taken as "no receipt"."""


def offer(journal: PayoutJournal, node: Any, items: Iterable[tuple[Attempt, dict[str, Any]]],
          *, concurrency: int = 16, spend: Callable[[], bool] | None = None
          ) -> list[tuple[Attempt, Answer]]:
    """Broadcast each signed transaction (while ``spend`` allows); acceptances and other
    answers go to the journal (an answer never decides an attempt: the chain does)."""
    chosen = []
    for item in items:
        if spend is not None and not spend():
            break
        chosen.append(item)

    def one(item: tuple[Attempt, dict[str, Any]]) -> tuple[Attempt, Answer]:
        try:
            return item[0], node.broadcast(item[1])
        except NodeError as exc:
            return item[0], f"no answer ({exc})"

    answers = side_by_side(one, chosen, max_concurrency=concurrency, name="payout")
    accepted = [a for a, answer in answers
                if isinstance(answer, BroadcastAnswer) and answer.accepted]
    other = [(a, answer if isinstance(answer, str) else answer.describe())
             for a, answer in answers
             if not (isinstance(answer, BroadcastAnswer) and answer.accepted)]
    journal.mark_sent(accepted)
    if other:
        journal.note_answers(other)
    return answers


def refused_as_expired(answer: Answer) -> bool:
    """The node refused the bytes because they are past their expiration."""
    return isinstance(answer, BroadcastAnswer) and not answer.accepted and answer.code == EXPIRED


@dataclass
class Judged:
    """What judging decided, by payout identity: the new state, or None (wait)."""

    states: dict[str, PayoutState | None] = field(default_factory=dict)
    unreliable: int = 0
    """Receipts (or a confirming node's word) not believed: those attempts wait."""
    answers: list[tuple[Attempt, Answer]] = field(default_factory=list)
    """The node's answers to the transactions :meth:`Judge.settle` offered again."""


class Judge:
    """Decides in-flight attempts from the chain (see the module): records receipts,
    proves expiry, and marks both in the journal."""

    def __init__(self, journal: PayoutJournal, view: ChainView, *,
                 confirm: ChainView | None = None, concurrency: int = 16,
                 log: Any = log) -> None:
        self.journal, self.view, self.confirm = journal, view, confirm
        self.concurrency, self.log = concurrency, log

    def settle(self, past: Sequence[Attempt], unacknowledged: Sequence[Attempt],
               judged: Judged | None = None) -> Judged:
        """The work a round or a watch step hands over for transactions already signed,
        as :func:`~.steps.next_step` sorted them, one place for the sender and the watch:
        ``past`` (``JUDGE``) judged (:meth:`judge`), then ``unacknowledged``
        (``REBROADCAST``: signed, not expired, no node's acceptance journaled) offered
        again, the same bytes (the chain takes a txID once: harmless)."""
        judged = judged if judged is not None else Judged()
        if past:
            verdict = self.judge(past)
            judged.states.update(verdict.states)
            judged.unreliable += verdict.unreliable
        again = [(a, a.signed_tx) for a in unacknowledged if a.signed_tx]
        if again:
            self.log.info("broadcasting %d journaled payout transaction(s) again (same "
                          "bytes, not yet known to the chain)", len(again))
            judged.answers.extend(offer(self.journal, self.view.node, again,
                                        concurrency=self.concurrency, spend=self.view.spend))
        return judged

    def record(self, found: Mapping[str, tuple[Attempt, TransactionInfo]], *, top: Block,
               solidified: bool, judged: Judged | None = None) -> Judged:
        """Record each checked receipt (``txid -> (attempt, receipt)``); one that does not
        hold up is logged and counted, and its attempt stays in flight."""
        judged = judged if judged is not None else Judged()
        outcomes = []
        try:
            for txid, (attempt, info) in found.items():
                problem = self.view.receipt_problem(info, top=top, solidified=solidified,
                                                    signatures=attempt.signatures,
                                                    trx=attempt.token == TRX)
                if problem is not None:
                    judged.unreliable += 1
                    judged.states[attempt.identity] = None
                    self.log.warning("the node's receipt of %s (payout %s) is not believed: %s;"
                                     " it stays in flight", txid, attempt.identity, problem)
                    continue
                outcome = outcome_of(info)
                outcomes.append((attempt, outcome.succeeded, outcome.block, {
                    **outcome.to_dict(), CONFIRMED_ON: SOLIDIFIED if solidified else HEAD}))
                judged.states[attempt.identity] = (PayoutState.CONFIRMED if outcome.succeeded
                                                   else PayoutState.FAILED)
        finally:  # what was checked before a spent budget is kept
            if outcomes:
                self.journal.record_outcomes(outcomes)
                failed = sum(1 for o in outcomes if not o[1])
                self.log.info("%d payout(s) reached block(s) up to %d%s", len(outcomes),
                              max(o[2] for o in outcomes),
                              f"; {failed} FAILED on chain" if failed else "")
        return judged

    def receipt(self, attempt: Attempt, *, top: Block, solidified: bool
                ) -> TransactionInfo | str | None:
        """``attempt``'s receipt up to block ``top`` (None: none), its block read by number
        beside it (so :meth:`record` needs no request); :data:`UNREAD` when the budget
        ran out first, :data:`LATER` for one above ``top``."""
        assert attempt.txid is not None
        if not self.view.spend():
            return UNREAD
        info: TransactionInfo | None = self.view.node.get_transaction_info(
            attempt.txid, solidified=solidified)
        if info is None:
            return None
        if info.block_number > top.number:
            return LATER
        try:
            self.view.block(info.block_number, solidified=solidified)
        except BudgetSpent:
            return UNREAD
        return info

    def judge(self, past: Sequence[Attempt]) -> Judged:
        """Attempts past their expiration by the head: recorded, proven dead, or waiting."""
        judged = Judged({a.identity: None for a in past})
        if not past:
            return judged
        solid = self.view.solid()
        due = [a for a in past if a.txid and a.expiration_ms is not None
               and a.expiration_ms < solid.timestamp_ms]
        receipts = side_by_side(lambda a: self.receipt(a, top=solid, solidified=True), due,
                                max_concurrency=self.concurrency, name="judge")
        found = {a.txid: (a, info) for a, info in zip(due, receipts, strict=True)
                 if isinstance(info, TransactionInfo) and a.txid}
        self.record(found, top=solid, solidified=True, judged=judged)
        unseen = [a for a, info in zip(due, receipts, strict=True)
                  if info is None and a.signed_tx]
        answers = offer(self.journal, self.view.node, [(a, a.signed_tx or {}) for a in unseen],
                        concurrency=self.concurrency, spend=self.view.spend)
        refused = [a for a, answer in answers if refused_as_expired(answer)]
        if len(refused) < len(answers):
            self.log.warning(
                "%d payout transaction(s) past their expiration on solidified block %d were "
                "not refused as expired when offered again (%s): they may still execute, so "
                "nothing is signed anew for them yet", len(answers) - len(refused), solid.number,
                next(answer if isinstance(answer, str) else answer.describe()
                     for _, answer in answers if not refused_as_expired(answer)))
        dead, second = self._confirmed(refused, judged)
        if dead:
            self.journal.mark_expired(dead, (
                f"not on chain: solidified block {solid.number} (read by number) is past its "
                "expiration, the node has no receipt for it, and it refused the bytes as "
                "expired" + (f"; the confirming node agrees (solidified block {second})"
                             if second is not None else "")))
            self.log.info("%d payout transaction(s) expired without reaching the chain "
                          "(proven on solidified block %d): they need a new signature",
                          len(dead), solid.number)
            for attempt in dead:
                judged.states[attempt.identity] = PayoutState.EXPIRED
        return judged

    def _confirmed(self, refused: list[Attempt], judged: Judged
                   ) -> tuple[list[Attempt], int | None]:
        """The attempts the confirming node agrees are dead (all, without one)."""
        if not refused or self.confirm is None:
            return refused, None
        confirm = self.confirm
        try:
            solid = confirm.solid()
            dead = []
            for attempt in refused:
                assert attempt.txid is not None and attempt.expiration_ms is not None
                if attempt.expiration_ms >= solid.timestamp_ms:
                    why = f"its solidified block {solid.number} is not past the expiration"
                elif not confirm.spend():
                    continue  # a watch step's budget: the next step asks again
                elif confirm.node.get_transaction_info(attempt.txid,
                                                       solidified=True) is not None:
                    why = "it has a receipt for it"
                else:
                    dead.append(attempt)
                    continue
                judged.unreliable += 1
                self.log.warning("the confirming node disagrees that %s (payout %s) can never "
                                 "execute: %s; it waits", attempt.txid, attempt.identity, why)
        except NodeError as exc:
            judged.unreliable += len(refused)
            self.log.warning("the confirming node could not confirm that %d payout "
                             "transaction(s) can never execute (%s): they wait",
                             len(refused), exc)
            return [], None
        return dead, solid.number
