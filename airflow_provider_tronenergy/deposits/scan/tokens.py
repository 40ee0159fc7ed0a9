"""Which token a deposit scan credits: TRX, the network's USDT, or a TRC-20 named by contract.

A scan names its token as ``TRX``, ``USDT`` (the node connection's network's USDT contract,
``node.network``) or a contract's base58 address (``T...``). A contract is the token's
identity: its decimals and symbol are read from the contract itself (``decimals()`` and
``symbol()``, constant calls) once per scan, before any block is read, and checked:

- ``decimals()`` must answer 0 to 36 (a contract that answers no ``decimals()`` is no token
  a ledger can credit exact amounts of: refused, :class:`TokenRefused`);
- ``symbol()`` is the label a credit carries (the ledger's ``token``); a contract that
  answers none is refused too, as is a label of more than 20 characters or with spaces;
- a contract other than the network's USDT that calls itself ``USDT`` or ``TRX`` is a
  look-alike: refused, so a ledger row labelled ``USDT`` is always the network's USDT.

Refusals are :class:`~airflow_provider_tronenergy.errors.NotRetryable` and name the contract:
nothing was read or credited; a person fixes the task's ``tokens``. A node that fails to
answer is a ``NodeError`` (retried): it says nothing about the contract.

The network's USDT keeps the label ``USDT`` and its checkpoint scope ``USDT:<contract>``; any
other contract's scope is ``TRC20:<contract>``, by contract alone, so a checkpoint never moves
to another token's when a contract's symbol reads otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.node.transfers import TRX
from airflow_provider_tronenergy.protocol.address import is_valid_address

if TYPE_CHECKING:
    from airflow_provider_tronenergy.node.deposit_reads import TransferReads

USDT: Final = "USDT"
MAX_DECIMALS: Final = 36
"""The most decimals a credited token may have (issue 47: 0 to 36)."""
MAX_SYMBOL: Final = 20
"""The ledger's ``token`` column holds 20 characters."""
TRX_DECIMALS: Final = 6
"""A TRX is 1,000,000 sun (java-tron's ``Parameter.ChainConstant.TRX_PRECISION``)."""


def amount_text(units: int, decimals: int = TRX_DECIMALS) -> str:
    """Integer units as exact decimal text in ``decimals`` (``1500000`` -> ``"1.5"`` at 6),
    by integer arithmetic: ``Decimal`` arithmetic rounds to its context's 28 digits, and a
    uint256 has 78."""
    whole, fraction = divmod(units, 10**decimals)
    digits = str(fraction).zfill(decimals).rstrip("0") if fraction else ""
    return f"{whole}.{digits}" if digits else str(whole)


class TokenRefused(NotRetryable, ValueError):
    """A token a scan cannot credit (no decimals, a look-alike's label): nothing was read or
    credited."""


@dataclass(frozen=True)
class ScanToken:
    """The token one scan credits: its label, its contract (None: TRX), its decimals."""

    symbol: str
    contract: str | None
    decimals: int

    @property
    def scope(self) -> str:
        """The checkpoint's key: ``TRX``, ``USDT:<contract>``, else ``TRC20:<contract>``."""
        if self.contract is None:
            return TRX
        return f"{USDT if self.symbol == USDT else 'TRC20'}:{self.contract}"


def named(token: object) -> str:
    """``TRX``, ``USDT`` or a contract address, as given (upper-cased names); else refused."""
    text = str(token).strip()
    if text.upper() in (USDT, TRX):
        return text.upper()
    if is_valid_address(text):
        return text
    raise TokenRefused(f"token must be TRX, USDT or a TRC-20 contract's address (T...), got "
                       f"{text[:40]!r}; nothing was read or credited")


def resolve(node: TransferReads, token: str) -> ScanToken:
    """The token ``token`` names, its figures read from its contract (module docstring)."""
    name = named(token)
    if name == TRX:
        return ScanToken(TRX, None, TRX_DECIMALS)
    usdt = node.usdt_contract
    contract = usdt if name == USDT else name
    decimals = _decimals(node, contract)
    if contract == usdt:
        return ScanToken(USDT, usdt, decimals)
    symbol = _symbol(node, contract)
    if symbol.upper() in (USDT, TRX):
        raise TokenRefused(f"contract {contract} calls itself {symbol} but is not the "
                           f"network's {USDT} ({usdt}): a look-alike, not credited; nothing "
                           "was read or credited")
    return ScanToken(symbol, contract, decimals)


def _decimals(node: TransferReads, contract: str) -> int:
    word = node.get_token_constant(contract, "decimals()")
    if word is None or len(word) != 32:
        raise TokenRefused(f"contract {contract} answers no decimals(): not a TRC-20 token "
                           "whose amounts can be credited exactly; nothing was read or "
                           "credited (name a token contract in tokens)")
    decimals = int.from_bytes(word, "big")
    if decimals > MAX_DECIMALS:
        raise TokenRefused(f"contract {contract} answers decimals() {decimals}, outside 0 to "
                           f"{MAX_DECIMALS}; nothing was read or credited")
    return decimals


def _symbol(node: TransferReads, contract: str) -> str:
    data = node.get_token_constant(contract, "symbol()")
    symbol = None if data is None else _text(data)
    if not symbol or len(symbol) > MAX_SYMBOL or not symbol.isprintable() \
            or any(c.isspace() for c in symbol):
        said = "no symbol()" if data is None else "a symbol() that is no label"
        raise TokenRefused(f"contract {contract} answers {said} (1 to {MAX_SYMBOL} printable "
                           "characters, no spaces): not credited; nothing was read or credited")
    return symbol


def _text(data: bytes) -> str | None:
    """An ABI ``string`` (offset, length, bytes), or a ``bytes32`` as some early tokens
    return (zero-padded); None when it reads as neither."""
    if len(data) >= 64 and int.from_bytes(data[:32], "big") == 32:
        size = int.from_bytes(data[32:64], "big")
        if size <= len(data) - 64:
            try:
                return data[64:64 + size].decode("utf-8")
            except UnicodeDecodeError:
                return None
    if len(data) == 32:
        try:
            return data.rstrip(b"\0").decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None
