"""The node reads a TRX payout is planned and proven by (a base of the node client).

- :meth:`TrxReads.get_trx_fees`: the chain's figures a TRX transfer pays by
  (``wallet/getchainparameters``, :class:`~.trx_costs.TrxFees`); whether a recipient exists
  is ``get_account(address).activated`` (``wallet/getaccount``: ``{}`` is no account) and the
  sender's bandwidth ``get_resources`` (``wallet/getaccountresource``), both the client's.
- :meth:`TrxReads.get_block_trx`: a block by number with each transaction as it holds it.
- :meth:`TrxReads.prove_trx_payment`: a TRX payout's receipt against its block
  (:func:`~.trx_receipts.trx_payment_problem`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from airflow_provider_tronenergy.node.deposit_reads import valid_address, valid_block_number
from airflow_provider_tronenergy.node.models import TransactionInfo
from airflow_provider_tronenergy.node.trx_costs import TrxFees
from airflow_provider_tronenergy.node.trx_receipts import BlockEntry, BlockTrx, trx_payment_problem

T = TypeVar("T")


@dataclass(frozen=True)
class TrxProof:
    """A TRX payout's receipt read against its block: ``problem`` None when it proves the
    transfer asked about (``entry`` is then that transfer as its block holds it)."""

    info: TransactionInfo
    entry: BlockEntry | None
    problem: str | None

    @property
    def proven(self) -> bool:
        return self.problem is None


class TrxReads:
    """TRX payout reads (the client's base; each one request, its answer checked)."""

    _provider: Any

    def _call(self, what: str, call: Callable[[], T]) -> T:
        raise NotImplementedError  # the client's: one request, its errors named

    @staticmethod
    def _checked(what: str, read: Callable[[], T]) -> T:
        raise NotImplementedError  # the client's: a malformed answer as a NodeError

    def get_transaction_info(self, tx_hash: str, *,
                             solidified: bool = False) -> TransactionInfo | None:
        raise NotImplementedError  # the client's

    def get_trx_fees(self) -> TrxFees:
        """What a TRX transfer pays by (``wallet/getchainparameters``), each figure checked."""
        path = "wallet/getchainparameters"
        payload = self._call(path, lambda: dict(
            self._provider.make_request(path, {"visible": True})))
        return self._checked(path, lambda: TrxFees.from_node(payload))

    def get_block_trx(self, number: int, *, solidified: bool = False) -> BlockTrx | None:
        """Block ``number`` by number (``getblockbynum``) with each transaction's contract,
        result and TRX transfer; None while the node has not produced it (with
        ``solidified=True``: not solidified). One request, whatever the block holds."""
        valid_block_number(number)
        path = ("walletsolidity" if solidified else "wallet") + "/getblockbynum"
        payload = self._call(path, lambda: dict(self._provider.make_request(
            path, {"num": number, "visible": True})))
        if not payload:
            return None
        return self._checked(path, lambda: BlockTrx.from_node(number, payload))

    def prove_trx_payment(self, txid: str, *, block_number: int, owner: str, to: str,
                          amount_sun: int, signatures: int | None = None,
                          solidified: bool = False) -> TrxProof | None:
        """Is ``txid`` a TRX transfer of ``amount_sun`` from ``owner`` to ``to`` that
        succeeded in block ``block_number``, with the chain's figures? Its receipt, that
        block by number and the chain's fees (three requests); None while the node knows
        the receipt or the block not yet (with ``solidified=True``: not solidified)."""
        valid_address(owner, "owner")
        valid_address(to, "to")
        valid_block_number(block_number)
        info = self.get_transaction_info(txid, solidified=solidified)
        if info is None:
            return None
        block = self.get_block_trx(block_number, solidified=solidified)
        if block is None:
            return None
        problem = trx_payment_problem(block, info, owner=owner, to=to, amount_sun=amount_sun,
                                      fees=self.get_trx_fees(), signatures=signatures)
        return TrxProof(info, block.entries.get(info.tx_hash), problem)
