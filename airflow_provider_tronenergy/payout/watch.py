"""Following a batch's payout transactions to their receipts: one rule for loop and trigger.

The operator's own loop and the deferrable trigger both call :meth:`PayoutWatch.step`,
so they agree on what the chain says. A step reads, within ``budget`` requests:

* the block to confirm at (the head, or the newest solidified block when asked),
  checked against the worker's clock (:mod:`.trust`);
* receipts the cheaper way: whole blocks (``gettransactioninfobyblocknum``, every
  receipt of a block in one request) from the oldest open transaction's reference
  block on, or, when fewer transactions are open than blocks are left to read, each
  open transaction's receipt; a receipt counts once its block, read by number (once
  per block), holds the transaction and its figures are the chain's; one that does not
  hold up leaves the attempt in flight (``unreliable``);
* the rest sorted by :func:`~.steps.next_step` against that block, as the sender sorts
  them, and handed to :meth:`~.verdict.Judge.settle`, the sender's hand-over too: a
  transaction past its expiration judged (``expired`` only when proven: the operator
  signs that payout anew, the watch never does), the signed bytes of transactions no
  node has acknowledged offered again (harmless).

Every outcome goes to the journal at once, so a watch restarted anywhere (a new
trigger, a retried task) goes on from what the journal says. A batch whose payout
(its ``payout_id``) another batch signed, still in flight, follows that batch too
(``follow``): the payout is the same, and so is its transaction.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.models import Block, TransactionInfo
from airflow_provider_tronenergy.node.protocol import Node
from airflow_provider_tronenergy.payout.journal import Attempt, PayoutJournal, PayoutState
from airflow_provider_tronenergy.payout.steps import Step, next_step
from airflow_provider_tronenergy.payout.trust import DEFAULT_TOLERANCE_S, BudgetSpent, ChainView
from airflow_provider_tronenergy.payout.verdict import UNREAD, Judge, Judged

log = logging.getLogger(__name__)
__all__ = ["NodeError", "PayoutWatch", "WatchStatus", "count", "still_in_flight"]


@dataclass(frozen=True)
class WatchStatus:
    """Where a batch's payouts stand after a step, counted from the journal."""

    total: int
    in_flight: int
    confirmed: int
    failed: int
    to_sign: int
    """Expired or abandoned: the operator signs them anew."""
    signing: int
    cancelled: int
    requests: int
    unreliable: int = 0
    """Receipts (or a confirming node's word) not believed this step: those wait."""

    @property
    def done(self) -> bool:
        """No transaction of the batch can still change on chain by itself."""
        return self.in_flight == 0 and self.signing == 0

    def to_event(self) -> dict[str, Any]:
        """JSON-safe counts (a trigger's event carries these and the batch id only)."""
        return asdict(self)


def count(attempts: Sequence[Attempt], requests: int = 0, unreliable: int = 0) -> WatchStatus:
    """The batch's standing from its newest attempts."""
    states = [a.state for a in attempts]
    return WatchStatus(
        total=len(states), in_flight=sum(s.in_flight() for s in states),
        confirmed=states.count(PayoutState.CONFIRMED), failed=states.count(PayoutState.FAILED),
        to_sign=sum(s.may_sign_next() for s in states),
        signing=states.count(PayoutState.SIGNING),
        cancelled=states.count(PayoutState.CANCELLED), requests=requests,
        unreliable=unreliable)


