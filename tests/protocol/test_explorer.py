"""The explorer root an ``explorer_url`` extra names, and the two pages built under it."""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.errors import ProtocolError
from tronenergy_protocol.address import random_address
from tronenergy_protocol.explorer import (
    EXPLORERS,
    MAINNET_EXPLORER,
    ExplorerError,
    explorer_of,
)

TXID = "ab" * 32


@pytest.mark.parametrize("empty", [None, ""])
def test_no_value_is_mainnet_tronscan(empty):
    explorer = explorer_of(empty)
    assert explorer.root == MAINNET_EXPLORER == "https://tronscan.org"
    assert explorer.transaction(TXID) == f"https://tronscan.org/#/transaction/{TXID}"


@pytest.mark.parametrize(("given", "root"), [
    ("https://nile.tronscan.org", "https://nile.tronscan.org"),
    ("https://shasta.tronscan.org/", "https://shasta.tronscan.org"),
    ("https://nile.tronscan.org/#/", "https://nile.tronscan.org"),  # as the address bar shows it
    ("  HTTPS://tronscan.org#  ", "https://tronscan.org"),
    ("http://10.0.0.5:3000/tronscan/", "http://10.0.0.5:3000/tronscan"),  # a private one
])
def test_a_root_is_kept_without_its_trailing_slash(given, root):
    assert explorer_of(given).root == root


def test_the_public_roots_are_what_their_pages_live_under():
    address = random_address()
    for network, root in EXPLORERS.items():
        explorer = explorer_of(root)
        assert explorer.root == root, network
        assert explorer.transaction(TXID) == f"{root}/#/transaction/{TXID}"
        assert explorer.address(address) == f"{root}/#/address/{address}"


@pytest.mark.parametrize(("given", "why"), [
    ("nile.tronscan.org", "https:// or http://"),
    ("javascript:alert(document.cookie)", "https:// or http://"),
    ("ftp://tronscan.org", "https:// or http://"),
    ("https://", "no host"),
    ("https://:443", "no host"),
    ("https://tronscan.org:port", "invalid port"),
    ("https://tronscan.org/?network=nile", "query"),
    ("https://tronscan.org/#/transaction/", "after '#'"),
    ("https://tronscan.org/<script>", "characters a URL cannot"),
    ("https://tron scan.org", "characters a URL cannot"),
    (42, "must be text"),
    (["https://tronscan.org"], "must be text"),
])
def test_what_is_no_explorer_root_is_refused_saying_why(given, why):
    with pytest.raises(ExplorerError, match=why) as refused:
        explorer_of(given)
    assert isinstance(refused.value, ProtocolError) and isinstance(refused.value, ValueError)
    assert "e.g. https://nile.tronscan.org" in str(refused.value) or "password" in str(
        refused.value)


@pytest.mark.parametrize("given", ["https://alice:s3cr3t-pw@explorer.example",
                                   "https://token-9f8e7d@explorer.example/"])
def test_credentials_in_the_url_are_refused_and_never_repeated(given):
    with pytest.raises(ExplorerError, match="user name or password") as refused:
        explorer_of(given)
    assert "s3cr3t" not in str(refused.value) and "token-9f8e7d" not in str(refused.value)


@pytest.mark.parametrize("bad", ["", "ab" * 31, "zz" * 32, "ab" * 32 + "/../x", None])
def test_a_page_is_built_only_for_a_txid_or_an_address(bad):
    explorer = explorer_of(None)
    assert explorer.transaction(bad) == ""
    assert explorer.address(bad) == ""
    assert explorer.address("T" + "1" * 33) == ""  # bad checksum


def test_a_token_page_per_network_for_a_contract_and_none_for_trx():
    contract = random_address()
    for network, root in EXPLORERS.items():
        assert explorer_of(root).token(contract) == f"{root}/#/token20/{contract}", network
    explorer = explorer_of(None)
    assert explorer.token(None) == ""  # TRX: the chain's own coin, no contract
    for bad in ("", "TRX", "T" + "1" * 33, contract + "/../x", "<script>"):
        assert explorer.token(bad) == ""
