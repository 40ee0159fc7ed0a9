"""The pre-flight of one signing round: what the chain will charge now, against the funds.

:func:`clear_to_sign` runs, in order, before anything is signed:

1. each row without an estimate gets the node's for its recipient
   (:func:`~.funds.estimate_energy`);
2. the prepared rows are raised to what the chain charges now, per kind of row
   (:func:`~.estimates.energy_now`: a few requests, not one per row);
3. the sender's funds are read (:func:`~.funds.read_funds`), its transfers in flight
   counted first, and each transfer's multi-sign fee when it carries several signatures
   (``signatures``: the permission's signers up to its threshold);
4. recipients emptied since preparation (a swept deposit address costs a first
   transfer again): each recipient counted as a holder is read (its balance through
   the connection's multicall, many per request, else the node's estimate, one request
   each: :func:`~.estimates.holders_now`) only when a sweep could make the batch cost
   more than the sender may spend (:func:`sweep_could_matter`), or always, or never
   (``read_recipients``: see ``docs/decisions.md``);
5. every shortfall is named at once (:func:`~.funds.refuse_unless_payable`), a
   ``fee_limit`` cap below a transfer's need among them.

The operator calls it once per round and signs the rows it returns.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Final, Literal

from airflow_provider_tronenergy.node.chain_parameters import ChainParameters
from airflow_provider_tronenergy.node.protocol import Node
from airflow_provider_tronenergy.node.tokens import TRX, USDT, Token
from airflow_provider_tronenergy.node.trx_costs import TrxPlan
from airflow_provider_tronenergy.payout.attempts import Attempt
from airflow_provider_tronenergy.payout.estimates import (
    EnergyNow,
    at_least,
    energy_now,
    holders_now,
)
from airflow_provider_tronenergy.payout.funds import (
    ESTIMATE_CONCURRENCY,
    FeeLimitPolicy,
    Funds,
    PayoutRefused,
    estimate_energy,
    read_funds,
    refuse_unless_payable,
    transfer_energy,
)
from airflow_provider_tronenergy.payout.mixed import (
    by_token,
    clear_tokens,
    sweep_could_matter,
    token_node,
)
from airflow_provider_tronenergy.payout.rows import Payout
from airflow_provider_tronenergy.payout.trx import plan_trx

log = logging.getLogger(__name__)


ReadRecipients = Literal["auto", "always", "never"]
READ_RECIPIENTS: Final = ("auto", "always", "never")


def read_recipients_setting(value: object) -> ReadRecipients:
    """``read_recipients``, checked."""
    if value not in READ_RECIPIENTS:
        raise ValueError(f"read_recipients must be one of {', '.join(READ_RECIPIENTS)}, "
                         f"got {str(value)[:40]!r}")
    return value  # checked above


@dataclass(frozen=True)
class Cleared:
    """A round cleared to sign: its rows at what the chain charges now, and the funds."""

    rows: list[Payout]
    funds: Funds
    now: EnergyNow
    recipients_read: int = 0
    emptied: frozenset[str] = frozenset()
    """Recipients found costing more than counted (emptied since preparation)."""
    refused: tuple[str, ...] = ()
    """In a batch of several tokens: each token whose balance is short, its rows left out."""
    refused_ids: frozenset[str] = frozenset()
    trx: TrxPlan | None = None
    """What the round's TRX payouts take (:func:`~.trx.plan_trx`)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, for the log."""
        return {**self.funds.to_dict(), "first_transfer_energy": self.now.first_transfer,
                "energy_now": {str(k): v for k, v in sorted(self.now.by_figure.items())},
                "recipients_read": self.recipients_read,
                "recipients_emptied": len(self.emptied),
                **({"tokens_short": list(self.refused)} if self.refused else {}),
                **({"trx_payouts": self.trx.figures()} if self.trx is not None else {})}


def clear_to_sign(node: Node, sender: str, to_sign: Sequence[Payout], *,
                  signer_address: str, token: str, decimals: int, max_burn_trx: Decimal,
                  policy: FeeLimitPolicy, prices: ChainParameters | None = None,
                  in_flight: Sequence[Attempt] = (), read_recipients: ReadRecipients = "auto",
                  concurrency: int = ESTIMATE_CONCURRENCY, signatures: int = 1,
                  tokens: Mapping[str, Token] | None = None, permission_id: int = 0) -> Cleared:
    """The rows to sign at what the chain charges now, or :class:`~.funds.PayoutRefused`
    (every shortfall) / :class:`~.funds.FundsInFlight` (see the module).

    Rows of one token: that token's contract (``token``, ``decimals``: the batch's when
    ``to_sign`` is empty). Rows of several: :func:`~.mixed.clear_tokens` (``tokens`` by
    journal name). TRX rows: what they take (:func:`~.trx.plan_trx`) counted in the same
    check of the sender's TRX; no energy."""
    prices = prices or node.get_chain_parameters()
    trx_rows = [replace(p, energy=0) for p in to_sign if p.token == TRX]
    token_rows = [p for p in to_sign if p.token != TRX]
    plan = plan_trx(node, sender, trx_rows, signatures=signatures, permission_id=permission_id,
                    shared=bool(token_rows), concurrency=concurrency) if trx_rows else None
    trx_sun = plan.trx_needed_sun if plan is not None else 0
    groups = by_token(token_rows)
    if len(groups) > 1 or (groups and trx_rows):  # a short token refuses its rows only
        cleared = _clear_mixed(node, sender, groups, tokens or {},
                               signer_address=signer_address, max_burn_trx=max_burn_trx,
                               policy=policy, prices=prices, in_flight=in_flight,
                               read_recipients=read_recipients, concurrency=concurrency,
                               signatures=signatures, trx_sun=trx_sun)
    else:
        cleared = _clear_one(node, sender, token_rows, groups, signer_address=signer_address,
                             token=token, decimals=decimals, max_burn_trx=max_burn_trx,
                             policy=policy, prices=prices, in_flight=in_flight,
                             read_recipients=read_recipients, concurrency=concurrency,
                             signatures=signatures, tokens=tokens, trx_sun=trx_sun)
    return replace(cleared, rows=cleared.rows + trx_rows, trx=plan)


