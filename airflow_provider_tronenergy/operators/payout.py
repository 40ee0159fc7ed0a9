"""Send a batch of token payouts, exactly once, and follow them to their receipts.

:class:`TronPayoutOperator` is thin: what it was given is checked by :mod:`..payout.given`
(the rows by :mod:`..payout.rows`), the sender's funds against what the chain charges now
by :mod:`..payout.preflight`, each pass of signing, journaling and broadcasting is
:class:`~..payout.send.PayoutSender`'s, and the wait is :class:`~..payout.watch.PayoutWatch`'s
(in the worker, or in the triggerer through :class:`~..triggers.payout.TronPayoutBatchTrigger`).
A retry, a cleared task, a new run of the same batch or a second worker reads the payout
journal and does only what the chain's rules allow: nothing confirmed or still able to
execute is ever signed again.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    BaseOperator,
    conf,
)

from airflow_provider_tronenergy.errors import ConnectionMissing
from airflow_provider_tronenergy.hitl.payout import PayoutAsker, failed_lines
from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.hooks.tron_signer import TronSignerHook
from airflow_provider_tronenergy.links.explorer import TronPayoutLink, TronPayoutTokenLink, publish
from airflow_provider_tronenergy.payout.batch import TokenBook
from airflow_provider_tronenergy.payout.given import Given, check_given, tuned
from airflow_provider_tronenergy.payout.journal import PayoutJournal, open_payout_journal
from airflow_provider_tronenergy.payout.lease import Lease, hold
from airflow_provider_tronenergy.payout.preflight import clear_to_sign
from airflow_provider_tronenergy.payout.receipts import batch_result, solidified_flag
from airflow_provider_tronenergy.payout.rows import Payout, token_decimals
from airflow_provider_tronenergy.payout.send import (
    CONFIRM_NODE_NEEDED,
    NODE_NEEDED,
    Look,
    PayoutSender,
    SendPass,
    Step,
    scope_name,
)
from airflow_provider_tronenergy.payout.trust import UnreliableNode
from airflow_provider_tronenergy.payout.tuning import PayoutTuning
from airflow_provider_tronenergy.payout.watch import (
    PayoutWatch,
    WatchStatus,
    count,
    still_in_flight,
)
from airflow_provider_tronenergy.purchase_journal import task_scope
from airflow_provider_tronenergy.templated import money_given, optional_text
from airflow_provider_tronenergy.triggers.payout import TronPayoutBatchTrigger
from airflow_provider_tronenergy.verdicts.payout import (
    NOTHING_SIGNED,
    as_task,
)

if TYPE_CHECKING:
    from airflow.providers.common.compat.sdk import Context

    from airflow_provider_tronenergy.payout.attempts import Attempt

MAX_ROUNDS: Final = 5
"""Passes of signing in one task try: a new round only re-signs expired transactions."""
CLI: Final = "tronenergy-payouts"
COSIGNER_NEEDED: Final = ("the permission's threshold counts each cosigner's signature; "
                          "nothing is signed without it")


def _worker_clock() -> float:
    """The worker's clock the node's block times are checked against; private, read at each
    use, so a test replaces it (a sandbox's manual clock) without a parameter."""
    return time.time()


class TronPayoutOperator(BaseOperator):
    """Send ``payouts`` from ``sender_address`` once each, and wait for their receipts.

    :param payouts: rows with ``recipient``, ``amount`` (decimal text or an integer) and
        optional ``payout_id`` (the payout's identity across batches) and ``energy`` (the
        node's estimate from the batch's preparation: the ``fee_limit`` is sized from it).
    :param sender_address: the hot wallet; the signer must sign for it.
    :param batch_id: the batch (identity of rows without ``payout_id``); empty: the run's
        data interval, as the preparation DAG names its batch.
    :param max_fee_limit_trx: the cap on one transfer's ``fee_limit`` (TRX, default 100).
    :param max_burn_trx: TRX the batch may burn for energy it does not have (default 0:
        the energy must be on the wallet, rented or staked), at what the chain charges now.
    :param on_ambiguous: a payout that failed on chain: ``fail`` (resolve with
        ``tronenergy-payouts resolve``) or ``ask`` a person (Required Actions).
    :param confirm_solidified: confirm on solidified blocks only (default; about a minute
        on mainnet), which no fork can leave; ``False``: on the head block, which a fork may
        still leave. The result says which (``confirmation``, ``confirmed_on``).
    :param confirm_node_conn_id: a second ``tron_node`` connection that must agree
        (solidified block past the expiration, no receipt) before a transaction is
        judged unable to execute and its payout signed anew (default: none).
    :param permission_id: the sender's permission the transfers are signed under: 0 (the
        owner, default) or an active one (2 and up) holding the signer's key; checked on
        chain before anything is signed (the keys, their weight, TriggerSmartContract).
    :param cosigner_conn_ids: more ``tron_signer`` connections, where the permission's
        threshold needs several keys: they sign in order until its threshold is reached.
    :param deferrable: wait for the receipts in the triggerer.
    :param tuning: the machinery (:class:`~..payout.tuning.PayoutTuning`: receipts' wait,
        expiration, the wallet's lease, the node's clock, pacing, the fee margin, the
        recipients' reads, the wait for an answer), or a mapping of its fields (templated);
        default: its documented defaults.
    """

    template_fields: Sequence[str] = (
        "payouts", "sender_address", "batch_id", "tron_node_conn_id", "tron_signer_conn_id",
        "max_fee_limit_trx", "max_burn_trx", "on_ambiguous", "confirm_solidified",
        "confirm_node_conn_id", "permission_id", "cosigner_conn_ids", "tuning")
    ui_color = "#f2c57c"
    operator_extra_links = (TronPayoutLink(), TronPayoutTokenLink())

    def __init__(
        self, *, payouts: Any, sender_address: str, batch_id: str = "",
        tron_node_conn_id: str = TronNodeHook.default_conn_name,
        tron_signer_conn_id: str = TronSignerHook.default_conn_name,
        max_burn_trx: Decimal | int | str = "0", max_fee_limit_trx: Decimal | int | str = "100",
        on_ambiguous: str = "fail", confirm_solidified: bool | str = True,
        confirm_node_conn_id: str | None = None,
        permission_id: int | str = 0, cosigner_conn_ids: Sequence[str] = (),
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        tuning: PayoutTuning | Mapping[str, Any] | None = None, **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        money_given(max_burn_trx=max_burn_trx, max_fee_limit_trx=max_fee_limit_trx)
        self.payouts, self.sender_address, self.batch_id = payouts, sender_address, batch_id
        self.tron_node_conn_id, self.tron_signer_conn_id = tron_node_conn_id, tron_signer_conn_id
        self.max_burn_trx, self.max_fee_limit_trx = max_burn_trx, max_fee_limit_trx
        self.on_ambiguous, self.confirm_solidified = on_ambiguous, confirm_solidified
        self.confirm_node_conn_id = confirm_node_conn_id
        self.permission_id, self.cosigner_conn_ids = permission_id, cosigner_conn_ids
        self.deferrable, self.tuning = deferrable, tuning

    # -- what the task was given, checked once -------------------------------------------------

    def _checked(self, context: Context) -> Given:
        """What the task was given (:func:`~..payout.given.check_given`), the connections'
        parts handed over as they are needed; any problem is a
        :class:`~..payout.rows.PayoutInputError` (never retried)."""
        return check_given(
            payouts=self.payouts, sender_address=self.sender_address, batch_id=self.batch_id,
            context=context, on_ambiguous=self.on_ambiguous,
            max_fee_limit_trx=self.max_fee_limit_trx, max_burn_trx=self.max_burn_trx,
            permission_id=self.permission_id, confirm_solidified=self.confirm_solidified,
            tuning=self.tuning, tokens=lambda: self._token_book().token,
            contract=lambda: self._node().usdt_contract, connections=self._confirm_node)

    def _token_book(self) -> TokenBook:
        """The task try's tokens: each contract's decimals and symbol read once."""
        if getattr(self, "_tokens", None) is None:
            self._tokens = TokenBook(self._node())
        return self._tokens

    def _solidified(self) -> bool:
        """``confirm_solidified``; empty (a template that rendered nothing) is the default,
        solidified, never the head."""
        return solidified_flag(self.confirm_solidified)

    def _node_hook(self) -> TronNodeHook:
        """The node's hook, its connection looked up once: None, blank or naming no
        connection fails the task before anything is signed (``ConnectionMissing``)."""
        if getattr(self, "_node_hook_", None) is None:
            self._node_hook_ = TronNodeHook.required(optional_text(self.tron_node_conn_id),
                                                     needs=NODE_NEEDED)
        return self._node_hook_

    def _node(self) -> Any:
        """The node client, one per operator instance (one connection pool), its chain
        checked (``TronNodeHook.get_conn``)."""
        if getattr(self, "_node_client", None) is None:
            self._node_client = self._node_hook().get_conn()
        return self._node_client

    def _confirm_node(self) -> Any:
        """The confirming node's client, when a connection names one: one that names no
        connection fails the task (``ConnectionMissing``); it must be on its connection's chain
        and on the first node's (``WrongChain`` otherwise), before anything is signed."""
        conn_id = optional_text(self.confirm_node_conn_id)
        if conn_id is None:
            return None
        if getattr(self, "_confirm_client", None) is None:
            hook = TronNodeHook.required(
                conn_id, needs=CONFIRM_NODE_NEEDED, setting="confirm_node_conn_id")
            client = hook.get_conn()
            self._node_hook().check_same_chain(hook)
            self._confirm_client = client
        return self._confirm_client

    def _journal(self) -> PayoutJournal:
        return open_payout_journal()

    @contextmanager
    def _wallet(self, sender: str, scope: str, tuning: PayoutTuning) -> Iterator[Lease]:
        """The sender's lease (:mod:`..payout.lease`); busy or lost: a retryable failure
        (:func:`task_verdict`)."""
        with hold(self._journal().leases, sender, scope, length_s=tuning.wallet_lease_seconds,
                  wait_s=tuning.wallet_wait_seconds, log=self.log) as lease:
            yield lease

    # -- the task ------------------------------------------------------------------------------

    def execute(self, context: Context) -> dict[str, Any]:
        """Check, send what the journal allows, and wait for the receipts."""
        return as_task(lambda: self._rounds(context, self._checked(context), 1))

    def _rounds(self, context: Context, given: Given, round_: int) -> dict[str, Any]:
        """Rounds from ``round_`` on: each sends what the journal allows and waits (or
        defers: :meth:`execute_complete` goes on); the journal after the wait decides
        whether another round signs what expired."""
        while True:
            sent = self._send_round(context, given, round_)
            self._wait(given.batch.batch_id, round_, given.tuning,
                       follow=elsewhere(sent.after.values(), given.batch.batch_id))
            result = self._decided(context, given, round_)
            if result is not None:
                return result
            round_ += 1

    def _signers(self) -> tuple[Any, list[Any]]:
        """The signer and the cosigners; a connection that cannot give one, or an id that
        names none (``ConnectionMissing``, naming the setting), fails the task."""
        try:
            signer = TronSignerHook(self.tron_signer_conn_id).get_conn()
            cosigners = [TronSignerHook(c, setting="cosigner_conn_ids",
                                        needs=COSIGNER_NEEDED).get_conn()
                         for c in self.cosigner_conn_ids or ()]
        except (AirflowException, ConnectionMissing) as exc:
            raise AirflowFailException(f"{exc} ({NOTHING_SIGNED})") from None
        return signer, cosigners

    def _send_round(self, context: Context, given: Given, round_: int) -> SendPass:
        """One round (:meth:`~..payout.send.PayoutSender.send`) under the sender's lease,
        its pre-flight (:func:`~..payout.preflight.clear_to_sign`) the one estimate of
        what the payouts left to sign cost now."""
        batch, sender, settings = given.batch, given.sender, given.settings
        signer, cosigners = self._signers()
        node = self._node()
        prices = node.get_chain_parameters()
        ti = context["ti"]
        scope = scope_name([task_scope(context, self.task_id), f"try{ti.try_number}"])
        # Under a permission its keys sign for the sender (checked by the round, before
        # the pre-flight); without one the pre-flight's rule: signer = sender.
        signer_address = sender if settings.permission_id or cosigners else signer.address

        def clear(to_sign: Sequence[Payout], look: Look) -> tuple[list[Payout], int | None]:
            in_flight = still_in_flight(
                self._journal(), node, sender, after_ms=look.head.timestamp_ms,
                after_block=look.head.number,
                solidified=self._solidified(),
                budget=given.tuning.max_requests_per_poll, log=self.log, clock=_worker_clock,
                tolerance_s=settings.clock_tolerance_s) if to_sign else []
            cleared = clear_to_sign(
                node, sender, to_sign, signer_address=signer_address,
                token=batch.token, decimals=token_decimals(batch.token),
                max_burn_trx=given.max_burn, policy=settings.fee_policy, prices=prices,
                in_flight=in_flight, read_recipients=given.tuning.read_recipients,
                signatures=len(sending.signing), tokens=batch.tokens,
                permission_id=settings.permission_id)
            self._short_rows = dict.fromkeys(cleared.refused_ids, "; ".join(cleared.refused))
            self.log.info("payout batch %s: %d payouts, %d to sign (round %d); funds %s",
                          batch.batch_id, len(batch.rows), len(to_sign), round_,
                          cleared.to_dict())
            return cleared.rows, cleared.now.first_transfer

        # One pre-flight and signing at a time per sender (payout/lease.py): the next
        # holder's pre-flight counts this round's transactions as in flight.
        with self._wallet(sender, scope, given.tuning) as lease:
            sending = PayoutSender(self._journal(), node, signer, settings, scope=scope,
                                   energy_fee_sun=prices.energy_fee, log=self.log,
                                   clock=_worker_clock, confirm_node=self._confirm_node(),
                                   lease=lease, cosigners=cosigners)
            result = sending.send(batch.rows, sender=sender, batch_id=batch.batch_id,
                                  clear=clear)
        self.log.info("payout batch %s: signed %d, broadcast %d, accepted %d; %s",
                      batch.batch_id, result.signed, result.broadcast, result.accepted,
                      {s.value: result.count(s) for s in Step if result.count(s)})
        # Linked while the batch is followed (in the worker or the triggerer).
        self._publish(context, result.after.values())
        return result

    def _publish(self, context: Context, attempts: Iterable[Attempt]) -> None:
        """The batch's transactions for the task's link (:mod:`~.links`)."""
        sent = [a for a in attempts if a.txid]
        publish(context, self._node_hook().get_explorer, "payout",
                count=len(sent), txids=[a.txid or "" for a in sent],
                addresses=[a.sender for a in sent], log=self.log,
                contracts=[self._token_book().contract_of(a.token) for a in sent])

    def _wait(self, batch_id: str, round_: int, tuning: PayoutTuning,
              follow: Sequence[str] = ()) -> None:
        """Follow the batch's transactions until they settle or the time is up: in the
        triggerer (deferred: :meth:`execute_complete` goes on) or polling here."""
        timeout, poll = tuning.confirm_timeout_seconds, float(tuning.poll_interval_seconds)
        solidified = self._solidified()
        tolerance = tuning.clock_tolerance_seconds
        if follow:
            self.log.info("payout batch %s: some of its payouts are in flight under batch(es) "
                          "%s: following those too", batch_id, ", ".join(follow[:5]))
        if self.deferrable:
            self.defer(trigger=TronPayoutBatchTrigger(
                batch_id, self.tron_node_conn_id, follow=follow, solidified=solidified,
                poll_interval_seconds=poll, end_time=time.time() + timeout,
                max_requests_per_poll=tuning.max_requests_per_poll,
                clock_tolerance_seconds=tolerance,
                confirm_node_conn_id=optional_text(self.confirm_node_conn_id)),
                method_name="execute_complete",
                kwargs={"round_": round_})
        watch = PayoutWatch(self._journal(), self._node(), batch_id, follow=follow,
                            solidified=solidified, budget=tuning.max_requests_per_poll,
                            log=self.log,
                            clock=_worker_clock, tolerance_s=tolerance,
                            confirm_node=self._confirm_node())
        end = time.monotonic() + timeout
        while True:
            try:
                if watch.step().done:
                    break
            except UnreliableNode as exc:  # nothing recorded on its word: poll on
                self.log.warning("payout batch %s: %s; polling goes on", batch_id, exc)
            if time.monotonic() >= end:
                break
            time.sleep(poll)

    def execute_complete(self, context: Context, event: Mapping[str, Any],
                         round_: int = 1) -> dict[str, Any]:
        """The trigger fired: the batch settled, or the wait timed out or broke."""
        if event.get("status") == "error":
            message = f"following payout batch {event.get('batch_id')} failed: " \
                      f"{event.get('message')}"
            if event.get("retryable") is False:  # a journal a retry cannot open either
                raise AirflowFailException(message)
            raise AirflowException(f"{message}; a retry follows it again")

        def decide() -> dict[str, Any]:
            given = self._checked(context)
            result = self._decided(context, given, round_)
            return result if result is not None else self._rounds(context, given, round_ + 1)

        return as_task(decide)

    def execute_answer(self, context: Context, event: Mapping[str, Any],
                       identities: Sequence[str] = ()) -> dict[str, Any]:
        """A person answered about payouts that failed on chain (``on_ambiguous="ask"``)."""
        def answered() -> dict[str, Any]:
            self._asker().record_answer(dict(event), list(identities))
            return self._rounds(context, self._checked(context), 1)

        return as_task(answered)

    def _asker(self) -> PayoutAsker:
        ask = tuned(self.tuning).ask_timeout_seconds
        return PayoutAsker(journal=self._journal(), log=self.log, defer=self.defer,
                           ask_timeout=None if ask is None else timedelta(seconds=ask))

    def _decided(self, context: Context, given: Given, round_: int) -> dict[str, Any] | None:
        """After a round's wait, from the journal: None when another round must sign what
        expired; else stop on what is still in flight or failed, or the report."""
        batch_id = given.batch.batch_id
        short: Mapping[str, str] = getattr(self, "_short_rows", None) or {}
        rows = [p for p in given.batch.rows if p.identity not in short]
        wanted = {p.identity for p in rows}
        latest = self._journal().latest(wanted)
        attempts = [latest[p.identity] for p in rows if p.identity in latest]
        self._publish(context, attempts)  # before any failure below: the link stays
        status: WatchStatus = count(attempts)
        if status.to_sign or len(attempts) < len(rows):
            if round_ >= MAX_ROUNDS:
                raise AirflowException(f"payout batch {batch_id}: {status.to_sign} payouts "
                                       f"expired {MAX_ROUNDS} times without reaching the "
                                       "chain; a retry signs them again")
            return None
        if status.in_flight or status.signing:
            refused = [f"  {a.identity}: the node said {a.last_answer}" for a in attempts
                       if a.state.in_flight() and a.last_answer not in (None, "accepted")]
            others = elsewhere(attempts, batch_id)
            raise AirflowException(
                f"payout batch {batch_id}: {status.in_flight + status.signing} payouts are "
                "still in flight after the wait; a retry follows the same transactions "
                "(nothing is signed again while they can still execute)"
                + (f"\nsome were signed under batch(es) {', '.join(others[:5])}: followed "
                   "here too, and by a retry" if others else "")
                + ("\nthe node's last answer to some of them:\n" + "\n".join(refused[:20])
                   if refused else ""))
        failed = [a for a in attempts if a.state.value == "failed"]
        if failed:
            if self.on_ambiguous == "ask":
                self._asker().ask(context, batch_id, failed)
            raise AirflowFailException(
                f"payout batch {batch_id}: {len(failed)} payouts FAILED on chain and are not "
                f"resent by themselves:\n" + "\n".join(failed_lines(failed)) + f"\nDecide with "
                f"`{CLI} resolve IDENTITY --resend` (a new transaction) or `--cancel`, then "
                "clear the task")
        if short:
            raise AirflowFailException(
                f"payout batch {batch_id}: {len(rows)} payouts settled; {len(short)} were not "
                f"signed, their token's balance short: {next(iter(short.values()))}. Top up "
                "the sender and clear the task: the settled ones are not paid again")
        result = batch_result(batch_id, attempts, {p.identity: p.row for p in rows},
                              self._token_book().by_name(), self._node_hook().get_explorer)
        totals = result["totals"]
        self.log.info("payout batch %s: %s, confirmed on %s blocks; energy charged %s (from "
                      "stake/rental %s, burned %s), TRX burned %s (bandwidth: %s bytes from "
                      "the free or staked allowance, %s sun burned)", batch_id,
                      result["states"], result["confirmation"] or "no",
                      f"{totals['energy_total']:,}", f"{totals['energy_from_stake']:,}",
                      f"{totals['energy_burned']:,}", totals["trx_burned"],
                      f"{totals['bandwidth']:,}", f"{totals['bandwidth_burned_sun']:,}")
        return result


def elsewhere(attempts: Iterable[Attempt], batch_id: str) -> list[str]:
    """Other batches under which some of this batch's payouts are in flight (the same
    payout_id signed there): the wait follows those transactions too."""
    return sorted({a.batch_id for a in attempts if a.batch_id != batch_id
                   and (a.state.in_flight() or a.state.value == "signing")})
