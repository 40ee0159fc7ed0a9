"""The networks a ``tron_node`` connection can mean, and what each extra may say (no node).

The figures are TRON's own (node/network.py cites them); here they are held to what TRON
publishes elsewhere: each genesis id's last 4 bytes are the network's chain id
(developers.tron.network, ``eth_chainid``: java-tron derives it from block 0).
"""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.node.network import (
    NETWORKS,
    WrongChain,
    check_genesis,
    network_of,
    same_chain,
)
from tronenergy_protocol.address import is_valid_address

MAINNET_USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
NILE_USDT = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
PRIVATE = "0000000000000000" + "ab" * 24


@pytest.mark.parametrize(("name", "chain_id"), [
    ("mainnet", 0x2B6653DC), ("nile", 0xCD8690DC), ("shasta", 0x94A9059E)])
def test_each_genesis_ends_in_the_chain_id_tron_publishes(name, chain_id):
    network = NETWORKS[name]
    assert network.genesis_block_id.startswith("0" * 16)  # block number 0
    assert int(network.genesis_block_id[-8:], 16) == chain_id
    assert is_valid_address(network.usdt_contract)
    assert network.explorer_url == {"mainnet": "https://tronscan.org"}.get(
        name, f"https://{name}.tronscan.org")


def test_no_network_means_mainnet_with_its_usdt_and_explorer():
    assert network_of({}) == network_of({"network": None}) == NETWORKS["mainnet"]
    assert network_of({"network": "Nile "}) == NETWORKS["nile"]
    assert network_of({"network": "nile"}).usdt_contract == NILE_USDT


def test_an_explicit_usdt_or_explorer_of_the_network_itself_is_taken():
    assert network_of({"network": "nile", "usdt_contract": NILE_USDT,
                       "explorer_url": "https://scan.example"}).explorer_url \
        == "https://scan.example"


@pytest.mark.parametrize(("extras", "match"), [
    ({"network": "nile", "usdt_contract": MAINNET_USDT},
     f"usdt_contract {MAINNET_USDT} is not nile's USDT \\({NILE_USDT}\\)"),
    ({"usdt_contract": NILE_USDT}, f"is not mainnet's USDT \\({MAINNET_USDT}\\)"),
    ({"network": "nile", "genesis_block_id": NETWORKS["mainnet"].genesis_block_id},
     "is not nile's"),
    ({"network": "testnet"}, "network must be one of mainnet, nile, shasta, custom"),
    ({"network": "custom", "usdt_contract": MAINNET_USDT}, "custom needs genesis_block_id"),
    ({"network": "custom", "genesis_block_id": PRIVATE}, "custom needs usdt_contract"),
    ({"network": "custom", "genesis_block_id": "00" * 32 + "00", "usdt_contract": MAINNET_USDT},
     "64 hexadecimal"),
    ({"network": "custom", "genesis_block_id": "11" * 32, "usdt_contract": MAINNET_USDT},
     "the first 16 zeros"),
])
def test_a_connection_that_names_two_chains_or_none_is_refused(extras, match):
    with pytest.raises(ValueError, match=match):
        network_of(extras)


def test_a_custom_chain_names_its_genesis_and_usdt_and_may_name_no_explorer():
    network = network_of({"network": "custom", "genesis_block_id": "0x" + PRIVATE.upper(),
                          "usdt_contract": MAINNET_USDT})
    assert (network.name, network.genesis_block_id, network.explorer_url) == (
        "custom", PRIVATE, None)


def test_a_node_on_another_chain_is_named_with_both_ids():
    nile = NETWORKS["nile"]
    assert check_genesis("node", nile, nile.genesis_block_id) == nile.genesis_block_id
    with pytest.raises(WrongChain) as wrong:
        check_genesis("tron_node_default", nile, PRIVATE)
    assert isinstance(wrong.value, NotRetryable)
    message = str(wrong.value)
    assert "'tron_node_default' says network nile" in message
    assert nile.genesis_block_id in message and PRIVATE in message
    with pytest.raises(WrongChain, match="answers no block 0"):
        check_genesis("n", nile, None)
    with pytest.raises(WrongChain, match="'a' and 'b' are on different chains"):
        same_chain(("a", nile.genesis_block_id), ("b", PRIVATE))
    same_chain(("a", PRIVATE), ("b", PRIVATE))
