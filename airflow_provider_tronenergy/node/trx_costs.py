"""What one TRX transfer costs its sender, by java-tron's rules, from the chain's figures.

A ``TransferContract`` uses no energy. It pays, in this order (java-tron at commit
370a86b44163d2541287d94c7c8be0d5f700ab07,
``chainbase/src/main/java/org/tron/core/db/BandwidthProcessor.java``, ``consume``; the same
rules at 127d28218c799ae24024ddaeee8b9a728f3da434):

- **a recipient that exists**: its bytes (the signed transaction plus 64 for its result,
  :meth:`~.transactions.UnsignedTransfer.bandwidth`) whole from the sender's staked
  bandwidth if it covers them (``useAccountNet``), else whole from its free daily
  bandwidth (``useFreeNet``), else ``getTransactionFee`` sun per byte burned
  (``useTransactionFee``); the pools are never added up.
- **a recipient that does not exist** (``contractCreateNewAccount``: the account store has
  no ``to_address``): ``consumeForCreateNewAccount`` instead: ``bytes *
  getCreateNewAccountBandwidthRate`` from the staked bandwidth if it covers them
  (``consumeBandwidthForCreateNewAccount``), else ``getCreateAccountFee`` burned
  (``consumeFeeForCreateNewAccount``). The free bandwidth never pays for it. On top, the
  transfer itself pays ``getCreateNewAccountFeeInSystemContract``
  (``actuator/src/main/java/org/tron/core/actuator/TransferActuator.java`` at commit
  0623a96f030cc665b6526ec3b7179969e6cee07c, ``execute``:
  ``fee = TRANSFER_FEE (0) + getCreateNewAccountFeeInSystemContract()``, burned and shown
  as the transaction's ``ret.fee``).
- more than one signature: ``getMultiSignFee`` (``Manager.consumeMultiSignFee``, as
  ``payout.trust.figures_problem`` cites it). No memo fee: ``Manager.consumeMemoFee``
  charges ``getMemoFee`` only for a ``raw_data.data``, which these transfers never carry.

The receipt (``gettransactioninfobyid``) shows ``net_usage`` (bytes from stake or the free
allowance), ``net_fee`` (the burn: bytes or the account-creation fee;
``TransactionTrace.setNetBill`` / ``setNetBillForCreateNewAccount``) and ``fee``: ``ret.fee``
plus ``net_fee`` plus the multi-sign fee (``TransactionUtil.buildTransactionInfoInstance``).
:class:`TrxTransferCost` predicts each of them.

Not read: the chain-wide pool the free bandwidth also draws on (``getPublicNetLimit``, 14.4
billion bytes a day on mainnet; no API answers its use). Were it spent, a transfer the
free bandwidth would cover burns its bytes instead, and its receipt says so.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final

from airflow_provider_tronenergy.node.chain_parameters import ChainParameters
from airflow_provider_tronenergy.node.models import Resources, bounded

MAX_BANDWIDTH_RATE: Final = 100_000_000_000_000_000
"""java-tron's range for ``CREATE_NEW_ACCOUNT_BANDWIDTH_RATE`` (``ProposalUtil``: 0 to
``LONG_VALUE``); mainnet's is 1."""


@dataclass(frozen=True)
class TrxFees:
    """The chain's figures a TRX transfer pays by, as ``wallet/getchainparameters`` says."""

    transaction_fee: int
    """Sun burned per bandwidth byte (``getTransactionFee``)."""
    create_account_fee: int
    """Sun burned for an account's creation without staked bandwidth (``getCreateAccountFee``)."""
    create_new_account_fee_in_system_contract: int
    """Sun a transfer creating its recipient pays (``getCreateNewAccountFeeInSystemContract``)."""
    create_new_account_bandwidth_rate: int
    """Staked bandwidth per byte an account's creation takes
    (``getCreateNewAccountBandwidthRate``)."""
    multi_sign_fee: int
    """Sun a transaction with more than one signature pays (``getMultiSignFee``)."""

    @classmethod
    def from_node(cls, payload: dict[str, Any]) -> TrxFees:
        """Read ``wallet/getchainparameters``' answer: the prices as
        :meth:`ChainParameters.from_node` checks them, and the creation's bandwidth rate,
        which java-tron always lists (``Wallet.getChainParameters``): a list without it is
        not the chain's, and is refused."""
        return cls.of(ChainParameters.from_node(payload), _rate(payload))

    @classmethod
    def of(cls, prices: ChainParameters, create_new_account_bandwidth_rate: int) -> TrxFees:
        """From prices already read and the creation's bandwidth rate."""
        return cls(transaction_fee=prices.transaction_fee,
                   create_account_fee=prices.create_account_fee,
                   create_new_account_fee_in_system_contract=(
                       prices.create_new_account_fee_in_system_contract),
                   create_new_account_bandwidth_rate=create_new_account_bandwidth_rate,
                   multi_sign_fee=prices.multi_sign_fee)


def _rate(payload: dict[str, Any]) -> int:
    rows = payload.get("chainParameter")
    key = "getCreateNewAccountBandwidthRate"
    found = [row for row in rows if isinstance(row, dict) and row.get("key") == key] \
        if isinstance(rows, list) else []
    if len(found) != 1:
        raise ValueError(f"node answer names chain parameter {key!r} "
                         f"{'twice' if found else 'not at all'}")
    return bounded({key: found[0].get("value", 0)}, key, 0, MAX_BANDWIDTH_RATE,
                   "staked bandwidth per byte to create an account")


