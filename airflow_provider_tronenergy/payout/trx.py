"""What a round's TRX payouts take from the sender, read from the chain before signing.

A TRX payout is a ``TransferContract``: no energy, so nothing is estimated or bought for it
and its ``fee_limit`` is 0. It takes its amount, its bandwidth (its exact bytes,
``node.transactions.trx_transfer_bandwidth``, whole from the staked bandwidth, else the free,
else burned) and, for a recipient whose account does not exist yet (``wallet/getaccount``
answers ``{}``), the account's creation: ``getCreateNewAccountFeeInSystemContract``, and its
bytes times ``getCreateNewAccountBandwidthRate`` from the staked bandwidth or else
``getCreateAccountFee`` burned (java-tron's rules, cited in ``node/trx_costs.py``; the figures
read with ``getchainparameters``, never assumed).

In a round that also signs TRC-20 transfers the TRX payouts are counted as if those took the
bandwidth first (their bytes burned, or the creation's fee): what they may cost in whichever
order the chain takes them, so the one check of the sender's TRX covers every order.
"""

from __future__ import annotations

from collections.abc import Sequence

from airflow_provider_tronenergy.fanout import side_by_side
from airflow_provider_tronenergy.node.protocol import Node
from airflow_provider_tronenergy.node.transactions import trx_transfer_bandwidth
from airflow_provider_tronenergy.node.trx_costs import Bandwidth, TrxPlan, plan_trx_transfers
from airflow_provider_tronenergy.payout.rows import Payout

__all__ = ["plan_trx"]


def plan_trx(node: Node, sender: str, rows: Sequence[Payout], *, signatures: int,
             permission_id: int, shared: bool, concurrency: int) -> TrxPlan:
    """The TRX ``rows`` take, in row order: which recipients have an account (read as the
    module says), the chain's fees and the sender's bandwidth read once. ``shared``: TRC-20
    transfers are signed in the same round (their bandwidth counted as taken first)."""
    fees = node.get_trx_fees()
    recipients = sorted({p.recipient for p in rows})
    balances = node.get_trx_balances(sender, recipients) if recipients else None
    holding = {a for a in recipients if balances is not None and balances.get(a, 0) > 0}
    unknown = [a for a in recipients if a not in holding]
    accounts = side_by_side(node.get_account, unknown, max_concurrency=concurrency,
                            name="account")
    existing = holding | {a.address for a in accounts if a.activated}
    bandwidth = Bandwidth(0, 0) if shared else Bandwidth.of(node.get_resources(sender))
    transfers = [(p.recipient, p.units, trx_transfer_bandwidth(
        owner=sender, to=p.recipient, amount_sun=p.units, permission_id=permission_id,
        signatures=signatures)) for p in rows]
    return plan_trx_transfers(transfers, existing=existing, bandwidth=bandwidth, fees=fees,
                              signatures=signatures)
