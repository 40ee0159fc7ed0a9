"""What a payout task was given, checked once per task entry, before anything is signed.

:func:`check_given` reads the send operator's values as its templates rendered them (the
batch, the sender, ``on_ambiguous``, the fee and burn caps, the permission, the tuning,
``confirm_solidified``) into one :class:`Given`; any problem is a
:class:`~.rows.PayoutInputError` (never retried). The connections stay the operator's: it
hands their parts over as callables, called in the check's order, so a missing node
connection is found where it always was (after the plain values before it) and a value
error of a connection is an input error too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from airflow_provider_tronenergy.client.validation import address
from airflow_provider_tronenergy.payout.batch import TRX, PayoutBatch, run_batch_id
from airflow_provider_tronenergy.payout.funds import FeeLimitPolicy
from airflow_provider_tronenergy.payout.receipts import solidified_flag
from airflow_provider_tronenergy.payout.rows import DEFAULT_TOKEN, PayoutInputError, Tokens
from airflow_provider_tronenergy.payout.send import SendSettings
from airflow_provider_tronenergy.payout.tuning import PayoutTuning
from airflow_provider_tronenergy.templated import as_decimal, as_int, optional_text


@dataclass(frozen=True)
class Given:
    """What a task was given, checked once per entry (:func:`check_given`)."""

    batch: PayoutBatch
    sender: str
    settings: SendSettings
    max_burn: Decimal
    tuning: PayoutTuning


def tuned(value: Any) -> PayoutTuning:
    """``tuning``, read strictly: a bad setting is a :class:`~.rows.PayoutInputError`
    (never retried)."""
    try:
        return PayoutTuning.of(value)
    except ValueError as exc:
        raise PayoutInputError(f"tuning: {exc}") from None


def check_given(
    *, payouts: Any, sender_address: Any, batch_id: Any, context: Mapping[str, Any],
    on_ambiguous: Any, max_fee_limit_trx: Any, max_burn_trx: Any, permission_id: Any,
    confirm_solidified: Any, tuning: Any, tokens: Callable[[], Tokens],
    contract: Callable[[], str], connections: Callable[[], object],
) -> Given:
    """The batch, sender, settings and burn cap, checked once; any problem is a
    :class:`~.rows.PayoutInputError` (never retried).

    ``tokens`` gives the task try's token lookup (a :class:`~..node.tokens.TokenBook`'s
    ``token``), ``contract`` the node's USDT contract, ``connections`` checks the
    connections named beside the node's (last, before anything is signed)."""
    try:
        if on_ambiguous not in ("fail", "ask"):
            raise ValueError("on_ambiguous must be 'fail' or 'ask'")
        sender = address(sender_address, "sender_address")
        tuning_ = tuned(tuning)
        batch = PayoutBatch.of(payouts, token=DEFAULT_TOKEN, tokens=tokens(),
                               batch_id=optional_text(batch_id) or run_batch_id(context))
        policy = FeeLimitPolicy(margin=tuning_.fee_limit_margin,
                                max_trx=as_decimal(max_fee_limit_trx, "max_fee_limit_trx"))
        settings = SendSettings(contract=contract(), fee_policy=policy,
                                expiration_s=tuning_.expiration_seconds,
                                clock_tolerance_s=tuning_.clock_tolerance_seconds,
                                permission_id=as_int(permission_id, "permission_id"))
        max_burn = as_decimal(max_burn_trx, "max_burn_trx")
        trx = [p.row for p in batch.rows if p.token == TRX]
        if trx and settings.permission_id:
            raise PayoutInputError(
                f"rows {', '.join(map(str, trx[:20]))}: token TRX under permission_id "
                f"{settings.permission_id}: its check covers contract calls only; pay TRX "
                "under the owner permission (nothing was signed)")
        to_self = [p.row for p in batch.rows if p.token == TRX and p.recipient == sender]
        if to_self:
            raise PayoutInputError(
                f"row{'s' if len(to_self) > 1 else ''} "
                f"{', '.join(map(str, to_self[:20]))}: token TRX to the sender itself: "
                "the chain refuses a TRX transfer to its own sender (java-tron "
                "TransferActuator); remove the row (nothing was signed)")
        solidified_flag(confirm_solidified)
        connections()  # names a connection, on the first node's chain: before signing
    except PayoutInputError:
        raise
    except ValueError as exc:
        raise PayoutInputError(str(exc)) from None
    return Given(batch, sender, settings, max_burn, tuning_)
