"""The records that flow through the receiver: a verified callback and a stored transfer.

Amounts stay exact end to end: the decimal text exactly as the service sent it,
plus an integer in micro-units (1e-6, i.e. sun for TRX) that the store compares
against thresholds. Nothing here is ever a float.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from airflow_provider_tronenergy.client import models as client_models

MICRO: Final = 1_000_000
"""Micro-units per whole token: TRX has 6 decimals (sun), so does TRON USDT."""

MAX_MICRO: Final = 2**63 - 1
"""Largest value a BIGINT holds; bigger amounts saturate here (see :func:`to_micro`)."""

AMOUNT_TEXT = re.compile(r"[0-9]{1,40}(?:\.[0-9]{1,40})?")
"""Plain decimal text only: no sign, exponent, spaces, NaN or Infinity."""


def to_micro(amount_text: str) -> int:
    """Floor of ``amount * 1e6`` by integer arithmetic, saturated at :data:`MAX_MICRO`.

    Flooring keeps ``amount >= threshold`` exact for any threshold with at most six
    decimals, even for an amount with more (some TRC20 tokens have 18). Saturation
    keeps absurdly large amounts storable; they compare as "very large", which is
    still right against any threshold below 9.2e12.
    """
    if not AMOUNT_TEXT.fullmatch(amount_text):
        raise ValueError(f"not plain decimal text: {amount_text!r}")
    whole, _, fraction = amount_text.partition(".")
    micro = int(whole) * MICRO + int((fraction + "000000")[:6])
    return min(micro, MAX_MICRO)


def threshold_micro(amount: Decimal | int | str) -> int:
    """A filter threshold in micro-units; it must be exact (at most six decimals)."""
    value = Decimal(amount) if not isinstance(amount, Decimal) else amount
    if not value.is_finite() or value < 0:
        raise ValueError("min_amount must be a finite, non-negative decimal")
    scaled = value * MICRO
    if scaled != scaled.to_integral_value():
        raise ValueError("min_amount must have at most 6 decimal places")
    return min(int(scaled), MAX_MICRO)


@dataclass(frozen=True)
class VerifiedTransfer:
    """A ``tron.transfer`` callback that passed signature and body validation: what the
    receiver stores.

    The same facts as the client's :class:`~airflow_provider_tronenergy.client.TransferEvent`
    (the public model of a callback, see :meth:`client_event`), kept in the form the
    store needs: the amount as the text sent plus exact micro-units, ``tx_hash``
    lower-cased, times as integers; and the audit trail (raw body, signature, which kind
    of secret matched).
    """

    tx_hash: str
    """Lower-case 64 hex characters; the deduplication key."""
    from_address: str
    to_address: str
    amount: str
    """The decimal text exactly as sent."""
    amount_micro: int
    token: str
    """Upper-cased token symbol (the raw body keeps the original)."""
    block_number: int
    block_timestamp_ms: int
    sent_at: int
    """The body's ``timestamp``: when the service sent this attempt (Unix seconds)."""
    received_at_ms: int
    raw_body: bytes
    """The body exactly as received: with ``signature`` it re-verifies for an audit."""
    signature: str
    verified_by: str
    """``key`` or ``address``: which kind of webhook secret matched (never the secret)."""

    def __repr__(self) -> str:
        return (f"VerifiedTransfer(tx_hash={self.tx_hash!r}, to={self.to_address!r}, "
                f"amount={self.amount!r}, token={self.token!r})")

    def client_event(self) -> client_models.TransferEvent:
        """This callback as the client's public model, parsed from the same verified bytes."""
        from airflow_provider_tronenergy.client.models import TransferEvent

        return TransferEvent.from_json(self.raw_body)


@dataclass(frozen=True)
class StoredTransfer:
    """One row of the append-only transfer log, as consumers (triggers, DAGs) see it."""

    id: int
    tx_hash: str
    from_address: str
    to_address: str
    amount: Decimal
    amount_text: str
    amount_micro: int
    token: str
    block_number: int
    block_timestamp_ms: int
    sent_at: int
    received_at_ms: int
    verified_by: str
    raw_body: bytes | None = None
    """Only when asked for (``include_raw=True``): polling consumers do not need it."""

    @property
    def received_at(self) -> datetime:
        return datetime.fromtimestamp(self.received_at_ms / 1000, tz=timezone.utc)

    @property
    def block_time(self) -> datetime:
        return datetime.fromtimestamp(self.block_timestamp_ms / 1000, tz=timezone.utc)

    def to_payload(self) -> dict[str, Any]:
        """The one JSON-safe shape of a stored transfer: trigger events, XCom, Asset extras.

        ``{"id", "tx_hash", "from", "to", "amount", "token", "block_number",
        "block_timestamp_ms", "received_at", "proven"}``; the amount travels as the decimal
        text as sent, never as a JSON number, and ``received_at`` as ISO 8601 (UTC).
        ``proven`` is always False: these are the callback's words, verified as the
        service's (its signature) but not checked against the chain: what consumers set
        to ``proven=False`` hand on. Left at ``proven=True`` they hand on the deposit
        ledger's credit instead (``deposits.handover.chain_payload``, the chain's figures).
        """
        return {
            "id": self.id,
            "tx_hash": self.tx_hash,
            "from": self.from_address,
            "to": self.to_address,
            "amount": self.amount_text,
            "token": self.token,
            "block_number": self.block_number,
            "block_timestamp_ms": self.block_timestamp_ms,
            "received_at": self.received_at.isoformat(),
            "proven": False,
        }


@dataclass(frozen=True)
class RecordResult:
    """What one insert did: stored now, or already there (a retried delivery).

    ``conflict`` names the facts (``from``, ``to``, ``amount``, ``token``) in
    which a duplicate contradicts the stored transfer; empty for a true retry.
    """

    tx_hash: str
    duplicate: bool
    conflict: tuple[str, ...] = ()
