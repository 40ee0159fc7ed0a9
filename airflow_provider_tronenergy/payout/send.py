"""Sending a batch of payouts: sign, journal, broadcast; the journal decides every retry.

One round (:meth:`PayoutSender.send`) reads each payout's newest attempt and the chain's
clock (the head block's time, checked against the worker's, :mod:`.trust`: a head ahead
of it, going backwards or contradicted by its own block read by number stops the round
as an :class:`~..node.errors.UnreliableNode`, nothing signed or judged) once
(:meth:`PayoutSender.look`), and asks :func:`~.steps.next_step` once per payout what the
chain's rules allow:

* **done**: confirmed on chain, or cancelled by a person;
* **person**: failed on chain (``REVERT``, ``OUT_OF_ENERGY``): never resent by itself;
* **wait**: another worker holds a fresh claim, or the transaction is past its
  expiration by the head block but no solidified block is past it yet;
* **rebroadcast**: signed, maybe never sent, not expired: the same bytes again (the
  chain takes a txID once: a duplicate is harmless);
* **judge**: past its expiration by the head: its checked receipt on a solidified block
  decides; none, and proof that it can never execute (:mod:`.verdict`), and only then
* **sign**: a new attempt: claim it (one worker wins), sign (its expiration never past
  the worker's clock plus the chain's 24 h), **journal the txID, the expiration and
  the signed bytes**, and only then broadcast.

In that order: the judge and rebroadcast work goes to :meth:`~.verdict.Judge.settle`
(the watch's hand-over too); the payouts left to sign are cleared once (the caller's
pre-flight, :func:`~.preflight.clear_to_sign`, else the node's estimates) at what the
chain charges now, and signed in chunks, each under a fresh head (the reference block
and the expiration: clearing and earlier chunks take time).

A worker killed anywhere leaves a journal the next round reads the same way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.fanout import side_by_side
from airflow_provider_tronenergy.node.models import Block, BroadcastAnswer
from airflow_provider_tronenergy.node.protocol import Node
from airflow_provider_tronenergy.node.tokens import TRX, USDT
from airflow_provider_tronenergy.node.transactions import (
    RefBlock,
    UnsignedTransfer,
    token_transfer,
    trx_transfer_contract,
)
from airflow_provider_tronenergy.payout.estimates import energy_now
from airflow_provider_tronenergy.payout.funds import (
    FeeLimitPolicy,
    PayoutRefused,
    estimate_energy,
    transfer_energy,
    unestimated_lines,
)
from airflow_provider_tronenergy.payout.journal import (
    Attempt,
    Claim,
    PayoutJournal,
    PayoutJournalError,
    PayoutState,
    Signed,
)
from airflow_provider_tronenergy.payout.lease import Lease
from airflow_provider_tronenergy.payout.mixed import by_token, token_node
from airflow_provider_tronenergy.payout.rows import Payout
from airflow_provider_tronenergy.payout.signing import scope_name, signatures_of
from airflow_provider_tronenergy.payout.steps import JUDGED, Step, next_step
from airflow_provider_tronenergy.payout.trust import DEFAULT_TOLERANCE_S, MAX_TOLERANCE_S, ChainView
from airflow_provider_tronenergy.payout.verdict import Answer, Judge, offer
from airflow_provider_tronenergy.protocol.address import is_valid_address
from airflow_provider_tronenergy.signer import Signer, SignerError

log = logging.getLogger(__name__)
MAX_EXPIRATION_S: Final = 24 * 3600
NODE_NEEDED: Final = ("payouts need a TRON node to read the sender's funds, broadcast and "
                      "confirm each transfer")
"""What a payout's missing ``tron_node_conn_id`` is refused with (``ConnectionMissing``)."""
CONFIRM_NODE_NEEDED: Final = ("a payout counts as confirmed only once the confirming node "
                              "also holds its receipt")
__all__ = ["MAX_EXPIRATION_S", "Clear", "Look", "PayoutConflict", "PayoutSender", "SendPass",
           "SendSettings", "Step", "next_step", "scope_name"]


class PayoutConflict(PayoutJournalError, NotRetryable):
    """A payout identity was journaled for another recipient, amount, token or sender."""


