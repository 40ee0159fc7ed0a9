"""The payout operator's machinery settings, one frozen object with documented defaults.

A DAG author decides the money and the confirmation in ``TronPayoutOperator``'s own
parameters; how a pass paces itself, how long it waits and how far it trusts a node's
clock are deployment tuning, grouped here so that the signature stays small. The
defaults are the safe ones (docs/decisions.md, "Payout defaults").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any, Final

from airflow_provider_tronenergy.payout.lease import DEFAULT_LEASE_S, DEFAULT_WAIT_S, check_settings
from airflow_provider_tronenergy.payout.preflight import ReadRecipients, read_recipients_setting
from airflow_provider_tronenergy.payout.send import MAX_EXPIRATION_S
from airflow_provider_tronenergy.payout.trust import MAX_TOLERANCE_S
from airflow_provider_tronenergy.templated import as_decimal, as_int, is_unset

MAX_WAIT_S: Final = 7 * 24 * 3600
"""The longest wait for receipts or for a person's answer one task try accepts."""


@dataclass(frozen=True)
class PayoutTuning:
    """How ``TronPayoutOperator`` paces, waits and trusts; every field has a safe default.

    :param fee_limit_margin: added to the estimate's cost (``0.2``: 20 %), under
        the operator's ``max_fee_limit_trx``.
    :param read_recipients: ask the node about each recipient counted as a holder:
        ``auto`` (only when sweeps since preparation could make the batch cost more than
        the sender may spend), ``always`` or ``never``.
    :param confirm_timeout_seconds: how long a task try waits for the receipts (600).
    :param expiration_seconds: how long a signed transaction may enter a block (300).
    :param wallet_lease_seconds: the sender's lease while a task reads its funds and signs
        (60; renewed every third of it, a killed worker's lapses after it).
    :param wallet_wait_seconds: how long to wait for another task holding the sender's
        lease before failing the try retryably, nothing signed (300).
    :param clock_tolerance_seconds: how far the node's block times may run ahead of the
        worker's clock (60); a node ahead by more is not believed.
    :param poll_interval_seconds: the pause between the watch's steps (3).
    :param max_requests_per_poll: node requests one watch step may make (50).
    :param ask_timeout_seconds: with ``on_ambiguous="ask"``, how long to wait for the
        answer; ``None`` (default): no limit.
    """

    fee_limit_margin: Decimal = Decimal("0.2")
    read_recipients: ReadRecipients = "auto"
    confirm_timeout_seconds: int = 600
    expiration_seconds: int = 300
    wallet_lease_seconds: int = DEFAULT_LEASE_S
    wallet_wait_seconds: int = DEFAULT_WAIT_S
    clock_tolerance_seconds: int = 60
    poll_interval_seconds: Decimal = Decimal(3)
    max_requests_per_poll: int = 50
    ask_timeout_seconds: int | None = None

    def __post_init__(self) -> None:
        """Every field read strictly (a rendered template's text too): a bad one is a
        ``ValueError`` naming it, before anything is signed."""
        def set_(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        set_("fee_limit_margin", as_decimal(self.fee_limit_margin, "fee_limit_margin"))
        set_("read_recipients", read_recipients_setting(self.read_recipients))
        for name in ("confirm_timeout_seconds", "expiration_seconds", "wallet_lease_seconds",
                     "wallet_wait_seconds", "clock_tolerance_seconds", "max_requests_per_poll"):
            set_(name, as_int(getattr(self, name), name))
        set_("poll_interval_seconds",
             as_decimal(self.poll_interval_seconds, "poll_interval_seconds"))
        ask = self.ask_timeout_seconds
        set_("ask_timeout_seconds",
             None if is_unset(ask) else as_int(ask, "ask_timeout_seconds"))
        check_settings(self.wallet_lease_seconds, self.wallet_wait_seconds)
        if not 10 <= self.expiration_seconds <= MAX_EXPIRATION_S:
            raise ValueError(f"expiration_seconds must be 10 to {MAX_EXPIRATION_S}")
        if not 0 <= self.clock_tolerance_seconds <= MAX_TOLERANCE_S:
            raise ValueError(f"clock_tolerance_seconds must be 0 to {MAX_TOLERANCE_S:g}")
        if not 1 <= self.confirm_timeout_seconds <= MAX_WAIT_S:
            raise ValueError(f"confirm_timeout_seconds must be 1 to {MAX_WAIT_S}")
        if not 0 < self.poll_interval_seconds <= 600:
            raise ValueError("poll_interval_seconds must be above 0 and at most 600")
        if not 1 <= self.max_requests_per_poll <= 10_000:
            raise ValueError("max_requests_per_poll must be 1 to 10000")
        if self.ask_timeout_seconds is not None and not 1 <= self.ask_timeout_seconds <= MAX_WAIT_S:
            raise ValueError(f"ask_timeout_seconds must be 1 to {MAX_WAIT_S}, or None")

    @classmethod
    def of(cls, value: PayoutTuning | Mapping[str, Any] | None) -> PayoutTuning:
        """The tuning as given: itself, the defaults (``None``), or a mapping of its fields
        (a DAG may template the values: they are rendered, then read strictly here)."""
        if value is None:
            return cls()
        if isinstance(value, PayoutTuning):
            return value
        if not isinstance(value, Mapping):
            raise ValueError(f"tuning must be a PayoutTuning or a mapping of its fields, "
                             f"got {type(value).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(str(k) for k in value if k not in known)
        if unknown:
            raise ValueError(f"tuning: unknown setting(s) {', '.join(unknown)}; the settings "
                             f"are {', '.join(sorted(known))}")
        return cls(**{str(k): v for k, v in value.items()})