@dataclass(frozen=True)
class Bandwidth:
    """A sender's bandwidth as a transfer finds it: staked left (negative when its use is
    above its limit, as after an unstake) and free left."""

    staked_left: int
    free_left: int

    @classmethod
    def of(cls, resources: Resources) -> Bandwidth:
        """From ``wallet/getaccountresource`` (java-tron's ``Wallet.getAccountResource``
        decays the use to the head block first, ``updateUsage``)."""
        return cls(staked_left=resources.staked_bandwidth_available,
                   free_left=resources.free_bandwidth_available)


@dataclass(frozen=True)
class TrxTransferCost:
    """What one TRX transfer takes from its sender beyond its amount, and where from."""

    creates_account: bool
    staked_bandwidth: int = 0
    """Bytes taken from staked bandwidth (``bytes * rate`` for an account's creation)."""
    free_bandwidth: int = 0
    """Bytes taken from the free daily bandwidth."""
    bandwidth_fee_sun: int = 0
    """The receipt's ``net_fee``: bytes burned, or ``getCreateAccountFee``."""
    account_fee_sun: int = 0
    """The transaction's ``ret.fee``: ``getCreateNewAccountFeeInSystemContract`` or 0."""
    multi_sign_fee_sun: int = 0

    @property
    def net_usage(self) -> int:
        """The receipt's ``net_usage``."""
        return self.staked_bandwidth + self.free_bandwidth

    @property
    def fee_sun(self) -> int:
        """Sun burned: the receipt's ``fee``."""
        return self.bandwidth_fee_sun + self.account_fee_sun + self.multi_sign_fee_sun

    def spent_sun(self, amount_sun: int) -> int:
        """What leaves the sender's balance: the amount and the fee."""
        return amount_sun + self.fee_sun


def trx_transfer_cost(size: int, *, recipient_exists: bool, bandwidth: Bandwidth,
                      fees: TrxFees, signatures: int = 1) -> tuple[TrxTransferCost, Bandwidth]:
    """One transfer of ``size`` bandwidth bytes (:meth:`UnsignedTransfer.bandwidth`) by the
    rules of this module's docstring, and the sender's bandwidth after it."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError("a transaction has at least one byte")
    if isinstance(signatures, bool) or not isinstance(signatures, int) or signatures < 1:
        raise ValueError("a transaction carries at least one signature")
    multi = fees.multi_sign_fee if signatures > 1 else 0
    staked, free = bandwidth.staked_left, bandwidth.free_left
    if not recipient_exists:
        account = fees.create_new_account_fee_in_system_contract
        cost = size * fees.create_new_account_bandwidth_rate
        if cost <= staked:
            return (TrxTransferCost(True, staked_bandwidth=cost, account_fee_sun=account,
                                    multi_sign_fee_sun=multi),
                    Bandwidth(staked - cost, free))
        return (TrxTransferCost(True, bandwidth_fee_sun=fees.create_account_fee,
                                account_fee_sun=account, multi_sign_fee_sun=multi), bandwidth)
    if size <= staked:
        return (TrxTransferCost(False, staked_bandwidth=size, multi_sign_fee_sun=multi),
                Bandwidth(staked - size, free))
    if size <= free:
        return (TrxTransferCost(False, free_bandwidth=size, multi_sign_fee_sun=multi),
                Bandwidth(staked, free - size))
    return (TrxTransferCost(False, bandwidth_fee_sun=size * fees.transaction_fee,
                            multi_sign_fee_sun=multi), bandwidth)


@dataclass(frozen=True)
class TrxPlan:
    """Several TRX transfers from one sender, in sending order, each costed after the ones
    before it took their bandwidth: what a pre-flight needs in TRX."""

    costs: tuple[TrxTransferCost, ...]
    amount_sun: int
    left: Bandwidth

    @property
    def fee_sun(self) -> int:
        """Sun burned by all of them (bandwidth, accounts created, multi-sign fees)."""
        return sum(c.fee_sun for c in self.costs)

    @property
    def trx_needed_sun(self) -> int:
        """What the sender's balance must hold: the amounts and every fee."""
        return self.amount_sun + self.fee_sun

    @property
    def accounts_created(self) -> int:
        return sum(1 for c in self.costs if c.creates_account)

    def figures(self) -> dict[str, int]:
        """The plan's sums, for a pre-flight's message and event: TRX in sun, bandwidth in
        bytes."""
        return {"transfers": len(self.costs), "amount_sun": self.amount_sun,
                "accounts_created": self.accounts_created,
                "account_fee_sun": sum(c.account_fee_sun for c in self.costs),
                "bandwidth_fee_sun": sum(c.bandwidth_fee_sun for c in self.costs),
                "multi_sign_fee_sun": sum(c.multi_sign_fee_sun for c in self.costs),
                "staked_bandwidth": sum(c.staked_bandwidth for c in self.costs),
                "free_bandwidth": sum(c.free_bandwidth for c in self.costs),
                "fee_sun": self.fee_sun, "trx_needed_sun": self.trx_needed_sun}


def plan_trx_transfers(transfers: Sequence[tuple[str, int, int]], *, existing: Collection[str],
                       bandwidth: Bandwidth, fees: TrxFees, signatures: int = 1) -> TrxPlan:
    """``transfers`` as ``(recipient, amount_sun, size)`` in sending order; ``existing``: the
    recipients whose account exists (``wallet/getaccount`` answered one). The first transfer
    to a new recipient creates its account; a later one finds it."""
    created: set[str] = set()
    costs: list[TrxTransferCost] = []
    amount = 0
    for recipient, amount_sun, size in transfers:
        exists = recipient in existing or recipient in created
        cost, bandwidth = trx_transfer_cost(size, recipient_exists=exists, bandwidth=bandwidth,
                                            fees=fees, signatures=signatures)
        created.add(recipient)
        costs.append(cost)
        amount += amount_sun
    return TrxPlan(tuple(costs), amount, bandwidth)
