"""One payout attempt as the payout journal holds it: its state, and what a worker claims
and signs. Plain data, no database: the journal (:mod:`.journal`) reads and writes them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from airflow_provider_tronenergy.purchase_journal.store import iso


class PayoutState(str, Enum):
    """Where one attempt at a payout stands."""

    SIGNING = "signing"
    """Claimed by a worker that is signing; nothing has left. Taken over once stale."""
    SIGNED = "signed"
    """Signed and journaled: it may have been broadcast. The chain decides."""
    SENT = "sent"
    """The node accepted it (or already had it)."""
    CONFIRMED = "confirmed"
    """In a block, and it succeeded: paid."""
    FAILED = "failed"
    """In a block, and it failed (REVERT, OUT_OF_ENERGY): a person decides."""
    EXPIRED = "expired"
    """Past its expiration on a solidified block and not on chain: it can never execute."""
    ABANDONED = "abandoned"
    """A claim that never signed (its worker died): taken over, nothing was sent."""
    RESEND = "resend"
    """Failed on chain, and a person said to pay it with a new transaction."""
    CANCELLED = "cancelled"
    """Failed on chain, and a person said not to pay it."""

    def is_terminal(self) -> bool:
        """Nothing will change this attempt's outcome on chain any more."""
        return self in (PayoutState.CONFIRMED, PayoutState.FAILED, PayoutState.EXPIRED,
                        PayoutState.ABANDONED, PayoutState.RESEND, PayoutState.CANCELLED)

    def may_sign_next(self) -> bool:
        """A new attempt (a new signature) is allowed after this one."""
        return self in (PayoutState.EXPIRED, PayoutState.ABANDONED, PayoutState.RESEND)

    def in_flight(self) -> bool:
        """Signed and not yet judged by the chain."""
        return self in (PayoutState.SIGNED, PayoutState.SENT)


@dataclass(frozen=True)
class Attempt:
    """One attempt at a payout, as the journal holds it."""

    id: int
    identity: str
    attempt: int
    state: PayoutState
    batch_id: str
    row: int
    sender: str
    recipient: str
    token: str
    units: int
    claimed_by: str
    created_at: float
    updated_at: float
    txid: str | None = None
    expiration_ms: int | None = None
    ref_block: int | None = None
    fee_limit_sun: int | None = None
    signed_tx: dict[str, Any] | None = None
    block_number: int | None = None
    receipt: dict[str, Any] | None = None
    last_answer: str | None = None
    resolved_by: str | None = None
    note: str | None = None

    def same_payout(self, sender: str, recipient: str, token: str, units: int) -> bool:
        """Whether a row asks for what this identity was journaled with."""
        return (self.sender, self.recipient, self.token, self.units) == (
            sender, recipient, token, units)

    @property
    def signatures(self) -> int | None:
        """How many signatures its journaled transaction carries (None: none journaled):
        the chain charges the multi-sign fee on more than one."""
        if not self.signed_tx:
            return None
        return len(self.signed_tx.get("signature") or ())

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, for the CLI, logs and XCom (units stay an integer's text)."""
        return {"identity": self.identity, "attempt": self.attempt, "state": self.state.value,
                "batch_id": self.batch_id, "row": self.row, "sender": self.sender,
                "recipient": self.recipient, "token": self.token, "units": str(self.units),
                "txid": self.txid, "expiration": iso(self.expiration_ms / 1000)
                if self.expiration_ms else None, "fee_limit_sun": self.fee_limit_sun,
                "block_number": self.block_number, "receipt": self.receipt,
                "last_answer": self.last_answer, "claimed_by": self.claimed_by,
                "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
                "resolved_by": self.resolved_by, "note": self.note}


@dataclass(frozen=True)
class Claim:
    """The next attempt at a payout a worker wants to sign: ``after`` is the newest it saw."""

    identity: str
    after: Attempt | None
    batch_id: str
    row: int
    sender: str
    recipient: str
    token: str
    units: int


@dataclass(frozen=True)
class Signed:
    """What a worker signed for a claimed attempt, to journal before broadcasting."""

    attempt: Attempt
    txid: str
    expiration_ms: int
    ref_block: int
    fee_limit_sun: int
    signed_tx: dict[str, Any]