@dataclass(frozen=True)
class SendSettings:
    """How a pass signs and sends."""

    contract: str
    fee_policy: FeeLimitPolicy = field(default_factory=FeeLimitPolicy)
    expiration_s: int = 300
    lease_s: float = 120.0
    chunk: int = 200
    concurrency: int = 16
    clock_tolerance_s: float = DEFAULT_TOLERANCE_S
    """How far the node's block times may run ahead of the worker's clock."""
    permission_id: int = 0
    """The sender's permission the transfers are signed under: 0 the owner, 2 and up an
    active one (a payout key limited to contract calls)."""

    def __post_init__(self) -> None:
        if not 10 <= self.expiration_s <= MAX_EXPIRATION_S:
            raise ValueError(f"expiration must be 10 to {MAX_EXPIRATION_S} seconds")
        if not 0 <= self.clock_tolerance_s <= MAX_TOLERANCE_S:
            raise ValueError(f"the clock tolerance must be 0 to {MAX_TOLERANCE_S:g} seconds")
        if self.permission_id not in (0, *range(2, 10)):
            raise ValueError("permission_id must be 0 (owner) or 2 to 9 (an active permission)")


@dataclass
class SendPass:
    """What one pass did, by payout identity."""

    signed: int = 0
    broadcast: int = 0
    accepted: int = 0
    answers: dict[str, str] = field(default_factory=dict)
    """Identity -> the node's last answer when it was not an acceptance."""
    steps: dict[str, Step] = field(default_factory=dict)
    unreliable: int = 0
    """Receipts or a confirming node's word not believed: those payouts wait."""
    fee_energy_floor: int = 0
    """The energy every ``fee_limit`` of the pass covers (a transfer to an emptied address)."""
    after: dict[str, Attempt] = field(default_factory=dict)
    """Each payout's newest attempt as the round left it (its txID, batch and state),
    kept as the round wrote it rather than read again."""

    def count(self, step: Step) -> int:
        """Payouts the pass found at ``step``."""
        return sum(1 for s in self.steps.values() if s is step)


@dataclass(frozen=True)
class Look:
    """What a round decides on, read once: each payout's newest attempt, the checked
    head, and the step each payout is at (:func:`~.steps.next_step`, once each)."""

    latest: dict[str, Attempt]
    head: Block
    steps: dict[str, Step]

    def attempts(self, step: Step) -> list[Attempt]:
        """The newest attempts of the payouts at ``step`` (those that have one)."""
        return [self.latest[i] for i, s in self.steps.items() if s is step and i in self.latest]


Clear = Callable[[Sequence[Payout], Look], tuple[list[Payout], int | None]]
"""A round's pre-flight, given the payouts left to sign and what the round read: those
payouts at what the chain charges now (``energy``), and the energy a transfer to an
emptied address costs now (None: no estimate)."""


def newest_reference(attempts: Iterable[Attempt]) -> int:
    """The newest block a journaled transaction references: no honest head is below it."""
    return max((a.ref_block for a in attempts if a.ref_block), default=0)


