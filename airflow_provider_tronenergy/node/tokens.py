"""A token a payout sends: TRX, or a TRC-20 contract whose decimals the chain says.

A payout row names its token as ``TRX``, a contract's base58 address (``T...``) or a short
name: ``USDT`` (the node connection's network's USDT, :mod:`.network`) or a name of the
connection's ``tokens`` extra (``{"NAME": "T..."}``). A contract's ``decimals()`` and
``symbol()`` are read from the chain (:class:`TokenBook`, once per book: one book per task
try) through ``wallet/triggerconstantcontract`` and checked: a contract that answers no
``decimals()``, or one outside 0 to 36, is refused (:class:`TokenRefused`, naming it) before
anything is signed. ``symbol()`` is optional in TRC-20 (TIP-20, like EIP-20, lists
``name``, ``symbol`` and ``decimals`` as optional), so a contract without one is shown by its
address; its answer is an ABI ``string`` or, in older tokens, a ``bytes32``.

A token's :attr:`Token.name` is what the payout journal records: ``TRX``, ``USDT`` for the
network's USDT (however a row named it), else the contract's address; the same payout named
either way is the same payout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from airflow_provider_tronenergy.errors import NotRetryable
from tronenergy_protocol.address import is_valid_address

__all__ = ["MAX_DECIMALS", "TRX", "TRX_TOKEN", "USDT", "Token", "TokenBook", "TokenRefused",
           "token_names"]

TRX: Final = "TRX"
USDT: Final = "USDT"
TRX_DECIMALS: Final = 6
"""1 TRX is 1,000,000 sun."""
MAX_DECIMALS: Final = 36
"""The most decimals a token may have: beyond, its unit is no amount anyone pays out."""
DECIMALS: Final = "decimals()"
SYMBOL: Final = "symbol()"
MAX_SYMBOL: Final = 32


class TokenRefused(NotRetryable, ValueError):
    """A payout's token cannot be paid out: unknown, or a contract whose ``decimals()`` the
    chain does not answer within 0 to 36. Nothing was signed."""


@dataclass(frozen=True)
class Token:
    """One token: its journal name, its contract (None for TRX), decimals and symbol."""

    name: str
    contract: str | None
    """The TRC-20 contract; None for TRX, and for USDT when only its decimals are known
    (its contract is then the node connection's ``usdt_contract``)."""
    decimals: int
    symbol: str | None = field(default=None, compare=False)

    @property
    def is_trx(self) -> bool:
        """A TRX transfer (``TransferContract``), not a contract call."""
        return self.name == TRX

    @property
    def shown(self) -> str:
        """How messages name it: its symbol and contract, or TRX."""
        if self.contract is None:
            return self.name
        return f"{self.symbol or 'token'} ({self.contract})"


TRX_TOKEN: Final = Token(TRX, None, TRX_DECIMALS, TRX)


class ConstantCalls(Protocol):
    """The one read a token needs: a view call's first result, None when it reverts."""

    usdt_contract: str

    @property
    def token_contracts(self) -> Mapping[str, str]: ...  # read only: a client's dict is one

    def call_constant(self, contract: str, selector: str) -> str | None:
        """``constant_result[0]`` of ``selector`` on ``contract``; None when refused."""


def token_names(value: Any, usdt_contract: str) -> dict[str, str]:
    """The connection's ``tokens`` extra (``{"NAME": "T..."}``) checked, with ``USDT`` the
    network's own; ``ValueError`` naming the extra: a name that is not 1 to 16 letters and
    digits, a value that is not a base58 address, or one redefining ``TRX`` or ``USDT``."""
    names = {USDT: usdt_contract}
    if value in (None, "", {}):
        return names
    if not isinstance(value, Mapping):
        raise ValueError('tokens must be an object of short names to contract addresses, e.g. '
                         '{"USDC": "T..."}')
    for key, contract in value.items():
        name = key.strip().upper() if isinstance(key, str) else ""
        if not (name.isascii() and name.isalnum() and 1 <= len(name) <= 16):
            raise ValueError(f"tokens: name {str(key)[:20]!r} must be 1 to 16 letters and digits")
        if name in (TRX, USDT):
            raise ValueError(f"tokens: {name} is not configurable (TRX is the chain's own, USDT "
                             "the network's)")
        if not isinstance(contract, str) or not is_valid_address(contract):
            raise ValueError(f"tokens: {name} must be a contract's base58 address (T...), got "
                             f"{str(contract)[:40]!r}")
        names[name] = contract
    return names


def _word(answer: str | None) -> int | None:
    """A view call's first 32-byte word as an integer, None when absent or not hex."""
    if not answer or len(answer) < 64:
        return None
    try:
        return int(answer[:64], 16)
    except ValueError:
        return None


def decode_symbol(answer: str | None) -> str | None:
    """``symbol()``'s answer: an ABI ``string``, or a ``bytes32`` (older tokens); None when
    it is neither, or not printable text."""
    if not answer:
        return None
    try:
        raw = bytes.fromhex(answer)
    except ValueError:
        return None
    text: bytes | None = None
    if len(raw) == 32:
        text = raw.rstrip(b"\0")
    elif len(raw) >= 64 and int.from_bytes(raw[:32], "big") == 32:
        length = int.from_bytes(raw[32:64], "big")
        text = raw[64:64 + length] if length <= len(raw) - 64 else None
    try:
        symbol = text.decode("utf-8") if text else None
    except UnicodeDecodeError:
        return None
    if symbol is None or not symbol.isprintable() or len(symbol) > MAX_SYMBOL:
        return None
    return symbol


class TokenBook:
    """A task try's tokens: each text resolved, each contract read once, then remembered.

    ``node`` is the payout's node client (its network's USDT, its ``tokens`` extra and the
    view calls).
    """

    def __init__(self, node: ConstantCalls) -> None:
        self.node = node
        self._read: dict[str, Token | TokenRefused] = {}

    def contract_of(self, text: object) -> str | None:
        """The contract a row's token text names, None for TRX; ``TokenRefused`` for text
        that names nothing. Empty text is USDT (docs/decisions.md, "A payout row without a
        token")."""
        if text is None or text == "":
            return self.node.usdt_contract
        if not isinstance(text, str):
            raise TokenRefused(f"token must be text (TRX, USDT, a name or a T... contract), got "
                               f"{type(text).__name__}")
        stripped = text.strip()
        if stripped.upper() == TRX:
            return None
        if is_valid_address(stripped):
            return stripped
        names = self.node.token_contracts
        contract = names.get(stripped.upper())
        if contract is None:
            raise TokenRefused(f"unknown token {stripped[:40]!r}: name TRX, a contract's base58 "
                               f"address (T...) or one of {', '.join(sorted(names))} (the node "
                               "connection's network USDT and its tokens extra)")
        return contract

    def token(self, text: object) -> Token:
        """The token ``text`` names, its contract read from the chain once."""
        contract = self.contract_of(text)
        if contract is None:
            return TRX_TOKEN
        if contract not in self._read:
            try:
                self._read[contract] = self._from_chain(contract)
            except TokenRefused as exc:  # every row of that contract says so, one read
                self._read[contract] = exc
        read = self._read[contract]
        if isinstance(read, TokenRefused):
            raise TokenRefused(str(read))
        return read

    def by_name(self) -> dict[str, Token]:
        """The tokens read so far, by journal name (TRX, which needs no read, aside)."""
        return {t.name: t for t in self._read.values() if isinstance(t, Token)}

    def _from_chain(self, contract: str) -> Token:
        decimals = _word(self.node.call_constant(contract, DECIMALS))
        if decimals is None:
            raise TokenRefused(f"token contract {contract} answers no decimals() (not a TRC-20 "
                               "token, or no contract there): its amounts cannot be read, "
                               "nothing was signed")
        if not 0 <= decimals <= MAX_DECIMALS:
            raise TokenRefused(f"token contract {contract} says decimals() = {decimals}, outside "
                               f"0 to {MAX_DECIMALS}: not paid out, nothing was signed")
        symbol = decode_symbol(self.node.call_constant(contract, SYMBOL))
        name = USDT if contract == self.node.usdt_contract else contract
        return Token(name, contract, decimals, symbol)