class PayoutWatch:
    """Follows one batch's open transactions; ``step()`` once per poll.

    :param solidified: confirm on solidified blocks (final) or on the head (a fork may
        still leave it); no default: the caller says which (the operator's default is
        solidified).
    :param clock: the worker's clock the node's block times are checked against.
    :param tolerance_s: how far ahead of it a block's time may be.
    :param confirm_node: a second node that must agree before an attempt is judged dead.
    """

    def __init__(self, journal: PayoutJournal, node: Node, batch_id: str, *,
                 solidified: bool, follow: Sequence[str] = (), budget: int = 50,
                 log: Any = log, clock: Callable[[], float] = time.time,
                 tolerance_s: float = DEFAULT_TOLERANCE_S,
                 confirm_node: Node | None = None) -> None:
        if budget < 3:
            raise ValueError("a watch needs a budget of at least 3 requests per step")
        self.journal, self.node, self.batch_id = journal, node, batch_id
        self.batches = (batch_id, *(b for b in follow if b != batch_id))
        self.solidified, self.budget, self.log = solidified, budget, log
        self.view = ChainView(node, clock=clock, tolerance_s=tolerance_s)
        self.view.spend = self._spend
        confirm = None
        if confirm_node is not None:
            confirm = ChainView(confirm_node, clock=clock, tolerance_s=tolerance_s,
                                name="the confirming node")
            confirm.spend = self._spend
        self.judge = Judge(journal, self.view, confirm=confirm, concurrency=1, log=log)
        self._cursor: int | None = None
        self._used = 0

    def _spend(self) -> bool:
        """Take one request from this step's budget; False once it is spent."""
        if self._used >= self.budget:
            return False
        self._used += 1
        return True

    def step(self) -> WatchStatus:
        """One poll: read receipts, judge expirations, rebroadcast, record; the standing.

        :class:`~..node.errors.UnreliableNode` when the node's block times do not hold
        (nothing recorded or judged on them)."""
        self._used = 0
        self.view.forget()
        if self.judge.confirm is not None:
            self.judge.confirm.forget()
        judged = Judged()
        attempts = self.journal.batch(*self.batches)
        open_ = [a for a in attempts if a.state.in_flight() and a.txid]
        if open_:
            try:
                self.view.prices()  # once per watch, before a receipt needs them
                # Nothing final is decided on the top block alone: each receipt's block and
                # the solidified block behind an expiry are read by number.
                top = (self.view.solid(by_number=False) if self.solidified else
                       self.view.head(floor=max((a.ref_block or 0 for a in attempts),
                                                default=0), by_number=False))
                self._receipts(open_, top, judged)
                # The rest as the sender sorts them (the same rule, the same hand-over).
                rest = [a for a in open_ if a.identity not in judged.states]
                steps = [next_step(a, top.timestamp_ms, now=time.time(), lease_s=0.0)
                         for a in rest]  # in flight: no claim, no lease to weigh
                self.judge.settle(
                    [a for a, s in zip(rest, steps, strict=True) if s is Step.JUDGE],
                    [a for a, s in zip(rest, steps, strict=True) if s is Step.REBROADCAST],
                    judged)
            except BudgetSpent:
                pass  # the next step goes on from the journal
            attempts = self.journal.batch(*self.batches)
        return count(attempts, self._used, judged.unreliable)

    def _receipts(self, open_: Sequence[Attempt], top: Block, judged: Judged) -> None:
        """Receipts of open transactions up to block ``top``, by the cheaper way, each
        checked against its block before it is recorded."""
        by_txid = {a.txid: a for a in open_}
        first = min(a.ref_block or top.number for a in open_) + 1
        start = max(first, self._cursor or first)
        if top.number - start + 1 <= len(open_):
            number, hold = start, None
            while number <= top.number:
                # The block by number first: its txIDs say whether its receipts are wanted
                # (one request either way), and a receipt must be in it to count.
                body = self.view.block(number, solidified=self.solidified)
                if body is None:
                    break  # not there by number yet: the next step reads it again
                mine = body.txids & by_txid.keys()
                if mine:
                    if not self._spend():
                        break
                    doubted = judged.unreliable
                    self.judge.record({info.tx_hash: (by_txid[info.tx_hash], info)
                                       for info in self.node.get_block_receipts(
                                           number, solidified=self.solidified)
                                       if info.tx_hash in by_txid},
                                      top=top, solidified=self.solidified, judged=judged)
                    if judged.unreliable > doubted and hold is None:
                        hold = number  # read again next step: the node may tell the truth
                number += 1
                self._cursor = number if hold is None else hold
            return
        read: dict[str, tuple[Attempt, TransactionInfo]] = {}
        for attempt in open_:
            assert attempt.txid is not None
            receipt = self.judge.receipt(attempt, top=top, solidified=self.solidified)
            if isinstance(receipt, TransactionInfo):
                read[attempt.txid] = (attempt, receipt)
            elif receipt == UNREAD:
                break  # the budget is spent: the next step goes on
        self.judge.record(read, top=top, solidified=self.solidified, judged=judged)


def still_in_flight(journal: PayoutJournal, node: Node, sender: str, *, after_ms: int,
                    solidified: bool, after_block: int | None = None, budget: int = 50,
                    log: Any = log, clock: Callable[[], float] = time.time,
                    tolerance_s: float = DEFAULT_TOLERANCE_S) -> list[Attempt]:
    """The sender's transfers that may still leave its balance: signed, in no block a watch
    step could see, and not past their expiration at ``after_ms`` (the head's time: no
    later block can take them). Their batches are stepped once first, so a transfer a
    block already holds (and the balance shows) is recorded, not counted again; one the
    step's budget did not reach is still counted (a wait, never a revert).

    ``after_block``: the head read before the funds are. A transfer judged in a later
    block (by this step or any worker's watch) is counted too: a node answering from
    behind that block (a busy public node's backends lag) does not show it spent yet.
    Counted twice at worst, never missed."""
    open_ = journal.in_flight(sender)
    if open_:
        batches = sorted({a.batch_id for a in open_})
        PayoutWatch(journal, node, batches[0], follow=batches[1:], solidified=solidified,
                    budget=budget, log=log, clock=clock, tolerance_s=tolerance_s).step()
    open_ = journal.in_flight(sender, after_block=after_block)
    if solidified and after_block is not None:
        held = held_by_head(node, open_, after_block)
        open_ = [a for a in open_ if a.txid not in held]
    return [a for a in open_ if not a.state.in_flight() or a.expiration_ms is None
            or a.expiration_ms >= after_ms]


HEAD_WINDOW = 64
"""The most blocks below the head that :func:`held_by_head` reads (a transfer's own block
is after the block it references, a few blocks before it was signed); a transfer older
than that and still unrecorded stays counted (a wait, never a revert)."""


def held_by_head(node: Node, open_: Sequence[Attempt], after_block: int) -> set[str]:
    """The txIDs of ``open_`` that a block up to ``after_block`` (the head the balance was
    read at) already holds: the balance shows them spent, so they are not counted again,
    though a watch confirming on solidified blocks has not recorded them yet (a fork may
    still leave such a block; then the balance, read again next time, shows them unspent
    with them). The blocks after the earliest one they reference, one request each."""
    wanted = {a.txid for a in open_ if a.state.in_flight() and a.txid}
    if not wanted:
        return set()
    refs = [a.ref_block for a in open_ if a.txid in wanted and a.ref_block is not None]
    start = max(min(refs, default=after_block - HEAD_WINDOW), after_block - HEAD_WINDOW)
    held: set[str] = set()
    for number in range(max(start, 0) + 1, after_block + 1):
        body = node.get_block(number)
        if body is None:  # the node has not got it: what it holds is not known
            return set()
        held |= wanted & body.txids
    return held
