"""Many token balances in one constant call: a Multicall contract's ``aggregate``.

The shape is MakerDAO's Multicall (``aggregate((address,bytes)[])`` -> ``(uint256
blockNumber, bytes[] returnData)``, selector ``0x252dba42``; every call must succeed or
the whole call reverts), as its TRON port has it (bolpol/tron-multicall,
``contracts/tron-multicall.sol``: the same function with ``staticcall``, ``view``). That
port is deployed on mainnet at :data:`MAINNET_MULTICALL` (its README; DefiLlama's TRON
helper and others call it there through ``wallet/triggerconstantcontract``). Addresses
inside the ABI are 20 bytes: the TRON address without its ``0x41`` prefix.

The same port has ``getEthBalance(address)`` (``addr.balance``: the TVM's ``BALANCE``, an
account's TRX in sun, 0 for an address without an account, java-tron's
``RepositoryImpl.getBalance``: ``accountCapsule == null ? 0L : ...``), so an ``aggregate`` of
calls to the Multicall itself reads many TRX balances at once (MakerDAO's own use of it).

Only the encoding and the strict reading of the answer live here, without a network;
:meth:`~.client.TronNodeClient.get_usdt_balances` and ``get_trx_balances`` send the calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from tronenergy_protocol.address import decode_address

AGGREGATE: Final = "aggregate((address,bytes)[])"
"""The function ``triggerconstantcontract`` is asked for (selector ``0x252dba42``)."""
BALANCE_OF: Final = bytes.fromhex("70a08231")
"""``balanceOf(address)``."""
GET_ETH_BALANCE: Final = bytes.fromhex("4d2301cc")
"""The Multicall's ``getEthBalance(address)``: an address's TRX in sun."""
MAINNET_MULTICALL: Final = "TGXuuKAb4bnrn137u39EKbYzKNXvdCes98"
"""A Multicall deployed on mainnet by a third party (see the module): named in the docs and
the sandbox, never a default (a contract's answers are trusted like the node's)."""
MULTICALL_CHUNK: Final = 100
"""Balances read per constant call: about 5,000 energy each on mainnet, far inside a
constant call's energy and time limits, and a ~13 KB request."""
MAX_MULTICALL_CHUNK: Final = 500
MULTICALL_CONCURRENCY: Final = 4
"""Chunks read side by side."""
WORD: Final = 32


def evm_address(address: str) -> bytes:
    """The 20 bytes the EVM sees for a base58 TRON address."""
    return decode_address(address)[1:]


def encode_balances(token: str, holders: Sequence[str]) -> str:
    """``aggregate``'s parameter (hex, no selector): ``token.balanceOf(holder)`` per holder."""
    return _encode(token, BALANCE_OF, holders)


def encode_trx_balances(multicall: str, holders: Sequence[str]) -> str:
    """``aggregate``'s parameter: ``multicall.getEthBalance(holder)`` (TRX in sun) per holder."""
    return _encode(multicall, GET_ETH_BALANCE, holders)


def _encode(target: str, selector: bytes, holders: Sequence[str]) -> str:
    from eth_abi.abi import encode

    to = evm_address(target)
    calls = [(to, selector + evm_address(h).rjust(WORD, b"\0")) for h in holders]
    return bytes(encode(["(address,bytes)[]"], [calls])).hex()


def decode_balances(answer: Mapping[str, Any], count: int) -> list[int]:
    """The ``count`` balances an ``aggregate`` answer holds, in order; ValueError (this
    module's own text) for any answer the contract could not have given."""
    from eth_abi.abi import decode, encode
    from eth_abi.exceptions import DecodingError

    result = answer.get("result")
    if not isinstance(result, Mapping) or result.get("result") is not True \
            or "message" in result:
        raise ValueError("the constant call did not run to its end")
    ret = (answer.get("transaction") or {}).get("ret") if isinstance(
        answer.get("transaction"), Mapping) else None
    if isinstance(ret, list) and any(isinstance(r, Mapping) and r.get("ret") == "FAILED"
                                     for r in ret):
        raise ValueError("the constant call failed")
    constant = answer.get("constant_result")
    if not isinstance(constant, list) or len(constant) != 1 or not isinstance(constant[0], str):
        raise ValueError("aggregate answered no single result")
    try:
        raw = bytes.fromhex(constant[0])
        block, data = decode(["uint256", "bytes[]"], raw)
    except (ValueError, DecodingError):
        raise ValueError("aggregate's result is not (uint256, bytes[])") from None
    if bytes(encode(["uint256", "bytes[]"], [block, list(data)])) != raw:
        raise ValueError("aggregate's result is not encoded as the contract encodes it")
    if block < 1:
        raise ValueError(f"aggregate names block {block}")
    if len(data) != count:
        raise ValueError(f"aggregate answered {len(data)} results for {count} calls")
    if any(len(item) != WORD for item in data):
        raise ValueError("a balance read is not one 32-byte word")
    return [int.from_bytes(item, "big") for item in data]
