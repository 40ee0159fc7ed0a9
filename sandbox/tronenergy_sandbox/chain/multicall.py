"""A Multicall contract on the sandbox's chain, answering constant calls as the TVM would.

Deployed at :data:`MULTICALL`, the address a third party's TRON Multicall has on
mainnet (bolpol/tron-multicall, ``contracts/tron-multicall.sol``; the sandbox's USDT
sits at mainnet's address too), so a ``tron_node`` connection to the sandbox names
it as it would on mainnet. Its function: ``aggregate((address,bytes)[])`` ->
``(uint256 blockNumber, bytes[] returnData)``, each call a ``staticcall`` that must
succeed, else the whole call reverts with ``Multicall: call failed``. The calls run
against the chain's own state: ``balanceOf(address)`` and ``decimals()`` on a token
(USDT or one of the sandbox's own, ``tokens``) read its ledger (``decimals()`` of a
token without them reverts); ``getEthBalance(address)`` on the Multicall itself answers the
address's TRX in sun as the TVM's ``BALANCE`` does (java-tron's ``RepositoryImpl.getBalance``:
0 for an address without an account, an account's balance else, 0 included); a call to an
address without code succeeds with no data (as the EVM's ``staticcall`` does); anything else
reverts. A parameter that is not the
ABI's reverts too. The energy is the sandbox's figure (it runs no bytecode):
a base, plus each call with its token's dynamic-energy penalty.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from tronenergy_protocol.address import ADDRESS_PREFIX, encode_address
from tronenergy_sandbox.chain.charging import scaled
from tronenergy_sandbox.chain.parameters import TransferEnergy

MULTICALL: Final = "TGXuuKAb4bnrn137u39EKbYzKNXvdCes98"
AGGREGATE: Final = "aggregate((address,bytes)[])"
BALANCE_OF: Final = bytes.fromhex("70a08231")
DECIMALS: Final = bytes.fromhex("313ce567")
GET_ETH_BALANCE: Final = bytes.fromhex("4d2301cc")
"""The Multicall's own ``getEthBalance(address)`` (bolpol/tron-multicall: ``addr.balance``)."""
ERROR_SELECTOR: Final = bytes.fromhex("08c379a0")
"""``Error(string)``: how a ``require`` with a message reverts."""
AGGREGATE_BASE_ENERGY: Final = 1_500
"""Decoding the calls and encoding the answer (the sandbox's figure)."""
CALL_BASE_ENERGY: Final = 1_100
"""One ``balanceOf`` through a ``staticcall`` before USDT's penalty (a ``CALL`` and an
``SLOAD`` at TRON's prices, and the copying): about 4,800 at factor 34,000."""
BALANCE_CALL_ENERGY: Final = 900
"""One ``getEthBalance`` through a ``staticcall`` to the Multicall itself (a ``CALL`` and a
``BALANCE``, no token's penalty; the sandbox's figure)."""


class Ledger(Protocol):
    """What the contract reads from the chain (the sandbox's ``World``)."""

    usdt_contract: str

    def token_energy(self, contract: str, block: int | None = None) -> TransferEnergy | None:
        """The token at ``contract``'s energy rules (None: no token there)."""

    def units_of(self, contract: str, address: str) -> int:
        """``address``'s units of the token at ``contract``."""

    def token_decimals(self, contract: str) -> int | None:
        """The token's ``decimals()`` (None: it has none)."""

    def read_block(self) -> int:
        """The block the call runs at (the head; the solidified block on ``/walletsolidity``)."""

    def is_activated(self, address: str) -> bool:
        """Whether ``address`` has an account."""

    def wallet(self, address: str) -> dict[str, Any]:
        """``address``'s balances (``trx_sun``)."""


def _call(ledger: Ledger, target: bytes, data: bytes) -> bytes | None:
    """One ``staticcall``: its return data, or None when it reverts."""
    address = encode_address(bytes([ADDRESS_PREFIX]) + target)
    if address == MULTICALL:
        if data[:4] == GET_ETH_BALANCE and len(data) >= 36:
            holder = encode_address(bytes([ADDRESS_PREFIX]) + data[16:36])
            sun = int(ledger.wallet(holder)["trx_sun"]) if ledger.is_activated(holder) else 0
            return sun.to_bytes(32, "big")
        return None  # the sandbox runs no nested aggregate
    if ledger.token_energy(address) is None:
        return b""  # no code there: the call succeeds and returns nothing
    if data[:4] == BALANCE_OF and len(data) >= 36:
        holder = encode_address(bytes([ADDRESS_PREFIX]) + data[16:36])
        return ledger.units_of(address, holder).to_bytes(32, "big")
    decimals = ledger.token_decimals(address)
    if data[:4] == DECIMALS and decimals is not None:
        return decimals.to_bytes(32, "big")
    return None


def named(value: Any) -> bool:
    """Whether a call's ``contract_address`` (base58, or hex with ``visible`` false) is it."""
    if not isinstance(value, str):
        return False
    if value == MULTICALL:
        return True
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        return False
    return len(raw) == 21 and raw[0] == ADDRESS_PREFIX and encode_address(raw) == MULTICALL


def _revert(reason: str) -> str:
    from eth_abi.abi import encode

    return (ERROR_SELECTOR + bytes(encode(["string"], [reason]))).hex() if reason else ""


def aggregate(ledger: Ledger, parameter: str) -> dict[str, Any]:
    """``triggerconstantcontract`` of ``aggregate`` with ``parameter`` (hex): java-tron's
    answer without its ``transaction`` (the route adds it)."""
    from eth_abi.abi import decode, encode
    from eth_abi.exceptions import DecodingError

    try:
        (calls,) = decode(["(address,bytes)[]"], bytes.fromhex(parameter))
    except (ValueError, DecodingError):
        return {"result": {"result": True, "message": "REVERT opcode executed"},
                "energy_used": AGGREGATE_BASE_ENERGY, "constant_result": [""]}
    energy = AGGREGATE_BASE_ENERGY
    answers = []
    usdt = ledger.token_energy(ledger.usdt_contract, ledger.read_block())
    for target, data in calls:
        called = encode_address(bytes([ADDRESS_PREFIX]) + bytes.fromhex(target[2:]))
        if called == MULTICALL:
            energy += BALANCE_CALL_ENERGY
        else:
            rules = ledger.token_energy(called, ledger.read_block()) or usdt
            assert rules is not None
            energy += scaled(CALL_BASE_ENERGY, rules)
        returned = _call(ledger, bytes.fromhex(target[2:]), bytes(data))
        if returned is None:
            return {"result": {"result": True, "message": "REVERT opcode executed"},
                    "energy_used": energy,
                    "constant_result": [_revert("Multicall: call failed")]}
        answers.append(returned)
    result = bytes(encode(["uint256", "bytes[]"], [ledger.read_block(), answers]))
    return {"result": {"result": True}, "energy_used": energy,
            "constant_result": [result.hex()]}
