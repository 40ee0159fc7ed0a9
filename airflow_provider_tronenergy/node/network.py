"""Which TRON chain a ``tron_node`` connection means, and the check that its node is on it.

A node's chain is told by its block 0: ``/wallet/getblockbynum {"num": 0}`` answers the
genesis block, whose ``blockID`` no other chain has. A connection says which chain it means
(extra ``network``: ``mainnet``, the default, ``nile``, ``shasta``, or ``custom`` with its
``genesis_block_id``), and :meth:`~..hooks.tron_node.TronNodeHook.check_chain` compares that
with what the node answers, before anything is bought, signed, sent or credited.

Each figure below is taken from TRON's own sources:

- genesis block ids: TIP-474 (tronprotocol/tips, ``tip-474.md``, status Final), which lists
  the ``chainid`` opcode's former value, the genesis block id, of ``mainnet``, ``nile`` and
  ``shasta``; their last 4 bytes are the chain ids developers.tron.network publishes
  (``/reference/eth_chainid``: ``0x2b6653dc``, ``0xcd8690dc``, ``0x94a9059e``), which java-tron
  derives from block 0 (``TronJsonRpcImpl.ethChainId``);
- USDT contracts: tronprotocol/wallet-cli, ``NetType.java`` (``MAIN``, ``NILE``, ``SHASTA``
  each with its USDT address), the Nile one also in TRON's wallet-cli documentation
  (tronprotocol.github.io/documentation-en, ``wallet-cli/java/commands/usdt``);
- explorers: developers.tron.network ``/docs/networks`` (TronScan for each network).

docs/decisions.md ("One chain per connection, checked") cites the same.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from airflow_provider_tronenergy.errors import NotRetryable
from tronenergy_protocol.address import is_valid_address

__all__ = ["CUSTOM", "DEFAULT_NETWORK", "NETWORKS", "Network", "WrongChain", "check_genesis",
           "genesis_id", "network_of", "same_chain"]

DEFAULT_NETWORK: Final = "mainnet"
"""What a connection without a ``network`` extra means."""
CUSTOM: Final = "custom"
"""A chain of its own (a private java-tron, the sandbox): its genesis and USDT named."""
GENESIS_ID: Final = re.compile(r"0{16}[0-9a-f]{48}")
"""A block 0 id: 8 bytes of the number 0, then 24 bytes of the block's hash (lower hex)."""


@dataclass(frozen=True)
class Network:
    """One chain: its name, its block 0 id, its USDT contract and its block explorer's root.

    ``explorer_url`` is None for a custom chain that names none (its links are then left
    out, rather than pointing at another chain's explorer).
    """

    name: str
    genesis_block_id: str
    usdt_contract: str
    explorer_url: str | None


NETWORKS: Final[Mapping[str, Network]] = MappingProxyType({
    "mainnet": Network(
        "mainnet", "00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc",
        "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "https://tronscan.org"),
    "nile": Network(
        "nile", "0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc",
        "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf", "https://nile.tronscan.org"),
    "shasta": Network(
        "shasta", "0000000000000000de1aa88295e1fcf982742f773e0419c5a9c134c994a9059e",
        "TG3XXyExBkPp9nzdajDZsozEu4BkaSJozs", "https://shasta.tronscan.org"),
})
"""The public networks TRON runs; sources in this module's docstring."""


class WrongChain(NotRetryable, RuntimeError):
    """A node is not on the chain its connection says (its block 0 is another chain's), or
    two nodes a task reads are on different chains: nothing is bought, signed, sent or
    credited; a person fixes the connection."""


def genesis_id(value: object, what: str = "genesis_block_id") -> str:
    """A block 0 id, lower hex; else ``ValueError`` naming ``what``."""
    text = value.strip().lower().removeprefix("0x") if isinstance(value, str) else ""
    if not GENESIS_ID.fullmatch(text):
        raise ValueError(f"{what} must be block 0's blockID: 64 hexadecimal characters, the "
                         "first 16 zeros (the answer of /wallet/getblockbynum {\"num\": 0})")
    return text


def network_of(extras: Mapping[str, Any]) -> Network:
    """The chain a connection's extras mean, with its USDT contract and explorer.

    ``network`` absent or empty: mainnet. A public network's ``usdt_contract`` and
    ``explorer_url`` default to its own; a ``usdt_contract`` other than the network's USDT is
    refused (``ValueError`` naming both), as is a ``genesis_block_id`` other than its own. A
    ``custom`` chain names its ``genesis_block_id`` and its ``usdt_contract``; its
    ``explorer_url`` is optional. ``explorer_url`` is returned as given (the hook checks it).
    """
    name = extras.get("network")
    name = DEFAULT_NETWORK if name in (None, "") else name
    if not isinstance(name, str) or name.strip().lower() not in (*NETWORKS, CUSTOM):
        raise ValueError(f"network must be one of {', '.join((*NETWORKS, CUSTOM))}, "
                         f"got {str(name)[:40]!r}")
    name = name.strip().lower()
    usdt = extras.get("usdt_contract") or None
    if usdt is not None and (not isinstance(usdt, str) or not is_valid_address(usdt)):
        raise ValueError(f"usdt_contract must be a contract's base58 address (T...), "
                         f"got {str(usdt)[:40]!r}")
    explorer = extras.get("explorer_url") or None
    given = extras.get("genesis_block_id") or None
    if name == CUSTOM:
        if given is None:
            raise ValueError("network custom needs genesis_block_id: block 0's blockID of the "
                             "chain (/wallet/getblockbynum {\"num\": 0})")
        if usdt is None:
            raise ValueError("network custom needs usdt_contract: a custom chain has no USDT "
                             "the provider knows")
        return Network(CUSTOM, genesis_id(given), usdt, explorer)
    known = NETWORKS[name]
    if given is not None and genesis_id(given) != known.genesis_block_id:
        raise ValueError(f"genesis_block_id {genesis_id(given)} is not {name}'s "
                         f"({known.genesis_block_id}); for another chain say network custom")
    if usdt is not None and usdt != known.usdt_contract:
        raise ValueError(f"usdt_contract {usdt} is not {name}'s USDT ({known.usdt_contract}); "
                         f"a {name} connection pays and reads {name}'s USDT only")
    return Network(name, known.genesis_block_id, known.usdt_contract,
                   explorer or known.explorer_url)


def check_genesis(conn_id: str, network: Network, answered: str | None) -> str:
    """``answered`` (the node's block 0 id, None when it has none) if it is ``network``'s;
    else :class:`WrongChain` naming the connection, the chain it claims and the answer."""
    if answered == network.genesis_block_id:
        return answered
    said = "no block 0" if answered is None else f"block 0 {answered}"
    raise WrongChain(f"connection {conn_id!r} says network {network.name} (block 0 "
                     f"{network.genesis_block_id}) but its node answers {said}: nothing was "
                     f"bought, signed, sent or credited; point the connection at a "
                     f"{network.name} node or set its network extra to the node's chain")


def same_chain(first: tuple[str, str], second: tuple[str, str]) -> None:
    """Two ``(conn_id, genesis id)`` pairs a task reads together must be one chain; else
    :class:`WrongChain` naming both."""
    if first[1] != second[1]:
        raise WrongChain(f"connections {first[0]!r} and {second[0]!r} are on different "
                         f"chains (block 0 {first[1]} and {second[1]}): a payout is confirmed "
                         "on the chain it was sent to; nothing was signed or sent")
