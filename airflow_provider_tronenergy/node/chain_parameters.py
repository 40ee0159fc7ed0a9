"""What the chain charges, as ``wallet/getchainparameters`` says: each figure bounded.

The node's list of the chain's parameters, read strictly into :class:`ChainParameters`: a
key missing or named twice, or a figure beyond what the chain could hold, is refused
before any plan or saving uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from airflow_provider_tronenergy.node.models import SUN_PER_TRX, bounded

MAX_ENERGY_FEE = 10_000
"""Sun per energy: 100 today, 420 at its highest (2022); a node saying more is not believed."""
MAX_BANDWIDTH_FEE = 100_000
"""Sun per bandwidth byte: 1,000 since 2020 (10 at genesis)."""
MAX_ACCOUNT_FEE = 100 * SUN_PER_TRX
"""Sun to create an account: 1 TRX (plus 0.1 TRX without bandwidth) today."""
MAX_MULTI_SIGN_FEE = 100 * SUN_PER_TRX
"""Sun per transaction with several signatures: 1 TRX (java-tron's default, mainnet's today)."""
MAX_FREE_NET = 100_000
"""java-tron's own range for ``getFreeNetLimit`` (a proposal cannot set more)."""


@dataclass(frozen=True)
class ChainParameters:
    """What the chain charges, as ``wallet/getchainparameters`` says (sun; bytes).

    Each figure is checked against what the chain could hold before any plan or saving
    uses it (a node answering a 0 or a billion sun energy price is refused).
    """

    energy_fee: int
    """Sun burned per energy (``getEnergyFee``)."""
    transaction_fee: int
    """Sun burned per bandwidth byte (``getTransactionFee``)."""
    create_account_fee: int
    """Sun burned creating an account without bandwidth (``getCreateAccountFee``)."""
    create_new_account_fee_in_system_contract: int
    """Sun a transfer pays to create its recipient (``getCreateNewAccountFeeInSystemContract``)."""
    free_net_limit: int
    """Free bandwidth per account per day (``getFreeNetLimit``)."""
    multi_sign_fee: int
    """Sun a multi-signed transaction pays (``getMultiSignFee``; java-tron 1e35f79a)."""

    @classmethod
    def from_node(cls, payload: dict[str, Any]) -> ChainParameters:
        """Read ``{"chainParameter": [{"key": ..., "value": ...}, ...]}``.

        java-tron leaves a zero ``value`` out; a key missing altogether, or twice, means
        the answer is not the chain's list, and it is refused.
        """
        rows = payload.get("chainParameter")
        if not isinstance(rows, list):
            raise ValueError("node answer has no chainParameter list")
        values: dict[str, Any] = {}
        for row in rows:
            if isinstance(row, dict) and isinstance(row.get("key"), str):
                if row["key"] in values:
                    raise ValueError(f"node answer names chain parameter {row['key']!r} twice")
                values[row["key"]] = row.get("value", 0)
        missing = [key for key in _PARAMETER_KEYS if key not in values]
        if missing:
            raise ValueError(f"node answer lacks chain parameters {', '.join(missing)}")
        return cls(
            energy_fee=bounded(values, "getEnergyFee", 1, MAX_ENERGY_FEE, "sun per energy"),
            transaction_fee=bounded(values, "getTransactionFee", 1, MAX_BANDWIDTH_FEE,
                                    "sun per bandwidth byte"),
            create_account_fee=bounded(values, "getCreateAccountFee", 0, MAX_ACCOUNT_FEE,
                                       "sun per account created"),
            create_new_account_fee_in_system_contract=bounded(
                values, "getCreateNewAccountFeeInSystemContract", 0, MAX_ACCOUNT_FEE,
                "sun per account created by a transfer"),
            free_net_limit=bounded(values, "getFreeNetLimit", 0, MAX_FREE_NET,
                                   "free bandwidth per day"),
            multi_sign_fee=bounded(values, "getMultiSignFee", 0, MAX_MULTI_SIGN_FEE,
                                   "sun per multi-signed transaction"),
        )

    @property
    def activation_sun(self) -> int:
        """What activating an address by a TRX transfer burns: both account-creation fees."""
        return self.create_new_account_fee_in_system_contract + self.create_account_fee


_PARAMETER_KEYS = ("getEnergyFee", "getTransactionFee", "getCreateAccountFee",
                   "getCreateNewAccountFeeInSystemContract", "getFreeNetLimit", "getMultiSignFee")
