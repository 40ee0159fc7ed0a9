"""The keeper's purchases, as the purchase journal holds them: one identity per shortfall.

A keeper names each purchase ``keeper:<name>:<wallet>:<n>``, the wallet's n-th top-up.
Two wakes for the same shortfall read the same n, so the journal lets one of them buy
(the other finds it being placed, or placed, and buys nothing); once that purchase is
placed the next shortfall is n + 1, and its order counts as energy on the way until
the chain shows it (``keeper.reading``). A refused or not-placed attempt keeps n: the
next try is a new attempt at the same shortfall. One journal for every worker (SQLite,
or one PostgreSQL for several) makes that hold across workers and restarts.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from airflow_provider_tronenergy.keeper.policy import KeeperPolicyError
from airflow_provider_tronenergy.purchase_journal import Entry, EntryState, PurchaseJournal
from airflow_provider_tronenergy.purchase_journal.identity import is_key_text

PREFIX: Final = "keeper"
DONE: Final = (EntryState.PLACED, EntryState.ENDED)
"""States of a purchase that was made: the next shortfall is a new one."""


def checked_name(name: str) -> str:
    """A keeper's name, as its purchases' identities and its registry rows carry it."""
    if not is_key_text(name, 80) or ":" in name:
        raise KeeperPolicyError(
            f"keeper name {name!r} must be 1 to 80 characters of A-Z a-z 0-9 and ._/@+=#- "
            "(it names the keeper's purchases in the journal)")
    return name


@dataclass
class KeeperBook:
    """One keeper's page of the purchase journal (``name``: the keeper's, e.g. its DAG's)."""

    journal: PurchaseJournal
    name: str

    def __post_init__(self) -> None:
        checked_name(self.name)

    def prefix(self, wallet: str = "") -> str:
        """The identities of this keeper's purchases (for ``wallet``, or all)."""
        return f"{PREFIX}:{self.name}:" + (f"{wallet}:" if wallet else "")

    def entries(self, wallet: str, since: float = 0.0) -> list[Entry]:
        """The wallet's attempts sent since ``since`` (epoch seconds), newest first."""
        return self.journal.with_prefix(self.prefix(wallet), since=since)

    def next_identity(self, wallet: str) -> str:
        """The identity of the wallet's next purchase: after a purchase that was made, the
        next shortfall's; after one refused or not placed, the same shortfall's again."""
        entries = self.entries(wallet)
        if not entries:
            return f"{self.prefix(wallet)}1"
        newest = entries[0]
        n = int(newest.identity.rsplit(":", 1)[1])
        return f"{self.prefix(wallet)}{n + 1 if newest.state in DONE else n}"

    def spent(self, since: float, sending_price: Decimal) -> Decimal:
        """TRX this keeper spent since ``since``, every wallet: what placed purchases cost,
        and for one whose outcome is unknown what it may have cost (its energy at
        ``sending_price`` per 10,000: the cap), so the budget never counts it as unspent."""
        total = Decimal(0)
        for entry in self.journal.with_prefix(self.prefix(), since=since):
            if entry.state in DONE and entry.result and entry.result.get("cost") is not None:
                total += Decimal(str(entry.result["cost"]))
            elif entry.state in DONE or entry.state is EntryState.SENDING:
                total += energy_of(entry) * sending_price / 10_000
        return total


def energy_of(entry: Entry) -> int:
    """The energy an attempt asked for (its journaled ``buy`` request)."""
    amount = entry.request.get("energy_amount")
    return amount if isinstance(amount, int) and amount > 0 else 0
