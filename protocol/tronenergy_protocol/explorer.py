"""A block explorer's pages for a transaction and an address, on TronScan's routes.

The explorer's root comes from a connection extra (``explorer_url``); every
TronScan deployment (mainnet, Nile, Shasta, a private one) answers the same
routes beneath it: ``<root>/#/transaction/<txid>``, ``<root>/#/address/<address>`` and,
for a TRC-20 token, ``<root>/#/token20/<contract>``.
The root is checked here once, for every reader (the hooks, the operators' links):
an http(s) URL with a host, no credentials, no query; a link built from it can
only lead to that host.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit, urlunsplit

from tronenergy_protocol.address import is_valid_address
from tronenergy_protocol.errors import ProtocolError

__all__ = ["EXPLORERS", "MAINNET_EXPLORER", "Explorer", "ExplorerError", "explorer_of"]

MAINNET_EXPLORER: Final = "https://tronscan.org"
EXPLORERS: Final = {
    "mainnet": MAINNET_EXPLORER,
    "nile": "https://nile.tronscan.org",
    "shasta": "https://shasta.tronscan.org",
}
"""The public TronScan roots, for the docs and the form's description."""
TXID: Final = re.compile(r"[0-9a-fA-F]{64}")
_URL_TEXT: Final = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")
"""Printable ASCII a URL may hold (RFC 3986), without spaces, quotes or angle brackets."""
_RULE: Final = ("give the explorer's root, e.g. https://nile.tronscan.org; the provider adds "
                "/#/transaction/<txid> and /#/address/<address>")


class ExplorerError(ProtocolError):
    """An ``explorer_url`` that cannot be an explorer's root; the message says why (never
    the value itself, which may hold credentials)."""


@dataclass(frozen=True)
class Explorer:
    """An explorer's root (checked by :func:`explorer_of`) and its pages."""

    root: str

    def transaction(self, txid: str) -> str:
        """The page of one transaction; ``""`` for text that is no txid."""
        return f"{self.root}/#/transaction/{txid}" if TXID.fullmatch(txid or "") else ""

    def address(self, address: str) -> str:
        """The page of one account (its transfers and resources); ``""`` for no address."""
        return f"{self.root}/#/address/{address}" if is_valid_address(address) else ""

    def token(self, contract: str | None) -> str:
        """The page of one TRC-20 token (its holders, transfers, decimals); ``""`` for TRX
        (``None``: no contract) or text that is no address."""
        return (f"{self.root}/#/token20/{contract}"
                if contract and is_valid_address(contract) else "")


def explorer_of(raw: object) -> Explorer:
    """The explorer an ``explorer_url`` extra names; empty (``None``, ``""``): mainnet's TronScan.

    A trailing ``/`` or ``/#/`` (as a browser's address bar shows the root) is dropped;
    anything else after ``#`` is refused rather than guessed at.
    """
    if raw is None or raw == "":
        return Explorer(MAINNET_EXPLORER)
    if not isinstance(raw, str):
        raise ExplorerError(f"explorer_url must be text, not {type(raw).__name__}; {_RULE}")
    text = raw.strip()
    if not _URL_TEXT.fullmatch(text):
        raise ExplorerError(f"explorer_url holds characters a URL cannot; {_RULE}")
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https"):
        raise ExplorerError(f"explorer_url must start with https:// or http://; {_RULE}")
    if "@" in parts.netloc:
        raise ExplorerError("explorer_url must not hold a user name or password: links are "
                            "shown to every user who can see the task")
    try:
        parts.port  # noqa: B018 - read only to check it
    except ValueError:
        raise ExplorerError(f"explorer_url has an invalid port; {_RULE}") from None
    if not parts.hostname:
        raise ExplorerError(f"explorer_url has no host; {_RULE}")
    if "?" in text:
        raise ExplorerError(f"explorer_url must not hold a query; {_RULE}")
    if parts.fragment not in ("", "/"):
        raise ExplorerError(f"explorer_url must not name a page after '#'; {_RULE}")
    root = urlunsplit((parts.scheme.lower(), parts.netloc, parts.path.rstrip("/"), "", ""))
    return Explorer(root)
