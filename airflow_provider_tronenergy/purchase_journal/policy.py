"""Given the journal's newest attempt at a purchase, what may this attempt do?

Pure rules, no I/O, so each invariant of docs/money-safety.md is one branch
here and one test:

1. an unknown outcome blocks every run until a person resolves it;
2. a placed order is reused while its energy is still valid: by the task
   instance that placed it (a retry or a clear), by any run when the purchase
   has an explicit ``purchase_key``, and once by the next attempt after a
   person resolved it with an order id;
3. otherwise (nothing yet, refused, not placed, expired, ended) buy.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from airflow_provider_tronenergy.purchase_journal.store import Entry, EntryState


class Verdict(str, Enum):
    """What the attempt does."""

    BUY = "buy"
    REUSE = "reuse"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Decision:
    """The verdict and the journal entry it rests on (``None``: first attempt ever)."""

    verdict: Verdict
    entry: Entry | None


def decide(latest: Entry | None, *, scope: str, now: float, min_validity: float) -> Decision:
    """The rule for one attempt; ``min_validity`` is the seconds of rental a reuse needs."""
    if latest is None:
        return Decision(Verdict.BUY, None)
    if latest.state.blocks():
        return Decision(Verdict.UNKNOWN, latest)
    if latest.state is EntryState.PLACED and reusable_by(latest, scope) \
            and latest.valid_for(now) >= min_validity:
        return Decision(Verdict.REUSE, latest)
    return Decision(Verdict.BUY, latest)


def reusable_by(entry: Entry, scope: str) -> bool:
    """Whose attempt may take this placed order instead of buying."""
    if entry.explicit_key:
        return True  # the caller said: same key, same purchase, whatever the run
    # Unclaimed: resolved by a person, waiting for the next attempt of any run.
    return entry.claimed_by is None or entry.claimed_by == scope
