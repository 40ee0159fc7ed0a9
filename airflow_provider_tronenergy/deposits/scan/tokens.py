"""Which token a deposit scan credits: TRX, the network's USDT, or a TRC-20 by its contract.

A scan names its token as ``TRX``, ``USDT`` (the node connection's network's USDT contract,
``node.network``), a short name of the connection's ``tokens`` extra, or a contract's base58
address (``T...``): :class:`~airflow_provider_tronenergy.node.tokens.TokenBook` resolves it and
reads the contract's ``decimals()`` (0 to 36, else refused) and ``symbol()`` from the chain,
once per scan, before any block is read. A contract is the token's identity; on top of the
book's checks, what a credit is labelled with is checked here:

- ``symbol()`` is the label a credit carries (the ledger's ``token``): a contract that answers
  none, or a label of more than 20 characters (the ledger's column) or with spaces, is refused;
- a contract other than the network's USDT that calls itself ``USDT`` or ``TRX`` is a
  look-alike: refused, so a ledger row labelled ``USDT`` is always the network's USDT.

Refusals are :class:`~airflow_provider_tronenergy.node.tokens.TokenRefused` (``NotRetryable``)
naming the contract: nothing was read or credited; a person fixes the task's ``tokens``. A node
that fails to answer is a ``NodeError`` (retried): it says nothing about the contract.

The network's USDT keeps the label ``USDT`` and its checkpoint scope ``USDT:<contract>``; any
other contract's scope is ``TRC20:<contract>``, by contract alone, so a checkpoint never moves
to another token's when a contract's symbol reads otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from airflow_provider_tronenergy.node.tokens import (
    MAX_DECIMALS,
    TRX,
    TRX_DECIMALS,
    USDT,
    TokenBook,
    TokenRefused,
)

if TYPE_CHECKING:
    from airflow_provider_tronenergy.node.tokens import ConstantCalls

__all__ = ["MAX_DECIMALS", "MAX_LABEL", "USDT", "ScanToken", "TokenRefused",
           "named", "resolve", "resolve_all"]

MAX_LABEL: Final = 20
"""The ledger's ``token`` column holds 20 characters."""



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
    """A token's text as a task gives it (``TRX``, ``USDT``, a name, ``T...``), checked for
    form only (the node resolves it); else refused."""
    text = token.strip() if isinstance(token, str) else ""
    if not 1 <= len(text) <= 40:
        raise TokenRefused(f"token must be TRX, USDT, a name of the node connection's tokens "
                           f"extra or a TRC-20 contract's address (T...), got "
                           f"{str(token)[:40]!r}; nothing was read or credited")
    return text.upper() if text.upper() in (TRX, USDT) else text


def resolve_all(node: ConstantCalls, tokens: Sequence[str]) -> list[ScanToken]:
    """The tokens a task scans, through one book: each contract read once per try."""
    book = TokenBook(node)
    return [resolve(node, token, book) for token in tokens]


def resolve(node: ConstantCalls, token: str, book: TokenBook | None = None) -> ScanToken:
    """The token ``token`` names, its figures read from its contract (module docstring)."""
    read = (book or TokenBook(node)).token(named(token))
    if read.is_trx or read.contract is None:
        return ScanToken(TRX, None, TRX_DECIMALS)
    if read.contract == node.usdt_contract:
        return ScanToken(USDT, read.contract, read.decimals)
    symbol = read.symbol
    if not symbol or len(symbol) > MAX_LABEL or any(c.isspace() for c in symbol):
        said = "no symbol()" if not symbol else f"symbol() {symbol[:40]!r}"
        raise TokenRefused(f"token contract {read.contract} answers {said}: a credit is "
                           f"labelled by its symbol (1 to {MAX_LABEL} characters, no spaces); "
                           "nothing was read or credited")
    if symbol.upper() in (USDT, TRX):
        raise TokenRefused(f"token contract {read.contract} calls itself {symbol} but is not the "
                           f"network's {USDT} ({node.usdt_contract}): a look-alike, not "
                           "credited; nothing was read or credited")
    return ScanToken(symbol, read.contract, read.decimals)
