"""Before anything is signed: can the sender pay this batch, and with what ``fee_limit``?

Read once from the chain (the sender's tokens, TRX, energy and bandwidth, and the
chain's prices), checked against the payouts still to send, each at what the chain
charges it now (:mod:`~.preflight`). Every shortfall is named at once and nothing is
signed: tokens, TRX for bandwidth, the multi-sign fee and any burn, energy (or a
burn above ``max_burn_trx``), a transfer needing more than the ``fee_limit`` cap, and a
signer that is not the sender. Bandwidth is paid per transaction, whole from the staked
bandwidth or whole from the free allowance, else every byte burned. A transfer carrying
more than one signature (a permission whose threshold needs several keys) also pays the
chain's ``getMultiSignFee`` from the TRX, before its contract runs (java-tron's
``Manager.consumeMultiSignFee``, commit 1e35f79a165424bbae319799d9aca92948b8f5c2), and
each further signature adds :data:`SIGNATURE_BANDWIDTH` bytes.

A transfer's ``fee_limit`` is the node's energy estimate for it times the chain's
energy price, with a margin, capped by the policy: never a constant, so a rental plus
the ``fee_limit`` does not end ``OUT_OF_ENERGY`` when the chain's prices move. A row
carries the estimate its batch's preparation made (``energy``); any other is asked of
the node for that very transfer (:func:`estimate_energy`) before anything is signed.

Payouts of the sender already signed and not yet in a block (any batch's) will leave
its balance first: a batch payable only if they fail is not refused for good but told
to wait (:class:`FundsInFlight`), since its transfers would revert on chain and burn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_CEILING, Decimal
from typing import Any, Final

from airflow_provider_tronenergy.errors import NotRetryable, Retryable
from airflow_provider_tronenergy.fanout import side_by_side
from airflow_provider_tronenergy.node.chain_parameters import ChainParameters
from airflow_provider_tronenergy.node.models import SUN_PER_TRX, transactions_covered, trx_text
from airflow_provider_tronenergy.node.protocol import Estimates, Node
from airflow_provider_tronenergy.node.tokens import TRX
from airflow_provider_tronenergy.node.transactions import MAX_FEE_LIMIT_SUN
from airflow_provider_tronenergy.payout.attempts import Attempt
from airflow_provider_tronenergy.payout.rows import DEFAULT_TOKEN, Payout

TRANSFER_BANDWIDTH: Final = 350
"""Bytes a signed USDT transfer costs in bandwidth (345 measured, with its result)."""
SIGNATURE_BANDWIDTH: Final = 67
"""Bytes each further signature adds: 65, and 2 of protobuf framing (tag and length)."""
ESTIMATE_CONCURRENCY: Final = 16
"""Node estimates asked side by side (a 10,000-row batch without estimates is 10,000)."""


class PayoutRefused(NotRetryable, RuntimeError):
    """The batch cannot be sent as it stands; every shortfall is named, nothing was signed."""


class FundsInFlight(Retryable, RuntimeError):
    """The batch is payable only if the sender's payouts in flight fail: nothing was
    signed, and a later try (once they are in blocks) reads the chain again."""


@dataclass(frozen=True)
class FeeLimitPolicy:
    """``fee_limit`` = energy x the chain's energy price x (1 + ``margin``), at most
    ``max_trx``. The sender raises each transfer's estimate to what a transfer to an
    emptied address costs now (:func:`~..node.estimates.first_transfer_energy`): an
    estimate may be an hour old, a recipient emptied since (an exchange sweeps its deposit
    addresses to zero) costs a new slot again, and a raised energy factor raises every
    transfer. A ``fee_limit`` is a cap, not a charge: the chain charges what the transfer
    uses, so the higher cap turns an ``OUT_OF_ENERGY`` (a fee paid, nothing moved, a person
    to decide) into a transfer that burns for the energy it lacks."""

    margin: Decimal = Decimal("0.2")
    max_trx: Decimal = Decimal("100")

    def __post_init__(self) -> None:
        for name in ("margin", "max_trx"):
            value = getattr(self, name)
            if isinstance(value, float) or not isinstance(value, Decimal | int):
                raise ValueError(f"fee_limit {name} must be a Decimal or an integer")
            object.__setattr__(self, name, Decimal(value))
        if not Decimal(0) <= self.margin <= Decimal(10):
            raise ValueError("fee_limit margin must be between 0 and 10")
        if not Decimal(0) < self.max_trx * SUN_PER_TRX <= MAX_FEE_LIMIT_SUN:
            raise ValueError(f"max_fee_limit_trx must be above 0 and at most "
                             f"{MAX_FEE_LIMIT_SUN // SUN_PER_TRX:,}")

    @property
    def max_sun(self) -> int:
        """The cap in sun."""
        return int((self.max_trx * SUN_PER_TRX).to_integral_value(ROUND_CEILING))

    def fee_limit_sun(self, energy: int, energy_fee_sun: int) -> int:
        """The ``fee_limit`` of one transfer needing ``energy`` at ``energy_fee_sun`` per energy."""
        wanted = (Decimal(energy) * energy_fee_sun * (1 + self.margin))
        return max(1, min(self.max_sun, int(wanted.to_integral_value(ROUND_CEILING))))

    def over_cap(self, rows: Sequence[Payout], energy_fee_sun: int, limit: int = 20
                 ) -> list[str]:
        """The shortfall naming rows whose transfer needs more than the cap lets it use:
        signed, each would end ``OUT_OF_ENERGY`` (a fee paid, nothing moved)."""
        over = [(p, p.energy) for p in rows if p.energy is not None
                and p.energy * energy_fee_sun > self.max_sun]
        if not over:
            return []
        shown = ", ".join(f"row {p.row} ({p.recipient}, {energy:,} energy: "
                          f"{trx_text(energy * energy_fee_sun)} TRX)" for p, energy in over[:limit])
        more = f" and {len(over) - limit} more" if len(over) > limit else ""
        return [f"fee_limit: {len(over)} transfer(s) need more than max_fee_limit_trx "
                f"{trx_text(self.max_sun)} TRX at {energy_fee_sun} sun per energy, so "
                f"each would end OUT_OF_ENERGY: {shown}{more}"]


@dataclass(frozen=True)
class Funds:
    """What the batch needs against what the sender has, in exact units."""

    sender: str
    units_needed: int
    units_held: int
    energy_needed: int
    energy_available: int
    transactions: int
    """Transfers to sign: the chain charges each one's bandwidth whole."""
    staked_bandwidth: int
    free_bandwidth: int
    trx_held_sun: int
    energy_fee_sun: int
    bandwidth_fee_sun: int
    max_burn_sun: int
    in_flight: int = 0
    """The sender's transfers signed and not yet in a block: they leave its funds first."""
    units_in_flight: int = 0
    energy_in_flight: int = 0
    """At most what their ``fee_limit`` lets them use (a cap on staked energy too)."""
    in_flight_batches: tuple[str, ...] = ()
    transaction_bandwidth: int = TRANSFER_BANDWIDTH
    multi_sign_fee_sun: int = 0
    """``getMultiSignFee`` each transfer pays: 0 when one signature signs it."""
    multi_sign_in_flight_sun: int = 0
    """The multi-sign fees the transfers in flight pay (those with several signatures)."""
    trx_payouts_sun: int = 0
    """TRX the round's TRX payouts take: their amounts, bandwidth and accounts created
    (:func:`~.trx.plan_trx`)."""
    trx_in_flight_sun: int = 0
    """TRX the sender's TRX payouts in flight take: each amount, and at most an account's
    creation (:func:`worst_trx_fee`)."""

    @property
    def bandwidth_needed(self) -> int:
        """Bytes the transfers take in all."""
        return self.transactions * self.transaction_bandwidth

    @property
    def bandwidth_available(self) -> int:
        """Staked plus free bytes (a total for people: the chain never adds them up)."""
        return self.staked_bandwidth + self.free_bandwidth

    @property
    def transactions_covered(self) -> int:
        """Transfers the staked and free bandwidth pay for, each whole or not at all."""
        return min(self.transactions, transactions_covered(
            self.transaction_bandwidth, staked=self.staked_bandwidth, free=self.free_bandwidth))

    @property
    def bandwidth_burned(self) -> int:
        """Bytes burned for: every byte of each transfer no pool covers whole."""
        return (self.transactions - self.transactions_covered) * self.transaction_bandwidth

    @property
    def bandwidth_burn_sun(self) -> int:
        """TRX (sun) burned for bandwidth."""
        return self.bandwidth_burned * self.bandwidth_fee_sun

    @property
    def energy_burned(self) -> int:
        """Energy the chain would burn TRX for (the batch needs more than the sender has)."""
        return max(0, self.energy_needed - self.energy_available)

    @property
    def energy_burn_sun(self) -> int:
        """TRX (sun) burned for the energy the sender does not have: ``max_burn_trx`` caps it."""
        return self.energy_burned * self.energy_fee_sun

    @property
    def multi_sign_sun(self) -> int:
        """TRX (sun) the transfers pay in multi-sign fees."""
        return self.transactions * self.multi_sign_fee_sun

    @property
    def burn_sun(self) -> int:
        """TRX (sun) the batch would burn: energy not covered, bandwidth not covered, and
        the multi-sign fees."""
        return self.energy_burn_sun + self.bandwidth_burn_sun + self.multi_sign_sun

    def after_in_flight(self) -> Funds:
        """The funds left once the transfers in flight execute, each using at most its
        ``fee_limit``'s energy (and burning TRX for what the sender lacks), and taking its
        bandwidth whole from the staked bandwidth, else the free, else burning for it."""
        size = self.transaction_bandwidth
        from_staked = min(self.in_flight, self.staked_bandwidth // size)
        from_free = min(self.in_flight - from_staked, self.free_bandwidth // size)
        burned = self.in_flight - from_staked - from_free
        their_burn = (max(0, self.energy_in_flight - self.energy_available) * self.energy_fee_sun
                      + burned * size * self.bandwidth_fee_sun + self.multi_sign_in_flight_sun)
        return replace(
            self, units_held=max(0, self.units_held - self.units_in_flight),
            energy_available=max(0, self.energy_available - self.energy_in_flight),
            staked_bandwidth=self.staked_bandwidth - from_staked * size,
            free_bandwidth=self.free_bandwidth - from_free * size,
            trx_held_sun=max(0, self.trx_held_sun - their_burn - self.trx_in_flight_sun),
            in_flight=0, units_in_flight=0, energy_in_flight=0, in_flight_batches=(),
            multi_sign_in_flight_sun=0, trx_in_flight_sun=0)

    def shortfalls(self, token: str, decimals: int) -> list[str]:
        """Every reason the batch cannot be sent; empty when it can."""
        short: list[str] = []
        if self.units_held < self.units_needed:
            scale = Decimal(10) ** decimals
            short.append(f"tokens: {self.sender} holds {Decimal(self.units_held) / scale} "
                         f"{token}, the batch sends {Decimal(self.units_needed) / scale}")
        if self.energy_burn_sun > self.max_burn_sun:
            short.append(f"energy: the batch needs {self.energy_needed:,}, the sender has "
                         f"{self.energy_available:,}; burning the rest would cost "
                         f"{trx_text(self.energy_burn_sun)} TRX, over max_burn_trx "
                         f"{trx_text(self.max_burn_sun)}")
        if self.trx_payouts_sun and self.trx_held_sun < self.burn_sun + self.trx_payouts_sun:
            short.append(f"TRX: the TRX payouts take {trx_text(self.trx_payouts_sun)} TRX "
                         f"(amounts, bandwidth, accounts created) and burning for the other "
                         f"transfers {trx_text(self.burn_sun)} TRX; the sender has "
                         f"{trx_text(self.trx_held_sun)}")
        elif self.trx_held_sun < self.burn_sun:
            fees = (f"; multi-sign fee: {self.transactions} transfer(s) with several "
                    f"signatures at {trx_text(self.multi_sign_fee_sun)} TRX: "
                    f"{trx_text(self.multi_sign_sun)} TRX") if self.multi_sign_sun else ""
            what = " and the multi-sign fee" if self.multi_sign_sun else ""
            short.append(f"TRX: burning for energy and bandwidth{what} needs "
                         f"{trx_text(self.burn_sun)} TRX, the sender has "
                         f"{trx_text(self.trx_held_sun)} ({self.bandwidth_text()}{fees})")
        return short

    def bandwidth_text(self) -> str:
        """Where the transfers' bandwidth comes from, as the chain charges it."""
        return (f"bandwidth: {self.transactions} transfer(s) of {self.transaction_bandwidth} "
                f"bytes, each paid whole from {self.staked_bandwidth:,} staked or "
                f"{self.free_bandwidth:,} free bytes or burned: "
                f"{self.transactions - self.transactions_covered} burn "
                f"{trx_text(self.bandwidth_burn_sun)} TRX")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, for the log and XCom."""
        return {"units_needed": str(self.units_needed), "units_held": str(self.units_held),
                "energy_needed": self.energy_needed, "energy_available": self.energy_available,
                "bandwidth_needed": self.bandwidth_needed,
                "bandwidth_available": self.bandwidth_available,
                "bandwidth_staked": self.staked_bandwidth, "bandwidth_free": self.free_bandwidth,
                "transfers_bandwidth_covers": self.transactions_covered,
                "bandwidth_burn_trx": trx_text(self.bandwidth_burn_sun),
                "trx_held": trx_text(self.trx_held_sun), "burn_trx": trx_text(self.burn_sun),
                "multi_sign_fee_trx": trx_text(self.multi_sign_sun),
                "in_flight": self.in_flight, "units_in_flight": str(self.units_in_flight),
                "energy_in_flight": self.energy_in_flight,
                **({"trx_payouts": trx_text(self.trx_payouts_sun)}
                   if self.trx_payouts_sun else {})}


def worst_trx_fee(prices: ChainParameters) -> int:
    """The most a single-signature TRX transfer burns beyond its amount: creating its
    recipient (``getCreateNewAccountFeeInSystemContract`` and ``getCreateAccountFee``,
    node/trx_costs.py), or its bytes burned (at most 512 at ``getTransactionFee``), plus
    a multi-sign fee."""
    return max(prices.create_new_account_fee_in_system_contract + prices.create_account_fee,
               512 * prices.transaction_fee) + prices.multi_sign_fee


def transfer_energy(payout: Payout) -> int:
    """The node's estimate for one transfer: :func:`estimate_energy` gave every row one."""
    if payout.energy is None:
        raise ValueError(f"payout {payout.identity} has no energy estimate: a fee_limit is "
                         "sized from the node's estimate, never from a constant")
    return payout.energy


def estimate_energy(node: Estimates, sender: str, rows: Sequence[Payout], *,
                    concurrency: int = ESTIMATE_CONCURRENCY
                    ) -> tuple[list[Payout], list[Payout]]:
    """``(rows, unestimated)``: each row lacking ``energy`` with the node's estimate for a
    transfer from ``sender`` to its recipient now (one request per distinct recipient, side
    by side), and the rows the node gave none for (nothing may be signed for those).

    Asked for 1 unit: a USDT transfer's energy depends on the recipient's storage, not on
    the amount, so a batch over the balance still gets its energy named with the tokens
    it lacks. A node error or an estimate out of range propagates: nothing is signed.
    """
    missing = sorted({p.recipient for p in rows if p.energy is None})
    if not missing:
        return list(rows), []

    def ask(recipient: str) -> int | None:
        return node.estimate_transfer_energy(sender, recipient, 1)

    energies = dict(zip(missing, side_by_side(ask, missing, max_concurrency=concurrency,
                                              name="estimate"), strict=True))
    estimated = [p if p.energy is not None else replace(p, energy=energies[p.recipient])
                 for p in rows]
    return ([p for p in estimated if p.energy is not None],
            [p for p in estimated if p.energy is None])


def unestimated_lines(rows: Sequence[Payout], limit: int = 20) -> list[str]:
    """The shortfall naming rows the node gave no energy estimate for."""
    if not rows:
        return []
    shown = ", ".join(f"row {p.row} ({p.recipient})" for p in rows[:limit])
    more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
    return [f"energy estimate: the node gives none for {shown}{more} (the transfer would "
            "revert, as it does when the sender holds none of the token); a fee_limit is never "
            "guessed"]


def read_funds(node: Node, sender: str, to_send: Sequence[Payout], *,
               max_burn_trx: Decimal, prices: ChainParameters | None = None,
               in_flight: Sequence[Attempt] = (), signatures: int = 1,
               token: str = DEFAULT_TOKEN) -> Funds:
    """The sender's funds against the payouts still to send (``to_send``), from the chain;
    the energy counts the rows :func:`estimate_energy` gave an estimate (the others are
    refused by :func:`refuse_unless_payable`). ``in_flight``: the sender's transfers
    signed and not in a block when the chain is read here (read them first: one that
    lands in between is then counted twice, never missed). ``signatures``: how many each
    transfer carries (the permission's signers up to its threshold), so the multi-sign
    fee and the bytes are counted. ``token``: the journal name of the token ``node``
    reads the balance of (its transfers in flight are the units counted as leaving)."""
    if signatures < 1:
        raise ValueError("a transfer carries at least one signature")
    prices = prices or node.get_chain_parameters()
    account = node.get_account(sender)
    resources = node.get_resources(sender)
    return Funds(
        sender=sender, units_needed=sum(p.units for p in to_send),
        units_held=node.get_usdt_balance(sender) if to_send else 0,
        energy_needed=sum(transfer_energy(p) for p in to_send if p.energy is not None),
        energy_available=resources.energy_available,
        transactions=len(to_send), staked_bandwidth=resources.staked_bandwidth_available,
        free_bandwidth=resources.free_bandwidth_available,
        trx_held_sun=account.trx_sun, energy_fee_sun=prices.energy_fee,
        bandwidth_fee_sun=prices.transaction_fee,
        max_burn_sun=int((max_burn_trx * SUN_PER_TRX).to_integral_value(ROUND_CEILING)),
        in_flight=len(in_flight),
        units_in_flight=sum(a.units for a in in_flight if a.token == token),
        energy_in_flight=sum((a.fee_limit_sun or MAX_FEE_LIMIT_SUN) // max(1, prices.energy_fee)
                             for a in in_flight if a.token != TRX),  # TRX: none
        trx_in_flight_sun=sum(a.units + worst_trx_fee(prices) for a in in_flight
                              if a.token == TRX),
        in_flight_batches=tuple(sorted({a.batch_id for a in in_flight})),
        transaction_bandwidth=TRANSFER_BANDWIDTH + SIGNATURE_BANDWIDTH * (signatures - 1),
        multi_sign_fee_sun=prices.multi_sign_fee if signatures > 1 else 0,
        multi_sign_in_flight_sun=prices.multi_sign_fee * sum(
            1 for a in in_flight if (a.signatures or 0) > 1))


def refuse_unless_payable(funds: Funds, *, signer_address: str, token: str,
                          decimals: int, unestimated: Sequence[Payout] = (),
                          more: Sequence[str] = ()) -> None:
    """Raise :class:`PayoutRefused` naming every shortfall (the signer's address first;
    ``more``: other shortfalls found before, such as :meth:`FeeLimitPolicy.over_cap`)."""
    short = [] if signer_address == funds.sender else [
        f"signer: the tron_signer connection signs for {signer_address}, not the sender "
        f"{funds.sender}"]
    short += funds.shortfalls(token, decimals) + unestimated_lines(unestimated) + list(more)
    if short:
        raise PayoutRefused("the batch cannot be sent (nothing was signed):\n  "
                            + "\n  ".join(short))
    later = funds.after_in_flight().shortfalls(token, decimals)
    if later:
        scale = Decimal(10) ** decimals
        raise FundsInFlight(
            f"the batch is payable only if payouts in flight fail (nothing was signed): "
            f"{funds.in_flight} transfer(s) of {funds.sender} are signed and not yet in a "
            f"block (batch(es) {', '.join(funds.in_flight_batches[:5])}), sending "
            f"{Decimal(funds.units_in_flight) / scale} {token} and using up to "
            f"{funds.energy_in_flight:,} energy; once they execute:\n  " + "\n  ".join(later)
            + "\nthey settle by themselves (in a block, or expired); a later try reads the "
            "chain again")
