"""A connection's request pace: what every request to a node keeps to, whoever sends it.

TronGrid lets a key make about 15 requests a second and answers 429 (at times 503) above
that. Tasks, triggers and workers that share one ``tron_node`` connection share one key, so
a pace per process is not enough: the node client asks a :class:`Pace` for a slot before
every request it sends (resends included) and tells it of every 429 and 503, and the
implementation keeps the slots in a store every sharer reaches (``pace.store.SqlPace``).
The node room only describes it here; it never imports a store.
"""

from __future__ import annotations

from typing import Final, Protocol

from airflow_provider_tronenergy.errors import TronEnergyProviderError

SLOWED: Final = frozenset({429, 503})
"""The answers by which a node says "slower": the pace is pushed back for every sharer."""
QUEUE_SECONDS: Final = 60.0
"""The longest a request waits for its first slot (a 429's ``Retry-After`` included)."""


class Pace(Protocol):
    """Slots for one node key's requests, shared by everyone who sends with that key."""

    def take(self, within: float) -> float:
        """Wait for this request's slot and return the seconds waited.

        A slot further than ``within`` seconds away is not taken: raises
        :class:`PaceTooFar` (nothing is sent, no slot is spent).
        """

    def slow(self, seconds: float) -> None:
        """The node said "slower" (429 or 503): no sharer's next slot before ``seconds``
        from now."""


class PaceTooFar(TronEnergyProviderError, RuntimeError):
    """The next slot is further away than the request may wait (the node client turns it
    into a :class:`~.errors.NodeError`: nothing was sent)."""

    def __init__(self, wait: float, within: float) -> None:
        super().__init__(f"the connection's next request slot is {wait:.1f} s away, "
                         f"more than the {within:.1f} s this request may wait")
        self.wait = wait
