"""Following a batch's payout transactions to their receipts: one rule for loop and trigger.

The operator's own loop and the deferrable trigger both call :meth:`PayoutWatch.step`,
so they agree on what the chain says. A step reads, within ``budget`` requests:

* the block to confirm at (the head, or the newest solidified block when asked);
* receipts the cheaper way: whole blocks (``gettransactioninfobyblocknum``, every
  receipt of a block in one request) from the oldest open transaction's reference
  block on, or, when fewer transactions are open than blocks are left to read, each
  open transaction's receipt;
* for a transaction past its expiration by that block: the newest solidified block,
  and if that is past the expiration too, its receipt there; none means it can never
  execute (``expired``): the operator signs that payout anew, the watch never does;
* the signed bytes of transactions no node has acknowledged, again (harmless).

Every outcome goes to the journal at once, so a watch restarted anywhere (a new
trigger, a retried task) goes on from what the journal says. A batch whose payout
(its ``payout_id``) another batch signed, still in flight, follows that batch too
(``follow``): the payout is the same, and so is its transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.models import Block, BroadcastAnswer, TransactionInfo
from airflow_provider_tronenergy.payout.journal import Attempt, PayoutJournal, PayoutState
from airflow_provider_tronenergy.payout.receipts import outcome_of

log = logging.getLogger(__name__)
__all__ = ["NodeError", "PayoutNode", "PayoutWatch", "WatchStatus", "count", "still_in_flight"]


class PayoutNode(Protocol):
    """What sending and following payouts need of a node (``TronNodeClient``)."""

    def get_now_block(self) -> Block:
        """The head block."""

    def get_solid_block(self) -> Block:
        """The newest solidified block."""

    def get_block_receipts(self, number: int, *,
                           solidified: bool = False) -> list[TransactionInfo]:
        """Every receipt of one block."""

    def get_transaction_info(self, tx_hash: str, *,
                             solidified: bool = False) -> TransactionInfo | None:
        """One receipt, or None."""

    def broadcast(self, signed: dict[str, Any]) -> BroadcastAnswer:
        """Offer a signed transaction again."""

    def estimate_transfer_energy(self, owner: str, to: str, units: int) -> int | None:
        """Energy one USDT transfer needs now (a new signature's ``fee_limit``)."""


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

    @property
    def done(self) -> bool:
        """No transaction of the batch can still change on chain by itself."""
        return self.in_flight == 0 and self.signing == 0

    def to_event(self) -> dict[str, Any]:
        """JSON-safe counts (a trigger's event carries these and the batch id only)."""
        return asdict(self)


def count(attempts: Sequence[Attempt], requests: int = 0) -> WatchStatus:
    """The batch's standing from its newest attempts."""
    states = [a.state for a in attempts]
    return WatchStatus(
        total=len(states), in_flight=sum(s.in_flight() for s in states),
        confirmed=states.count(PayoutState.CONFIRMED), failed=states.count(PayoutState.FAILED),
        to_sign=sum(s.may_sign_next() for s in states),
        signing=states.count(PayoutState.SIGNING),
        cancelled=states.count(PayoutState.CANCELLED), requests=requests)


class PayoutWatch:
    """Follows one batch's open transactions; ``step()`` once per poll."""

    def __init__(self, journal: PayoutJournal, node: PayoutNode, batch_id: str, *,
                 follow: Sequence[str] = (), solidified: bool = False, budget: int = 50,
                 log: Any = log) -> None:
        if budget < 3:
            raise ValueError("a watch needs a budget of at least 3 requests per step")
        self.journal, self.node, self.batch_id = journal, node, batch_id
        self.batches = (batch_id, *(b for b in follow if b != batch_id))
        self.solidified, self.budget, self.log = solidified, budget, log
        self._cursor: int | None = None
        self._used = 0

    def _spend(self) -> bool:
        """Take one request from this step's budget; False once it is spent."""
        if self._used >= self.budget:
            return False
        self._used += 1
        return True

    def step(self) -> WatchStatus:
        """One poll: read receipts, judge expirations, rebroadcast, record; the standing."""
        self._used = 0
        attempts = self.journal.batch(*self.batches)
        open_ = [a for a in attempts if a.state.in_flight() and a.txid]
        if open_:
            self._spend()
            top = self.node.get_solid_block() if self.solidified else self.node.get_now_block()
            found = self._receipts(open_, top)
            self._record(found)
            rest = [a for a in open_ if a.txid not in found]
            self._judge([a for a in rest if (a.expiration_ms or 0) < top.timestamp_ms])
            self._rebroadcast([a for a in rest if a.state is PayoutState.SIGNED
                               and (a.expiration_ms or 0) >= top.timestamp_ms])
            attempts = self.journal.batch(*self.batches)
        return count(attempts, self._used)

    def _receipts(self, open_: Sequence[Attempt], top: Block) -> dict[str, TransactionInfo]:
        """Receipts of open transactions up to block ``top``, by the cheaper way."""
        by_txid = {a.txid: a for a in open_}
        first = min(a.ref_block or top.number for a in open_) + 1
        start = max(first, self._cursor or first)
        found: dict[str, TransactionInfo] = {}
        if top.number - start + 1 <= len(open_):
            number = start
            while number <= top.number and self._spend():
                for info in self.node.get_block_receipts(number, solidified=self.solidified):
                    if info.tx_hash in by_txid:
                        found[info.tx_hash] = info
                number += 1
            self._cursor = number
            return found
        for attempt in open_:
            assert attempt.txid is not None
            if not self._spend():
                break
            receipt = self.node.get_transaction_info(attempt.txid, solidified=self.solidified)
            if receipt is not None and receipt.block_number <= top.number:
                found[attempt.txid] = receipt
        return found

    def _record(self, found: dict[str, TransactionInfo]) -> None:
        if not found:
            return
        attempts = {a.txid: a for a in self.journal.batch(*self.batches)}
        outcomes = []
        for txid, info in found.items():
            attempt = attempts.get(txid)
            if attempt is None or not attempt.state.in_flight():
                continue
            outcome = outcome_of(info)
            outcomes.append((attempt, outcome.succeeded, outcome.block, outcome.to_dict()))
        self.journal.record_outcomes(outcomes)
        failed = [o for o in outcomes if not o[1]]
        self.log.info("%d payout(s) reached block(s) up to %d%s", len(outcomes),
                      max(o[2] for o in outcomes),
                      f"; {len(failed)} FAILED on chain" if failed else "")

    def _judge(self, past: Sequence[Attempt]) -> None:
        """Past their expiration: expired once a solidified block is past it and they are
        not on chain there."""
        if not past or not self._spend():
            return
        solid = self.node.get_solid_block()
        expired: list[Attempt] = []
        found: dict[str, TransactionInfo] = {}
        for attempt in past:
            assert attempt.txid is not None and attempt.expiration_ms is not None
            if solid.timestamp_ms <= attempt.expiration_ms or not self._spend():
                continue
            info = self.node.get_transaction_info(attempt.txid, solidified=True)
            if info is None:
                expired.append(attempt)
            else:
                found[attempt.txid] = info
        self._record(found)
        if expired:
            self.journal.mark_expired(expired, f"not on chain, and solidified block "
                                      f"{solid.number} is past its expiration")
            self.log.warning("%d payout transaction(s) expired without reaching the chain "
                             "(solidified block %d): they need a new signature",
                             len(expired), solid.number)

    def _rebroadcast(self, unacknowledged: Sequence[Attempt]) -> None:
        accepted = []
        for attempt in unacknowledged:
            if attempt.signed_tx is None or not self._spend():
                break
            try:
                answer = self.node.broadcast(attempt.signed_tx)
            except NodeError:
                continue
            if answer.accepted:
                accepted.append(attempt)
        self.journal.mark_sent(accepted)


def still_in_flight(journal: PayoutJournal, node: PayoutNode, sender: str, *, after_ms: int,
                    after_block: int | None = None, solidified: bool = False, budget: int = 50,
                    log: Any = log) -> list[Attempt]:
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
                    budget=budget, log=log).step()
    open_ = journal.in_flight(sender, after_block=after_block)
    return [a for a in open_ if not a.state.in_flight() or a.expiration_ms is None
            or a.expiration_ms >= after_ms]
