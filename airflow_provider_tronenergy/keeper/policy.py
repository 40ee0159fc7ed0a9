"""What a keeper may do for a wallet: its floor, its target, its cap, its budget.

Read once, where a DAG's values enter (params, rendered templates), and checked
there: a keeper whose policy is wrong refuses before it reads the chain or buys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from airflow_provider_tronenergy.client import ValidationError, ValidationRules
from airflow_provider_tronenergy.client.validation import quoted_purchase_rent_time
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.templated import as_decimal, as_int, is_unset


class KeeperPolicyError(NotRetryable, ValueError):
    """A keeper's policy that cannot be followed: refused before anything is read or bought."""


@dataclass(frozen=True)
class KeeperPolicy:
    """One wallet's rules (energy in units, money in TRX, times in seconds of chain time).

    :param floor: below this much available energy the wallet is topped up.
    :param target: what a top-up brings it to (above the floor).
    :param max_price_per_10k_trx: the most it pays per 10,000 energy; above it, nothing is bought.
    :param max_daily_spend_trx: TRX it may spend per UTC day (of the chain's clock), all wallets of
        the keeper together.
    :param approval_above_trx: a purchase costing more waits for a person (None: never asks).
    :param renew_before_seconds: a rental of the keeper's ending within this is renewed, when the
        wallet is in use, before the energy drops.
    :param rent_time: hours each rental lasts: one the purchase endpoints accept that the
        price endpoint quotes too (the keeper reads the price first), checked against the
        connection's rules by :meth:`check_rent_time` before anything is read or bought.
    :param per_transfer: ``floor`` and ``target`` count USDT transfers to a first-time
        recipient, each at the energy the chain charges one now (the node's estimate), not
        energy: the sizes follow the chain's energy factor (see :meth:`in_energy`).
    """

    floor: int
    target: int
    max_price_per_10k_trx: Decimal
    max_daily_spend_trx: Decimal
    approval_above_trx: Decimal | None = None
    renew_before_seconds: float = 600.0
    rent_time: Decimal = Decimal("1")
    per_transfer: bool = False

    def __post_init__(self) -> None:
        problems = []
        if self.floor < 0:
            problems.append(f"floor {self.floor:,} is negative")
        if self.target <= self.floor:
            problems.append(f"target {self.target:,} must be above the floor {self.floor:,}")
        if self.max_price_per_10k_trx <= 0:
            problems.append(f"max_price_per_10k_trx {text(self.max_price_per_10k_trx)} TRX per "
                            "10,000 energy must be above 0")
        if self.max_daily_spend_trx <= 0:
            problems.append(f"max_daily_spend_trx {text(self.max_daily_spend_trx)} TRX must be "
                            "above 0")
        if self.approval_above_trx is not None and self.approval_above_trx < 0:
            problems.append(f"approval_above_trx {text(self.approval_above_trx)} TRX is negative")
        if self.renew_before_seconds < 0:
            problems.append(f"renew_before_seconds {self.renew_before_seconds:g} is negative")
        if self.rent_time <= 0:
            problems.append(f"rent_time {text(self.rent_time)} h must be above 0")
        if problems:
            raise KeeperPolicyError("keeper policy refused: " + "; ".join(problems))

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> KeeperPolicy:
        """From a DAG's params or an operator's (rendered) arguments: text or numbers."""
        try:
            approval = values.get("approval_above_trx")
            (floor, floor_counts), (target, target_counts) = (
                _size(values["floor"], "floor"), _size(values["target"], "target"))
            if floor_counts != target_counts:
                raise KeeperPolicyError("keeper policy refused: floor and target must both "
                                        "be energy, or both transfers")
            return cls(
                floor=floor,
                target=target,
                per_transfer=floor_counts,
                max_price_per_10k_trx=_trx(values, "max_price_per_10k_trx"),
                max_daily_spend_trx=_trx(values, "max_daily_spend_trx"),
                approval_above_trx=(None if is_unset(approval)
                                    else as_decimal(approval, "approval_above_trx")),
                renew_before_seconds=float(as_int(values.get("renew_before_seconds", 600),
                                                  "renew_before_seconds")),
                rent_time=as_decimal(values.get("rent_time", "1"), "rent_time"),
            )
        except KeyError as missing:
            raise KeeperPolicyError(f"keeper policy refused: {missing.args[0]} is required"
                                    ) from None
        except ValueError as exc:
            if isinstance(exc, KeeperPolicyError):
                raise
            raise KeeperPolicyError(f"keeper policy refused: {exc}") from None

    def check_rent_time(self, rules: ValidationRules) -> None:
        """Refuse a ``rent_time`` the service would not take (``rules``: the connection's),
        by the purchase endpoints' rule (``client.validation``), before any wallet buys."""
        try:
            quoted_purchase_rent_time(self.rent_time, rules)
        except ValidationError as exc:
            raise KeeperPolicyError(f"keeper policy refused: {exc}; nothing was bought"
                                    ) from None

    def in_energy(self, transfer_energy: int) -> KeeperPolicy:
        """The policy in energy, a transfer counted at ``transfer_energy`` (the chain's
        figure for one to a first-time recipient, now); a policy in energy as it is."""
        if not self.per_transfer:
            return self
        return replace(self, floor=self.floor * transfer_energy,
                       target=self.target * transfer_energy, per_transfer=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, exact: for XCom and the task log."""
        return {"floor": self.floor, "target": self.target, "per_transfer": self.per_transfer,
                "max_price_per_10k_trx": text(self.max_price_per_10k_trx),
                "max_daily_spend_trx": text(self.max_daily_spend_trx),
                "approval_above_trx": (None if self.approval_above_trx is None
                                       else text(self.approval_above_trx)),
                "renew_before_seconds": self.renew_before_seconds,
                "rent_time": text(self.rent_time)}


def _trx(values: Mapping[str, Any], field: str) -> Decimal:
    return as_decimal(values[field], field)


def _size(value: Any, field: str) -> tuple[int, bool]:
    """``400000`` (energy) or ``3 transfers``: the number, and whether it counts transfers."""
    text = str(value).strip() if isinstance(value, str) else value
    if isinstance(text, str):
        number, _, unit = text.partition(" ")
        if unit.strip() in ("transfer", "transfers"):
            return as_int(number, field), True
    return as_int(text, field), False
