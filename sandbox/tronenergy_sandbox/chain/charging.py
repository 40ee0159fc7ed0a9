"""What executing one transaction costs and does, by java-tron's rules; no database here.

Given the transaction, its owner's and recipient's state and the block's
parameters, :func:`execute` answers either a :class:`Refusal` (java-tron's code
and message: the node refuses it at broadcast, or drops it when packing) or an
:class:`Outcome` (the receipt and what moves). The rules, from java-tron:

- bandwidth (``BandwidthProcessor.consume``): the transaction's bytes plus 64
  come from staked bandwidth if it covers them, else from the free bandwidth,
  else ``transaction_fee`` per byte is burned; a TRX transfer that creates its
  recipient (``contractCreateNewAccount``) goes to ``consumeForCreateNewAccount``
  instead: staked bandwidth (``consumeBandwidthForCreateNewAccount``, the bytes times
  ``create_new_account_bandwidth_rate``, 1 on mainnet) or else ``create_account_fee``
  burned (``consumeFeeForCreateNewAccount``), else ``AccountResourceInsufficientException``;
  free bandwidth never pays for an account. ``TransferActuator.execute`` then adds
  ``create_new_account_fee_in_system_contract`` to the fee when the recipient does not
  exist (``fee = fee + dynamicStore.getCreateNewAccountFeeInSystemContract()``) and takes
  ``fee + amount`` from the owner. java-tron at 1e35f79a165424bbae319799d9aca92948b8f5c2:
  ``chainbase/.../db/BandwidthProcessor.java``, ``actuator/.../actuator/TransferActuator.java``;
- the multi-sign fee (``Manager.consumeMultiSignFee``, right after the bandwidth and
  before the contract runs): a transaction with more than one signature pays
  ``multi_sign_fee`` from the balance left, shown only in the receipt's ``fee``; a
  balance short of it is refused as the bandwidth is (``AccountResourceInsufficientException``,
  ``Account resource insufficient error.`` at broadcast). java-tron at commit
  1e35f79a165424bbae319799d9aca92948b8f5c2: ``framework/.../db/Manager.java``
  (``processTransaction``, ``consumeMultiSignFee``), ``chainbase/.../capsule/utils/
  TransactionUtil.java`` (``buildTransactionInfoInstance``: ``fee`` adds ``multiSignFee``);
- energy (``VMActuator.getAccountEnergyLimitWithFixRatio``,
  ``ReceiptCapsule.payEnergyBill``): the call may use at most
  ``min(energy left + balance / energy_fee, fee_limit / energy_fee)``; it uses
  the owner's energy first and burns ``energy_fee`` per energy for the rest. A
  call that needs more fails ``OUT_OF_ENERGY`` having used all of its limit (so
  up to ``fee_limit`` is burned); a token transfer of more than the owner holds
  fails ``REVERT`` and pays for the energy it used. The call's energy is its token's
  (USDT's or one of the sandbox's own: ``tokens``), a holder's or a new holder's;
- a permission update (``AccountPermissionUpdateActuator``): refused with the
  ``validate`` message the caller found, else ``getUpdateAccountPermissionFee`` is
  taken from the balance (``Commons.adjustBalance``: an ``insufficient balance``
  refusal when it cannot be).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tronenergy_protocol.address import decode_address
from tronenergy_sandbox.chain.codec import TRANSFER, TRIGGER, Decoded
from tronenergy_sandbox.chain.parameters import (
    FACTOR_DECIMAL,
    ChainParameters,
    TransferEnergy,
)
from tronenergy_sandbox.chain.update_contract import UPDATE

MAX_FEE_LIMIT = 15_000_000_000
"""``getMaxFeeLimit``: the highest ``fee_limit`` a call may name (15,000 TRX)."""
REVERT_BASE_ENERGY = 2_900
"""The sandbox's figure for a token ``transfer`` that reverts (the work before its balance check,
before the dynamic-energy penalty): an estimate, since the sandbox runs no bytecode."""
VALIDATE = "CONTRACT_VALIDATE_ERROR"
VALIDATE_PREFIX = "Contract validate error : "
RESULT_TRUE = f"{1:064x}"


@dataclass(frozen=True)
class AccountState:
    """An account as a transaction finds it (all figures after earlier transactions)."""

    address: str
    exists: bool
    trx_sun: int = 0
    token_units: int = 0
    """Its balance of the token the transaction calls (0 when it calls none)."""
    energy_left: int = 0
    """Energy it may use now: staked plus delegated to it, less used (never negative)."""
    net_left: int = 0
    """Staked bandwidth it may use now."""
    free_net_left: int = 0
    """Free bandwidth it may use now."""
    holds_token: bool = False
    """Whether its balance slot in the called token is written (a holder)."""


@dataclass(frozen=True)
class Refusal:
    """java-tron refuses the transaction: a ``Return`` code and its message."""

    code: str
    message: str


@dataclass(frozen=True)
class Outcome:
    """An executed transaction: its receipt and what it moves."""

    result: str | None
    """``receipt.result`` of a contract call (SUCCESS, REVERT, OUT_OF_ENERGY); None for TRX."""
    res_message: str = ""
    energy_usage: int = 0
    energy_fee: int = 0
    energy_usage_total: int = 0
    net_usage: int = 0
    """Bandwidth taken from the owner (staked or free)."""
    net_fee: int = 0
    system_fee: int = 0
    """What the contract itself charges (a new account's 1 TRX)."""
    multi_sign_fee: int = 0
    """``getMultiSignFee``, paid by a transaction with more than one signature."""
    staked_net: bool = False
    """Whether ``net_usage`` came from staked bandwidth (else from free)."""
    trx_moved: int = 0
    units_moved: int = 0
    """Token units the call moved (of the contract it calls)."""
    recipient: str | None = None
    creates_account: bool = False
    contract_result: str = ""

    @property
    def failed(self) -> bool:
        return self.result not in (None, "SUCCESS")

    @property
    def fee(self) -> int:
        """Everything burned: ``fee`` of ``gettransactioninfobyid``."""
        return self.energy_fee + self.net_fee + self.system_fee + self.multi_sign_fee

    @property
    def owner_trx_spent(self) -> int:
        return self.fee + self.trx_moved


def scaled(base: int, contract: TransferEnergy) -> int:
    """``base`` energy with the contract's dynamic-energy penalty added."""
    return base + base * contract.energy_factor // FACTOR_DECIMAL


def revert_energy(contract: TransferEnergy) -> int:
    """Energy a reverting token ``transfer`` uses."""
    return scaled(REVERT_BASE_ENERGY, contract)


def _bandwidth(tx: Decoded, owner: AccountState, params: ChainParameters,
               creates_account: bool) -> Outcome | Refusal:
    """Pay the transaction's bytes: staked, then free (not for a new account), then burn.

    A new account takes ``bytes * create_new_account_bandwidth_rate`` of staked bandwidth
    (``consumeBandwidthForCreateNewAccount``) or burns ``create_account_fee``."""
    size = tx.bandwidth()
    if creates_account:
        cost = size * params.create_new_account_bandwidth_rate
        if owner.net_left >= cost:
            return Outcome(None, net_usage=cost, staked_net=True)
        if owner.trx_sun >= params.create_account_fee:
            return Outcome(None, net_fee=params.create_account_fee)
    elif owner.net_left >= size:
        return Outcome(None, net_usage=size, staked_net=True)
    elif owner.free_net_left >= size:
        return Outcome(None, net_usage=size)
    elif owner.trx_sun >= size * params.transaction_fee:
        return Outcome(None, net_fee=size * params.transaction_fee)
    return Refusal("BANDWITH_ERROR", "Account resource insufficient error.")


def execute(tx: Decoded, owner: AccountState, recipient: AccountState | None, *,
            token: TransferEnergy | None, params: ChainParameters,
            update_refusal: str | None = None) -> Outcome | Refusal:
    """Execute ``tx`` against these states: a refusal, or the receipt and its moves.

    ``recipient`` is the TRX transfer's ``to`` or the token transfer's ``to`` (None when
    the call names none); ``token``: the energy rules of the contract a call names (None:
    no token there); ``update_refusal``: why a permission update's ``validate``
    refuses it (the caller reads the account's permissions), None when it does not.
    """
    if tx.contract_type is None:
        return Refusal(VALIDATE, VALIDATE_PREFIX + "No contract!")
    if not owner.exists:
        return Refusal(VALIDATE, f"{VALIDATE_PREFIX}account [{owner.address}] does not exist")
    creates = tx.contract_type == TRANSFER and recipient is not None and not recipient.exists
    paid = _bandwidth(tx, owner, params, creates)
    if isinstance(paid, Refusal):
        return paid
    balance = owner.trx_sun - paid.net_fee
    multi_sign = params.multi_sign_fee if len(tx.signatures) > 1 else 0
    if balance < multi_sign:
        return Refusal("BANDWITH_ERROR", "Account resource insufficient error.")
    balance -= multi_sign
    if tx.contract_type == TRANSFER:
        done = _transfer_trx(tx, owner, recipient, balance, paid, params)
    elif tx.contract_type == UPDATE:
        done = _update_permissions(owner, balance, paid, params, update_refusal)
    else:
        assert tx.contract_type == TRIGGER
        done = _call_token(tx, owner, recipient, balance, paid, params, token)
    return done if isinstance(done, Refusal) else replace(done, multi_sign_fee=multi_sign)


def _transfer_trx(tx: Decoded, owner: AccountState, recipient: AccountState | None,
                  balance: int, paid: Outcome, params: ChainParameters) -> Outcome | Refusal:
    """``TransferActuator``: validate, then move TRX (creating the recipient if new)."""
    assert recipient is not None
    if recipient.address == owner.address:
        return Refusal(VALIDATE, VALIDATE_PREFIX + "Cannot transfer TRX to yourself.")
    if tx.amount <= 0:
        return Refusal(VALIDATE, VALIDATE_PREFIX + "Amount must be greater than 0.")
    fee = 0 if recipient.exists else params.create_new_account_fee_in_system_contract
    if balance < tx.amount + fee:
        return Refusal(VALIDATE, VALIDATE_PREFIX
                       + "Validate TransferContract error, balance is not sufficient.")
    return Outcome(None, net_usage=paid.net_usage, net_fee=paid.net_fee,
                   staked_net=paid.staked_net, system_fee=fee, trx_moved=tx.amount,
                   recipient=recipient.address, creates_account=not recipient.exists)


def _update_permissions(owner: AccountState, balance: int, paid: Outcome,
                        params: ChainParameters, refusal: str | None) -> Outcome | Refusal:
    """``AccountPermissionUpdateActuator``: ``validate``, then the fee from the balance
    (``execute``'s ``BalanceInsufficientException``, a ``ContractExeException`` at broadcast;
    the message ``Commons.adjustBalance``'s, the account in hex)."""
    if refusal is not None:
        return Refusal(VALIDATE, VALIDATE_PREFIX + refusal)
    fee = params.update_account_permission_fee
    if balance < fee:
        return Refusal("CONTRACT_EXE_ERROR", "Contract execute error : "
                       f"{decode_address(owner.address).hex()} insufficient balance, "
                       f"balance: {balance}, amount: {fee}")
    return Outcome(None, net_usage=paid.net_usage, net_fee=paid.net_fee,
                   staked_net=paid.staked_net, system_fee=fee)


def _call_token(tx: Decoded, owner: AccountState, recipient: AccountState | None,
                balance: int, paid: Outcome, params: ChainParameters,
                contract: TransferEnergy | None) -> Outcome | Refusal:
    """``VMActuator`` for a token: validate, size the energy limit, run ``transfer``, charge."""
    if contract is None:
        return Refusal(VALIDATE, VALIDATE_PREFIX + "No contract or not a smart contract")
    if not 0 <= tx.fee_limit <= MAX_FEE_LIMIT:
        return Refusal(VALIDATE, f"{VALIDATE_PREFIX}feeLimit must be >= 0 and <= {MAX_FEE_LIMIT}")
    price = params.energy_fee
    limit = min(owner.energy_left + max(balance - tx.call_value, 0) // price,
                tx.fee_limit // price)
    call = tx.transfer_call()
    if call is None or tx.call_value or recipient is None or owner.token_units < call[1]:
        result, needed, moved = "REVERT", revert_energy(contract), 0
    else:
        result, needed, moved = "SUCCESS", contract.transfer_energy(not recipient.holds_token), \
            call[1]
    message = "REVERT opcode executed" if result == "REVERT" else ""
    if needed > limit:
        result, needed, moved = "OUT_OF_ENERGY", limit, 0
        message = (f"Not enough energy for 'SSTORE' operation executing: "
                   f"curInvokeEnergyLimit[{limit}], usedEnergy[{limit}]")
    from_account = min(owner.energy_left, needed)
    return Outcome(result, res_message=message, energy_usage=from_account,
                   energy_fee=(needed - from_account) * price, energy_usage_total=needed,
                   net_usage=paid.net_usage, net_fee=paid.net_fee, staked_net=paid.staked_net,
                   units_moved=moved, recipient=None if recipient is None else recipient.address,
                   contract_result=RESULT_TRUE if result == "SUCCESS" else "")
