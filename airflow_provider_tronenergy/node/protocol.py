"""The one description of a TRON node client the rooms above read through.

``TronNodeClient`` (:mod:`.client`) has every method; the payout room (pre-flight,
sender, watch) and the keeper type their node as :class:`Node`, so a test's stand-in
or another client is checked against one list, not four.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from airflow_provider_tronenergy.node.chain_parameters import ChainParameters
from airflow_provider_tronenergy.node.models import (
    Block,
    BlockBody,
    BroadcastAnswer,
    ChainAccount,
    Resources,
    TransactionInfo,
)
from airflow_provider_tronenergy.node.permissions import AccountPermissions
from airflow_provider_tronenergy.node.trx_costs import TrxFees
from airflow_provider_tronenergy.node.trx_receipts import BlockTrx


class Estimates(Protocol):
    """The one read the energy estimates need (:mod:`.estimates`)."""

    def estimate_transfer_energy(self, owner: str, to: str, units: int) -> int | None:
        """Energy one USDT transfer needs now, or None."""


class Node(Estimates, Protocol):
    """The reads and the broadcast a payout or a keeper makes of a TRON node."""

    def get_account(self, address: str) -> ChainAccount:
        """Activation and TRX."""

    def get_resources(self, address: str) -> Resources:
        """Energy and bandwidth."""

    def get_usdt_balance(self, address: str) -> int:
        """USDT units."""

    def get_usdt_balances(self, owner: str, addresses: Sequence[str]) -> dict[str, int] | None:
        """USDT units per address, or None when the node has no batched read."""

    def get_trx_balances(self, owner: str, addresses: Sequence[str]) -> dict[str, int] | None:
        """TRX in sun per address (0 without an account), or None: no batched read."""

    def get_permissions(self, address: str) -> AccountPermissions:
        """The account's permissions (payouts signed under one: ``permission_id``)."""

    def get_chain_parameters(self) -> ChainParameters:
        """The chain's prices."""

    def get_now_block(self) -> Block:
        """The head block."""

    def get_solid_block(self) -> Block:
        """The newest solidified block."""

    def get_block(self, number: int, *, solidified: bool = False) -> BlockBody | None:
        """One block read by number: its header and txIDs."""

    def get_block_trx(self, number: int, *, solidified: bool = False) -> BlockTrx | None:
        """One block read by number with each transaction's contract, result and TRX
        transfer (a TRX payout's proof, ``node.trx_receipts``)."""

    def get_trx_fees(self) -> TrxFees:
        """The chain's figures a TRX transfer pays by."""

    def get_block_receipts(self, number: int, *,
                           solidified: bool = False) -> list[TransactionInfo]:
        """Every receipt of one block."""

    def get_transaction_info(self, tx_hash: str, *,
                             solidified: bool = False) -> TransactionInfo | None:
        """One receipt, or None."""

    def broadcast(self, signed: dict[str, Any]) -> BroadcastAnswer:
        """Offer a signed transaction."""
