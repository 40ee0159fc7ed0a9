"""What the chain charges now for a batch's transfers, with a few node requests.

A row carries the energy its batch's preparation estimated, maybe an hour ago. Since
then USDT's energy factor may have risen (every transfer costs more) and a recipient
that held USDT may have been emptied (exchanges sweep their deposit addresses to zero:
the transfer writes a new storage slot again, about twice the energy). Asking the node
again for every row would double a batch's requests, so :func:`energy_now` asks per
KIND of row instead: one representative recipient per distinct figure the rows carry
(a holder's, a first-time recipient's), plus a transfer to a fresh address (the most a
USDT transfer costs, :func:`~..node.estimates.first_transfer_energy`), side by side;
each row is then counted at the larger of its own figure and its kind's figure now.

A recipient emptied since preparation cannot be seen that way. :func:`holders_now` reads
each recipient counted as a holder: its USDT balance through the node connection's
multicall contract (``balanceOf`` for up to ``multicall_chunk`` recipients per request;
a balance of 0 means a new slot again, a first transfer's energy), or without one the
node's estimate per distinct recipient (one request each, side by side); the pre-flight
asks for it only when a sweep could make the batch cost more than the sender may spend
(:mod:`~.preflight`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import partial
from math import ceil
from typing import Final, TypeVar

from airflow_provider_tronenergy.fanout import side_by_side
from airflow_provider_tronenergy.node.estimates import Estimates, first_transfer_energy
from airflow_provider_tronenergy.node.protocol import Node
from airflow_provider_tronenergy.payout.rows import Payout

T = TypeVar("T")

MAX_KINDS: Final = 4
"""Distinct row figures asked about one representative each; rarer figures are raised
by the largest rise the asked ones show."""
REPRESENTATIVES: Final = 3
"""Recipients tried for a kind whose first representative looks emptied since."""
EMPTIED_SHARE: Final = Fraction(3, 4)
"""A representative estimated now at a first transfer's energy, whose row was prepared
below this share of it, was a holder then: it was emptied (or the factor rose a lot),
and another representative of its kind is asked."""


@dataclass(frozen=True)
class EnergyNow:
    """The node's figures now: a first transfer, and each asked kind's."""

    first_transfer: int | None
    """A transfer from the sender to a fresh address; None when the node gives none."""
    by_figure: dict[int, int] = field(default_factory=dict)
    """A row figure -> what its representative's transfer costs now."""
    rise: Fraction = Fraction(1)
    """The largest rise (now / then) among the asked kinds: for figures not asked."""
    emptied: frozenset[str] = frozenset()
    """Representatives found emptied since preparation (counted as first transfers)."""
    requests: int = 0

    def figure(self, energy: int) -> int:
        """What a row prepared at ``energy`` costs now, at least ``energy``."""
        now = self.by_figure.get(energy)
        if now is None:
            now = ceil(energy * self.rise)
        return max(energy, now)

    def raised(self, rows: Sequence[Payout], fresh: frozenset[str] = frozenset()
               ) -> list[Payout]:
        """``rows`` with their energy raised to what the chain charges now; a row in
        ``fresh`` (estimated moments ago) keeps its own; an emptied recipient's first
        row counts as a first transfer."""
        return count_emptied(
            [p if p.energy is None or p.identity in fresh else replace(
                p, energy=self.figure(p.energy)) for p in rows], self.emptied,
            self.first_transfer)

    def is_holder_figure(self, energy: int) -> bool:
        """Whether a row counted at ``energy`` would cost more as a first transfer."""
        return self.first_transfer is not None and energy < self.first_transfer


def count_emptied(rows: Sequence[Payout], emptied: frozenset[str] | set[str],
                  first_transfer: int | None) -> list[Payout]:
    """``rows`` with the first row to each ``emptied`` recipient counted as a first
    transfer (the later ones find the slot it wrote)."""
    if first_transfer is None:
        return list(rows)
    return at_least(rows, dict.fromkeys(emptied, first_transfer))


def _parallel(jobs: Sequence[Callable[[], T]], concurrency: int, name: str) -> list[T]:
    """Run ``jobs`` side by side, in order (:func:`~..fanout.side_by_side`)."""
    return side_by_side(lambda job: job(), jobs, max_concurrency=concurrency, name=name)


