"""The pre-flight of a round whose payouts pay several tokens: each token's own figures,
one reservation of the sender's TRX, energy and bandwidth for all of them.

Each TRC-20 contract costs its own energy (its code, its energy factor) and a recipient
holding it costs less than one holding none, so every figure is read per contract, through
the same node connection bound to it (:meth:`~..node.client.TronNodeClient.for_token`): the
estimates per row kind and a first transfer (:func:`~.estimates.energy_now`), the holders
read again (:func:`~.estimates.holders_now`, the connection's multicall where configured),
the sender's balance. Each row's ``fee_limit`` covers a first transfer of *its* contract
(:attr:`~.rows.Payout.floor`).

Then one check of what they need together (:func:`~.funds.read_funds`: the energy, the
bandwidth per transaction, the TRX burned), under the one lease the round holds: the
tokens are separate purses, the TRX is one.

A token the sender holds too little of refuses its rows only (:attr:`Mixed.refused`), before
anything is signed; the others are signed. Short only because the sender's transfers in flight
will spend it: :class:`~.funds.FundsInFlight` for the round, as a single token's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from airflow_provider_tronenergy.node.protocol import Node
from airflow_provider_tronenergy.node.tokens import USDT, Token
from airflow_provider_tronenergy.payout.attempts import Attempt
from airflow_provider_tronenergy.payout.estimates import (
    EnergyNow,
    at_least,
    energy_now,
    holders_now,
)
from airflow_provider_tronenergy.payout.funds import (
    Funds,
    FundsInFlight,
    estimate_energy,
    read_funds,
    transfer_energy,
)
from airflow_provider_tronenergy.payout.rows import Payout
from tronenergy_protocol.numbers import units_text


def token_node(node: Node, name: str) -> Node:
    """``node`` reading token ``name``'s contract: itself for USDT (the connection's own),
    else bound to the contract the name is (:attr:`~..node.tokens.Token.name`)."""
    if name == USDT:
        return node
    bound: Any = getattr(node, "for_token", None)
    if bound is None:
        raise TypeError(f"{type(node).__name__} reads USDT only: no for_token()")
    result: Node = bound(name)
    return result


def by_token(rows: Sequence[Payout]) -> dict[str, list[Payout]]:
    """``rows`` by their token's journal name, in row order."""
    grouped: dict[str, list[Payout]] = {}
    for payout in rows:
        grouped.setdefault(payout.token, []).append(payout)
    return grouped


def sweep_could_matter(funds: Funds, rows: Sequence[Payout], now: EnergyNow,
                       fresh: frozenset[str] = frozenset()) -> bool:
    """Whether every holder row turning into a first transfer (its recipient emptied
    since) would leave the batch short: the sender's energy, once its transfers in flight
    are counted, would not cover it, and ``max_burn_trx`` or the TRX would not pay for
    the difference."""
    first = now.first_transfer
    if first is None:
        return False
    seen: set[str] = set()
    extra = 0
    for p in rows:
        if (p.energy is not None and p.identity not in fresh and p.recipient not in seen
                and now.is_holder_figure(p.energy)):
            extra += first - p.energy
        seen.add(p.recipient)
    if not extra:
        return False
    worst = replace(funds, energy_needed=funds.energy_needed + extra).after_in_flight()
    return worst.energy_burn_sun > worst.max_burn_sun or worst.trx_held_sun < worst.burn_sun



@dataclass(frozen=True)
class Mixed:
    """A mixed round's rows at what the chain charges now, the funds they need together,
    and the rows refused for their token's balance."""

    rows: list[Payout]
    unestimated: list[Payout]
    funds: Funds
    now: EnergyNow
    """The largest first transfer of the round's contracts (each row carries its own)."""
    refused: tuple[str, ...] = ()
    refused_ids: frozenset[str] = frozenset()
    recipients_read: int = 0


def clear_tokens(node: Node, sender: str, groups: Mapping[str, Sequence[Payout]],
                 tokens: Mapping[str, Token], *, max_burn_trx: Decimal, prices: Any,
                 in_flight: Sequence[Attempt], read_recipients: str, concurrency: int,
                 signatures: int) -> Mixed:
    """Each token's rows priced at its contract's figures and checked against its balance;
    then the funds they need together (see the module)."""
    rows: list[Payout] = []
    unestimated: list[Payout] = []
    refused: list[str] = []
    refused_ids: set[str] = set()
    waiting: list[str] = []
    firsts: list[int] = []
    nows: dict[str, EnergyNow] = {}
    read = 0
    for name, group in groups.items():
        token, bound = tokens[name], token_node(node, name)
        held = bound.get_usdt_balance(sender)
        needed = sum(p.units for p in group)
        flying = sum(a.units for a in in_flight if a.token == name)
        if held < needed:
            refused.append(f"{token.shown}: {sender} holds {units_text(held, token.decimals)}, "
                           f"its {len(group)} row(s) send {units_text(needed, token.decimals)}"
                           f" (rows {', '.join(str(p.row) for p in group[:20])})")
            refused_ids.update(p.identity for p in group)
            continue
        if held - flying < needed:
            waiting.append(f"{token.shown}: {units_text(flying, token.decimals)} of it is in "
                           f"transfers signed and not yet in a block")
            continue
        estimated, missing = estimate_energy(bound, sender, group, concurrency=concurrency)
        fresh = frozenset(p.identity for p in group if p.energy is None)
        now = energy_now(bound, sender, estimated, fresh=fresh, concurrency=concurrency)
        raised = now.raised(estimated, fresh)
        if read_recipients == "always":
            energies = holders_now(bound, sender, [p for p in raised if p.identity not in fresh],
                                   now, concurrency=concurrency)
            read += len(energies)
            raised = at_least(raised, energies)
        nows[name] = now
        if now.first_transfer is not None:
            firsts.append(now.first_transfer)
        rows += [replace(p, floor=now.first_transfer) for p in raised]
        unestimated += missing
    if waiting:
        raise FundsInFlight("the batch is payable only if payouts in flight fail (nothing was "
                            "signed):\n  " + "\n  ".join(waiting) + "\nthey settle by "
                            "themselves (in a block, or expired); a later try reads the "
                            "chain again")
    funds = replace(read_funds(node, sender, rows + unestimated, max_burn_trx=max_burn_trx,
                               prices=prices, in_flight=in_flight, signatures=signatures),
                    units_needed=0, units_held=0, units_in_flight=0)
    if read_recipients == "auto" and not funds.shortfalls(USDT, 0):
        mixed: list[Payout] = []
        for name, group_rows in by_token(rows).items():
            now, energies = nows[name], {}
            if sweep_could_matter(funds, group_rows, now):
                energies = holders_now(token_node(node, name), sender, group_rows, now,
                                       concurrency=concurrency)
                read += len(energies)
            mixed += at_least(group_rows, energies)
        rows = sorted(mixed, key=lambda p: p.row)
        funds = replace(funds, energy_needed=sum(transfer_energy(p) for p in rows))
    return Mixed(rows=rows, unestimated=unestimated, funds=funds,
                 now=EnergyNow(first_transfer=max(firsts, default=None)),
                 refused=tuple(refused), refused_ids=frozenset(refused_ids),
                 recipients_read=read)
