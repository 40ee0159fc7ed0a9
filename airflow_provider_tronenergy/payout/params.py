"""A payout batch's settings, checked once where they enter: who pays, which batch, up to
what cost (:class:`BatchParams`), and what the chain checks need (:class:`ChainParams`).

The preparation operators (``operators/payout_prep.py``) build them from their typed,
rendered arguments; the energy plan (:mod:`.energy_plan`) and the chain checks
(:mod:`.onchain`) take them, and the approval gate names what was not bought when a
setting is bad, so they live below all of them. A bad one is a
:class:`~.rows.PayoutInputError` (the task fails without retry), naming what was not done.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from airflow_provider_tronenergy.client.validation import address as valid_address
from airflow_provider_tronenergy.node.models import SUN_PER_TRX
from airflow_provider_tronenergy.payout.receipts import solidified_flag
from airflow_provider_tronenergy.payout.rows import PayoutInputError
from airflow_provider_tronenergy.purchase_journal.identity import is_key_text
from airflow_provider_tronenergy.templated import chosen_none
from tronenergy_protocol.numbers import parse_decimal, parse_int

DEFAULT_NODE_CONN = "tron_node_default"
"""The node connection of a preparation that names none (the hook's default)."""
NOTHING_BOUGHT = "nothing was bought"
NOTHING_MOVED = "nothing was bought or activated"
MAX_BATCH_ID_LENGTH = 64
"""So that a purchase key (sender, batch, rows, order) stays within 200 characters."""


@dataclass(frozen=True)
class BatchParams:
    """The batch's run parameters, checked: who pays, for how long, up to what cost, which
    batch (``batch_id``; empty: the run's, see :func:`~.batch.run_batch_id`)."""

    sender: str
    rent_time: Decimal
    max_spend: Decimal
    """``max_spend_trx``: what the batch may spend on energy and activations in all."""
    batch_id: str = ""

    @classmethod
    def checked(cls, *, sender_address: Any, rent_time: Any, max_spend_trx: Any,
                batch_id: Any = "") -> BatchParams:
        """From an operator's rendered arguments: text or numbers, each checked."""
        try:
            batch_id = batch_id or ""
            if not isinstance(batch_id, str) or (
                    batch_id and not is_key_text(batch_id, MAX_BATCH_ID_LENGTH)):
                raise ValueError(
                    f"batch_id: must be 1 to {MAX_BATCH_ID_LENGTH} characters of A-Z a-z 0-9 "
                    f"and ._:/@+=#- (no spaces), or empty for the run's data interval; got "
                    f"{str(batch_id)[:80]!r}")
            return cls(sender=valid_address(sender_address, "sender_address"),
                       rent_time=parse_decimal(rent_time, "rent_time"),
                       max_spend=parse_decimal(max_spend_trx, "max_spend_trx"),
                       batch_id=batch_id)
        except ValueError as exc:
            raise PayoutInputError(f"bad parameter ({NOTHING_BOUGHT}): {exc}") from None


@dataclass(frozen=True)
class ChainParams:
    """The run's on-chain settings, checked. ``node_conn_id`` None: the person chose to
    prepare without a node (``tron_node_conn_id=None``, or ``"None"`` as a template renders
    it); an empty one is kept, and refused where the node is looked up."""

    node_conn_id: str | None
    energy_margin: int
    trx_reserve_sun: int
    solidified: bool
    confirm_timeout: float

    @classmethod
    def checked(cls, *, tron_node_conn_id: str | None = DEFAULT_NODE_CONN,
                reserve_trx: Any = "0", energy_margin: Any = "0",
                confirm_solidified: Any = True,
                confirm_timeout_seconds: Any = "300") -> ChainParams:
        """From an operator's rendered arguments (``tron_node_conn_id`` None, or ``"None"``
        as a template renders it: no on-chain checks; empty values: the defaults)."""
        try:
            reserve = parse_decimal(_given(reserve_trx, "0"), "reserve_trx")
            margin = parse_int(_given(energy_margin, "0"), "energy_margin")
            timeout = parse_decimal(_given(confirm_timeout_seconds, "300"),
                                    "confirm_timeout_seconds")
            solidified = solidified_flag(confirm_solidified)
        except ValueError as exc:
            raise PayoutInputError(f"bad parameter ({NOTHING_MOVED}): {exc}") from None
        if reserve < 0 or reserve != round(reserve, 6) or margin < 0 or timeout <= 0:
            raise PayoutInputError(
                f"bad parameter ({NOTHING_MOVED}): reserve_trx and energy_margin must not "
                "be negative (reserve_trx 6 decimals max), confirm_timeout_seconds must be "
                "positive")
        return cls(node_conn_id=chosen_none(tron_node_conn_id), energy_margin=margin,
                   trx_reserve_sun=int(reserve * SUN_PER_TRX), solidified=solidified,
                   confirm_timeout=float(timeout))  # seconds, not money


def checked_sender(sender_address: Any) -> str:
    """The hot wallet's address, checked (a bad one is a :class:`~.rows.PayoutInputError`)."""
    try:
        return valid_address(sender_address, "sender_address")
    except ValueError as exc:
        raise PayoutInputError(f"bad parameter ({NOTHING_BOUGHT}): {exc}") from None


def _given(value: Any, default: str) -> Any:
    """An empty or absent value (``None``, ``""``) is the setting's default."""
    return default if value is None or value == "" else value