def energy_now(node: Estimates, sender: str, rows: Sequence[Payout], *,
               fresh: frozenset[str] = frozenset(), concurrency: int = 16) -> EnergyNow:
    """The node's figures now for ``rows`` (see the module): a first transfer and up to
    :data:`MAX_KINDS` representatives, side by side; a representative that looks emptied
    since is replaced by another of its kind (up to :data:`REPRESENTATIVES`)."""
    if not rows:
        return EnergyNow(first_transfer=None)
    figures = Counter(p.energy for p in rows if p.energy is not None
                      and p.identity not in fresh)
    kinds = [energy for energy, _ in figures.most_common(MAX_KINDS)]
    candidates: dict[int, list[str]] = {k: [] for k in kinds}
    for p in rows:
        if p.energy in candidates and p.identity not in fresh:
            seen = candidates[p.energy]
            if p.recipient not in seen and len(seen) < REPRESENTATIVES:
                seen.append(p.recipient)

    def ask(recipient: str) -> Callable[[], int | None]:
        return lambda: node.estimate_transfer_energy(sender, recipient, 1)

    first, *answers = _parallel([lambda: first_transfer_energy(node, sender)]
                                + [ask(candidates[k][0]) for k in kinds],
                                concurrency, "estimate")
    requests = 1 + len(kinds)

    def looks_emptied(kind: int, energy: int | None) -> bool:
        # a first transfer's energy now, prepared well below it: a holder then
        return (first is not None and energy is not None and energy >= first
                and kind < first * EMPTIED_SHARE)

    by_figure: dict[int, int] = {}
    found: set[str] = set()
    for kind, answer in zip(kinds, answers, strict=True):
        reps, tried = candidates[kind], [answer]
        while looks_emptied(kind, tried[-1]) and len(tried) < len(reps):
            found.add(reps[len(tried) - 1])
            tried.append(ask(reps[len(tried)])())
            requests += 1
        if looks_emptied(kind, tried[-1]):
            found.add(reps[len(tried) - 1])
        known = [t for t in tried if t is not None]
        if known:  # none: the node has no estimate; the kind rises as one not asked
            by_figure[kind] = min(known)
    rise = max((Fraction(now, kind) for kind, now in by_figure.items()
                if not looks_emptied(kind, now)), default=Fraction(1))
    return EnergyNow(first_transfer=first, by_figure=by_figure, rise=max(Fraction(1), rise),
                     emptied=frozenset(found), requests=requests)


def holders_now(node: Node, sender: str, rows: Sequence[Payout], now: EnergyNow, *,
                concurrency: int = 16) -> dict[str, int]:
    """What a transfer to each recipient of ``rows`` counted as a holder costs now: an
    emptied one costs a first transfer (``now.first_transfer``).

    With a multicall contract, by its balance (``ceil(holders / multicall_chunk)``
    requests): 0 is an empty slot, the first transfer's energy; more, the figure its first
    row carries. The same answer the chain's estimate gives (a USDT transfer costs a first
    transfer's energy exactly when the recipient's balance slot is zero), for a few
    requests. Without one, the node's estimate per distinct recipient, side by side.
    """
    holders = sorted({p.recipient for p in rows if p.energy is not None
                      and now.is_holder_figure(p.energy) and p.recipient not in now.emptied})
    if not holders:
        return {}
    balances = node.get_usdt_balances(sender, holders)
    if balances is not None and now.first_transfer is not None:
        counted = {p.recipient: p.energy or 0 for p in reversed(rows)}  # each one's first row
        return {r: now.first_transfer if balances[r] == 0 else counted[r] for r in holders}
    answers = _parallel([partial(node.estimate_transfer_energy, sender, r, 1) for r in holders],
                        concurrency, "estimate")
    return {r: energy for r, energy in zip(holders, answers, strict=True) if energy is not None}


def at_least(rows: Sequence[Payout], energies: Mapping[str, int]) -> list[Payout]:
    """``rows`` with the first row to each recipient in ``energies`` raised to its figure
    there (the later ones find the slot it wrote)."""
    seen: set[str] = set()
    out = []
    for p in rows:
        raise_ = p.recipient in energies and p.recipient not in seen and p.energy is not None
        out.append(replace(p, energy=max(p.energy or 0, energies[p.recipient]))
                   if raise_ else p)
        seen.add(p.recipient)
    return out