def _clear_one(node: Node, sender: str, to_sign: Sequence[Payout],
               groups: Mapping[str, Sequence[Payout]], *, signer_address: str, token: str,
               decimals: int, max_burn_trx: Decimal, policy: FeeLimitPolicy,
               prices: ChainParameters, in_flight: Sequence[Attempt],
               read_recipients: ReadRecipients, concurrency: int, signatures: int,
               tokens: Mapping[str, Token] | None, trx_sun: int) -> Cleared:
    """Rows of one TRC-20 token (none: only the TRX check), at its contract's figures."""
    if groups:
        token = next(iter(groups))
        decimals = tokens[token].decimals if tokens and token in tokens else decimals
        node = token_node(node, token)
    estimated, unestimated = estimate_energy(node, sender, to_sign, concurrency=concurrency)
    fresh = frozenset(p.identity for p in to_sign if p.energy is None)
    now = energy_now(node, sender, estimated, fresh=fresh, concurrency=concurrency)
    rows = now.raised(estimated, fresh)
    funds = replace(read_funds(node, sender, rows + unestimated, max_burn_trx=max_burn_trx,
                               prices=prices, in_flight=in_flight, signatures=signatures,
                               token=token), trx_payouts_sun=trx_sun)
    read, found = 0, frozenset[str]()
    if read_recipients == "always" or (
            read_recipients == "auto" and not funds.shortfalls(token, decimals)
            and sweep_could_matter(funds, rows, now, fresh)):
        energies = holders_now(node, sender, [p for p in rows if p.identity not in fresh], now,
                               concurrency=concurrency)
        read = len(energies)
        counted = {p.recipient: p.energy or 0 for p in reversed(rows)}  # each one's first row
        found = frozenset(r for r, energy in energies.items() if energy > counted[r])
        if found:
            rows = at_least(rows, energies)
            funds = replace(funds, energy_needed=sum(transfer_energy(p) for p in rows))
            log.warning("%d recipient(s) counted as holders cost more now (emptied since the "
                        "batch was prepared: a new slot again): counted at what they cost now "
                        "(a first transfer's energy)", len(found))
    if now.first_transfer and now.first_transfer * prices.energy_fee > policy.max_sun:
        log.warning("max_fee_limit_trx %s caps every fee_limit below a transfer to an emptied "
                    "address (%s energy now): a recipient emptied since its estimate would end "
                    "OUT_OF_ENERGY", policy.max_trx, f"{now.first_transfer:,}")
    refuse_unless_payable(funds, signer_address=signer_address, token=token,
                          decimals=decimals, unestimated=unestimated,
                          more=policy.over_cap(rows, prices.energy_fee))
    return Cleared(rows=rows, funds=funds, now=now, recipients_read=read,
                   emptied=found | now.emptied)


def _clear_mixed(node: Node, sender: str, groups: Mapping[str, Sequence[Payout]],
                 tokens: Mapping[str, Token], *, signer_address: str, max_burn_trx: Decimal,
                 policy: FeeLimitPolicy, prices: ChainParameters, in_flight: Sequence[Attempt],
                 read_recipients: ReadRecipients, concurrency: int, signatures: int,
                 trx_sun: int) -> Cleared:
    """Rows of several tokens (:func:`~.mixed.clear_tokens`): a token short refuses its
    rows only; every other shortfall (the energy, the TRX, the signer) refuses the round."""
    mixed = clear_tokens(node, sender, groups, tokens, max_burn_trx=max_burn_trx,
                         prices=prices, in_flight=in_flight, read_recipients=read_recipients,
                         concurrency=concurrency, signatures=signatures)
    mixed = replace(mixed, funds=replace(mixed.funds, trx_payouts_sun=trx_sun))
    if mixed.refused and not mixed.rows and not mixed.unestimated and not trx_sun:
        raise PayoutRefused("the batch cannot be sent (nothing was signed):\n  tokens: "
                            + "\n  tokens: ".join(mixed.refused))
    try:
        refuse_unless_payable(mixed.funds, signer_address=signer_address, token=USDT,
                              decimals=0, unestimated=mixed.unestimated,
                              more=policy.over_cap(mixed.rows, prices.energy_fee))
    except PayoutRefused as exc:
        if not mixed.refused:
            raise
        raise PayoutRefused("\n  tokens: ".join([str(exc), *mixed.refused])) from None
    if mixed.refused:
        log.warning("payout tokens short, their rows refused (nothing of them signed): %s",
                    "; ".join(mixed.refused))
    return Cleared(rows=mixed.rows, funds=mixed.funds, now=mixed.now,
                   recipients_read=mixed.recipients_read, refused=mixed.refused,
                   refused_ids=mixed.refused_ids)