class PayoutSender:
    """Signs, journals and broadcasts one batch's payouts, one pass at a time.

    :param clock: the worker's clock (epoch seconds): the node's block times are checked
        against it, and no expiration is set past it plus the chain's 24 h.
    :param confirm_node: a second node that must agree before an attempt is judged dead.
    :param cosigners: more signers, where the permission's threshold needs several keys:
        after ``signer`` they sign in order until the threshold is reached
        (:meth:`check_permission`).
    """

    def __init__(self, journal: PayoutJournal, node: Node, signer: Signer,
                 settings: SendSettings, *, scope: str, energy_fee_sun: int,
                 log: Any = log, clock: Callable[[], float] = time.time,
                 confirm_node: Node | None = None, lease: Lease | None = None,
                 cosigners: Sequence[Signer] = ()) -> None:
        self.journal, self.node, self.signer = journal, node, signer
        self.signers: tuple[Signer, ...] = (signer, *cosigners)
        self.signing = self.signers  # who signs: check_permission keeps those the threshold needs
        self.lease = lease  # the sender's (:mod:`.lease`): every claim checks it is held
        self.settings, self.scope, self.energy_fee_sun = settings, scope, energy_fee_sun
        self.log, self.clock = log, clock
        self.view = ChainView(node, clock=clock, tolerance_s=settings.clock_tolerance_s)
        confirm = None if confirm_node is None else ChainView(
            confirm_node, clock=clock, tolerance_s=settings.clock_tolerance_s,
            name="the confirming node")
        self.judge = Judge(journal, self.view, confirm=confirm,
                           concurrency=settings.concurrency, log=log)
        self._stamp = 0

    def checked_head(self, attempts: Iterable[Attempt] = ()) -> Block:
        """The node's head, checked (:class:`~.trust.ChainView`), not below the newest block
        ``attempts`` reference; :class:`~..node.errors.UnreliableNode` if it does not hold."""
        self.view.forget()
        return self.view.head(floor=newest_reference(attempts))

    def check_permission(self, sender: str) -> None:
        """Before anything is signed: the signers can sign a transfer from ``sender`` under
        the configured permission (every one a key of it, enough weight, TriggerSmartContract
        allowed); :class:`~.funds.PayoutRefused` naming why not. Then :attr:`signing` holds
        the signers that sign, in the configured order up to the permission's threshold
        (its weights read from the chain), no more. Without a permission or cosigners, the
        pre-flight's rule holds instead: the signer is the sender."""
        self.signing = self.signers
        if self.settings.permission_id == 0 and len(self.signers) == 1:
            return
        permissions = self.node.get_permissions(sender)
        addresses = [s.address for s in self.signers]
        refused = permissions.refusal(self.settings.permission_id, addresses)
        if refused:
            raise PayoutRefused(f"the batch cannot be signed (nothing was signed): {refused}")
        self.signing = self.signers[:permissions.signing(self.settings.permission_id,
                                                          addresses)]

    def check_journaled(self, payouts: Sequence[Payout], sender: str) -> dict[str, Attempt]:
        """The newest attempt per payout; a payout journaled with other content (recipient,
        units, token or sender) is refused."""
        latest = self.journal.latest(p.identity for p in payouts)
        wrong = [f"{p.identity} (row {p.row}) was journaled as {a.units} units of {a.token} "
                 f"to {a.recipient} from {a.sender}" for p in payouts
                 if (a := latest.get(p.identity)) is not None
                 and not a.same_payout(sender, p.recipient, p.token, p.units)]
        if wrong:
            raise PayoutConflict("payouts reuse identities journaled for other payouts "
                                 "(nothing was signed):\n  " + "\n  ".join(wrong[:50]))
        return latest

    def look(self, payouts: Sequence[Payout], sender: str) -> Look:
        """The round's one read of the journal and of the head, and each payout's step."""
        latest = self.check_journaled(payouts, sender)
        self.check_permission(sender)
        head = self.checked_head(latest.values())
        now = time.time()  # leases are on the journal's clock
        return Look(latest, head, {p.identity: next_step(
            latest.get(p.identity), head.timestamp_ms, now=now, lease_s=self.settings.lease_s)
            for p in payouts})

    def send(self, payouts: Sequence[Payout], *, sender: str, batch_id: str,
             token: str | None = None, clear: Clear | None = None) -> SendPass:
        """One round over the batch (see the module); ``clear`` is the caller's pre-flight
        of the payouts left to sign (without one, the node's estimates alone). Each payout
        pays its own token (:attr:`~.rows.Payout.token`); ``token``, when given, is the one
        the caller means, and a payout of another is refused before anything is signed."""
        other = [p for p in payouts if token is not None and p.token != token]
        if other:
            raise PayoutConflict(f"{len(other)} payout(s) are not of token {token} (row "
                                 f"{other[0].row}: {other[0].token}); nothing was signed")
        done = SendPass()
        look = self.look(payouts, sender)
        done.after.update(look.latest)
        steps = dict(look.steps)
        stale = [a for a in look.attempts(Step.SIGN) if a.state is PayoutState.SIGNING]
        if stale:
            self.journal.take_over(stale, f"claim by {stale[0].claimed_by} went stale; taken "
                                   f"over by {self.scope}")
        judged = self.judge.settle(look.attempts(Step.JUDGE), look.attempts(Step.REBROADCAST))
        done.unreliable += judged.unreliable
        self._count(judged.answers, done)
        for identity, state in judged.states.items():
            steps[identity] = JUDGED[state]
            if state is not None:
                done.after[identity] = replace(done.after[identity], state=state)
        to_sign = [p for p in payouts if steps[p.identity] is Step.SIGN]
        rows, first = (clear(to_sign, look) if clear is not None
                       else self._estimated(to_sign, sender))
        done.fee_energy_floor = (self._floor(sender, first)
                                 if any(p.token != TRX for p in rows) else 0)
        # Claims follow the attempts judged above, never a newer read: an attempt another
        # worker claimed since must make this claim lose, not become the one it follows.
        for start in range(0, len(rows), self.settings.chunk):
            # A fresh head per chunk: its reference block and expiration (clearing and
            # earlier chunks take time: one counted from the round's head may be gone).
            head = self.checked_head(look.latest.values())
            self._sign_and_send(rows[start:start + self.settings.chunk], look.latest, head,
                                sender, batch_id, done)
        done.steps = steps
        return done

    # -- broadcasting ------------------------------------------------------------------------

    def _count(self, answers: Sequence[tuple[Attempt, Answer]], done: SendPass) -> None:
        """The node's answers to offered transactions, counted in ``done``."""
        for attempt, answer in answers:
            if isinstance(answer, BroadcastAnswer) and answer.accepted:
                done.accepted += 1
            else:
                done.answers[attempt.identity] = (answer if isinstance(answer, str)
                                                  else answer.describe())
        done.broadcast += len(answers)

    def _broadcast_all(self, attempts: Sequence[tuple[Attempt, dict[str, Any]]],
                       done: SendPass) -> None:
        """Offer each signed transaction (:func:`~.verdict.offer`), counted in ``done``."""
        self._count(offer(self.journal, self.node, attempts,
                          concurrency=self.settings.concurrency), done)

    # -- signing -----------------------------------------------------------------------------

    def _estimated(self, payouts: Sequence[Payout], sender: str
                   ) -> tuple[list[Payout], int | None]:
        """Without a caller's pre-flight: the payouts to sign, each at the larger of its
        estimate and what the chain charges its kind of transfer now
        (:func:`~.estimates.energy_now`: a few requests), and a first transfer's energy.
        A row the node gives no estimate for, or one needing more than the ``fee_limit``
        cap lets it use: nothing is signed."""
        rows: list[Payout] = []
        unestimated: list[Payout] = []
        firsts: list[int] = []
        for token, group in by_token(payouts).items():  # each contract's own figures
            if token == TRX:  # no energy, no estimate
                rows += [replace(p, energy=0) for p in group]
                continue
            node = token_node(self.node, token)
            estimated, missing = estimate_energy(node, sender, group,
                                                 concurrency=self.settings.concurrency)
            fresh = frozenset(p.identity for p in group if p.energy is None)
            now = energy_now(node, sender, estimated, fresh=fresh,
                             concurrency=self.settings.concurrency)
            rows += [replace(p, floor=now.first_transfer) for p in now.raised(estimated, fresh)]
            unestimated += missing
            firsts += [now.first_transfer] if now.first_transfer is not None else []
        short = unestimated_lines(unestimated) + self.settings.fee_policy.over_cap(
            rows, self.energy_fee_sun)
        if short:
            raise PayoutRefused("the batch cannot be signed (nothing more was signed):\n  "
                                + "\n  ".join(short))
        return rows, max(firsts, default=None)

    def _floor(self, sender: str, floor: int | None) -> int:
        """:func:`~..node.estimates.first_transfer_energy` (``floor``), or none (each
        ``fee_limit`` from its own estimate) when the node gives no estimate; the log
        says so."""
        if floor is None:
            self.log.warning("the node gives no estimate for a transfer from %s to an address "
                             "holding no USDT: each fee_limit covers only its own estimate",
                             sender)
        return floor or 0

    def _timestamp(self, head_ms: int) -> int:
        """A transaction timestamp on the chain's clock, distinct within this sender."""
        self._stamp = max(self._stamp + 1, head_ms)
        return self._stamp

    def _unsigned(self, attempt: Attempt, payout: Payout, head: Block, floor: int
                  ) -> tuple[UnsignedTransfer, int]:
        """The transfer to sign and its ``fee_limit`` (0 for TRX: a ``TransferContract``
        uses no energy); built one after another (each takes a timestamp of its own)."""
        ref = RefBlock(head.number, head.block_id, head.timestamp_ms)
        # Never past the chain's cap from the worker's clock, whatever the head says.
        expiration_ms = min(head.timestamp_ms + self.settings.expiration_s * 1000,
                            self.view.now_ms() + MAX_EXPIRATION_S * 1000)
        if attempt.token == TRX:
            return trx_transfer_contract(
                owner=attempt.sender, to=attempt.recipient, amount_sun=attempt.units, ref=ref,
                expiration_ms=expiration_ms, timestamp_ms=self._timestamp(head.timestamp_ms),
                permission_id=self.settings.permission_id), 0
        fee_limit = self.settings.fee_policy.fee_limit_sun(
            max(transfer_energy(payout), floor if payout.floor is None else payout.floor),
            self.energy_fee_sun)
        unsigned = token_transfer(
            owner=attempt.sender, to=attempt.recipient, units=attempt.units,
            contract=self.contract_of(attempt), fee_limit_sun=fee_limit, ref=ref,
            expiration_ms=expiration_ms, timestamp_ms=self._timestamp(head.timestamp_ms),
            permission_id=self.settings.permission_id)
        return unsigned, fee_limit

    def contract_of(self, attempt: Attempt) -> str:
        """The TRC-20 contract an attempt's transfer calls: the connection's USDT for
        ``USDT``, else the contract the journal names (:attr:`~..node.tokens.Token.name`)."""
        if attempt.token == USDT:
            return self.settings.contract
        if not is_valid_address(attempt.token):  # TRX, or a name no row resolves to
            raise PayoutRefused(f"payout {attempt.identity}: token {attempt.token} is not a "
                                "TRC-20 contract this sender signs transfers of; nothing was "
                                "signed")
        return attempt.token

    def _signatures(self, txids: Sequence[str]) -> list[tuple[bytes, ...]]:
        """Each txID's checked signatures (one per signer), up to ``concurrency`` txIDs at a
        time: a remote signer (KMS) answers each in milliseconds, which one after another
        would add up to minutes for a large batch. The first refusal is raised once every
        call in flight ended."""
        def sign(txid: str) -> tuple[bytes, ...]:
            return signatures_of(self.signing, bytes.fromhex(txid))

        return side_by_side(sign, txids, max_concurrency=self.settings.concurrency, name="sign")

    def _sign_and_send(self, chunk: Sequence[Payout], latest: dict[str, Attempt], head: Block,
                       sender: str, batch_id: str, done: SendPass) -> None:
        claims = [Claim(identity=p.identity, after=latest.get(p.identity), batch_id=batch_id,
                        row=p.row, sender=sender, recipient=p.recipient, token=p.token,
                        units=p.units) for p in chunk]
        won, lost = self.journal.claim(claims, self.scope, lease=self.lease)
        done.after.update((a.identity, a) for a in won)
        if lost:
            self.log.info("%d payout(s) were claimed by another worker first: following "
                          "its transactions", len(lost))
            done.after.update(self.journal.latest(lost))  # the winner's: only in a race
        by_identity = {p.identity: p for p in chunk}
        floor = done.fee_energy_floor
        pending = self._signed(won, by_identity, head, floor)
        journaled: list[Signed] = []
        try:
            for _ in range(3):  # a txID another payout holds: sign again, one second later
                kept, refused = self.journal.record_signed(pending)
                journaled.extend(kept)
                if not refused:
                    break
                refused_ids = {s.attempt.id for s in refused}
                current = self.journal.latest(s.attempt.identity for s in refused)
                pending = self._signed(
                    [s.attempt for s in refused if (c := current.get(s.attempt.identity))
                     is not None and c.id in refused_ids and c.state is PayoutState.SIGNING],
                    by_identity, head, floor)
                if not pending:
                    break
        except SignerError:  # it refused a re-signing: what was journaled is sent all the same
            self._send_journaled(journaled, done)
            raise
        self._send_journaled(journaled, done)

    def _send_journaled(self, journaled: Sequence[Signed], done: SendPass) -> None:
        done.signed += len(journaled)
        done.after.update((s.attempt.identity, replace(
            s.attempt, state=PayoutState.SIGNED, txid=s.txid, expiration_ms=s.expiration_ms,
            ref_block=s.ref_block, fee_limit_sun=s.fee_limit_sun, signed_tx=s.signed_tx))
            for s in journaled)
        self._broadcast_all([(s.attempt, s.signed_tx) for s in journaled], done)

    def _signed(self, attempts: Sequence[Attempt], by_identity: dict[str, Payout], head: Block,
                floor: int) -> list[Signed]:
        """Each claimed attempt signed; if the signer refuses one, none of them is journaled
        as signed or sent, and their claims are given up at once (abandoned), so a retry
        signs anew without waiting out the lease."""
        built = [self._unsigned(a, by_identity[a.identity], head, floor) for a in attempts]
        try:
            signatures = self._signatures([unsigned.txid for unsigned, _ in built])
        except SignerError as exc:
            self.journal.take_over(attempts, f"the signer refused, nothing signed: {exc}")
            raise
        return [Signed(attempt=a, txid=u.txid, expiration_ms=u.expiration_ms,
                       ref_block=u.ref_block, fee_limit_sun=fee_limit,
                       signed_tx=u.signed(*signed))
                for a, (u, fee_limit), signed in zip(attempts, built, signatures, strict=True)]

