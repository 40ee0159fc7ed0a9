"""One chain per ``tron_node`` connection: the node's block 0 against the connection's network.

The sandbox is a chain of its own (its block 0 fixed, tests/support/sandbox.py names it):
as ``custom`` it passes; as mainnet (no ``network`` extra) or Nile it is refused, naming
the connection, the network it says and what the node answered. A loopback server that
answers Nile's block 0 stands in for a Nile node. Block 0 is read once per hook.
"""

from __future__ import annotations

import json

import pytest
import requests

from airflow_provider_tronenergy.hooks.tron_node import TronNodeConnectionError, TronNodeHook
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.network import NETWORKS, WrongChain
from support.hostile_server import HostileServer, answer
from support.sandbox import SANDBOX_GENESIS, node_connection_json, sandbox_fixture

sandbox = sandbox_fixture(scope="module")
MAINNET_USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
NILE = NETWORKS["nile"]


def _connect(monkeypatch, conn_id: str, host: str, **extra: object) -> TronNodeHook:
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}",
                       json.dumps({"conn_type": "tron_node", "host": host, "extra": extra}))
    return TronNodeHook(conn_id)


def test_the_sandbox_answers_its_fixed_genesis_as_block_0_and_block_1s_parent(sandbox):
    with TronNodeClient(sandbox.root_url, usdt_contract=MAINNET_USDT) as node:
        assert node.get_genesis_block_id() == SANDBOX_GENESIS
    first = requests.post(f"{sandbox.root_url}/wallet/getblockbynum", json={"num": 1},
                          timeout=10).json()
    assert first["block_header"]["raw_data"]["parentHash"] == SANDBOX_GENESIS


def test_the_sandbox_as_a_custom_chain_passes_and_block_0_is_read_once(sandbox, monkeypatch):
    reads: list[str] = []
    read = TronNodeClient.get_genesis_block_id

    def counted(client: TronNodeClient) -> str | None:
        reads.append("block 0")
        return read(client)

    monkeypatch.setattr(TronNodeClient, "get_genesis_block_id", counted)
    monkeypatch.setenv("AIRFLOW_CONN_NODE_SANDBOX", node_connection_json(sandbox))
    hook = TronNodeHook("node_sandbox")
    assert hook.get_now_block().number > hook.get_solid_block().number
    assert hook.check_chain() == SANDBOX_GENESIS and reads == ["block 0"]
    assert hook.test_connection()[0] and reads == ["block 0"]
    hook.close()
    TronNodeHook("node_sandbox").check_chain()  # another hook (task try): read again
    assert reads == ["block 0"] * 2


@pytest.mark.parametrize(("extra", "says"), [
    ({}, "mainnet"),  # no network extra: mainnet, the default
    ({"network": "nile"}, "nile"),
    ({"network": "custom", "genesis_block_id": "0" * 16 + "5a" * 24,
      "usdt_contract": MAINNET_USDT}, "custom"),
])
def test_a_connection_to_a_node_of_another_chain_is_refused_naming_both(sandbox, monkeypatch,
                                                                        extra, says):
    hook = _connect(monkeypatch, "node_elsewhere", sandbox.root_url, **extra)
    with pytest.raises(WrongChain) as wrong:
        hook.get_usdt_balance(MAINNET_USDT)
    message = str(wrong.value)
    assert f"connection 'node_elsewhere' says network {says}" in message
    assert f"its node answers block 0 {SANDBOX_GENESIS}" in message
    ok, said = hook.test_connection()
    assert not ok and said == message
    monkeypatch.setattr(TronNodeClient, "get_genesis_block_id",
                        lambda client: pytest.fail("block 0 read again"))
    with pytest.raises(WrongChain, match="'node_elsewhere' says"):  # known: not read again
        hook.check_chain()
    hook.close()


def test_a_nile_connection_with_the_mainnet_usdt_is_refused_before_any_request(monkeypatch):
    with HostileServer(answer(200, {"blockID": NILE.genesis_block_id})) as node:
        hook = _connect(monkeypatch, "node_nile", node.root, network="nile",
                        usdt_contract=MAINNET_USDT)
        with pytest.raises(TronNodeConnectionError,
                           match=f"'node_nile': usdt_contract {MAINNET_USDT} is not nile's "
                                 f"USDT \\({NILE.usdt_contract}\\)"):
            hook.get_conn()
    assert node.received == []


def test_a_nile_node_passes_as_nile_with_nile_defaults(monkeypatch):
    with HostileServer(answer(200, {"blockID": NILE.genesis_block_id})) as node:
        hook = _connect(monkeypatch, "node_nile", node.root, network="nile")
        assert hook.check_chain() == NILE.genesis_block_id
        assert hook.usdt_contract == NILE.usdt_contract
        assert hook.get_explorer().root == "https://nile.tronscan.org"
        hook.close()
    assert [seen.path for seen in node.received] == ["/wallet/getblockbynum"]


def test_two_nodes_on_their_own_chains_are_not_one_chain(sandbox, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_NODE_SANDBOX", node_connection_json(sandbox))
    with HostileServer(answer(200, {"blockID": NILE.genesis_block_id})) as nile:
        first = TronNodeHook("node_sandbox")
        second = _connect(monkeypatch, "node_nile", nile.root, network="nile")
        with pytest.raises(WrongChain, match="'node_sandbox' and 'node_nile' are on different "
                                             "chains"):
            first.check_same_chain(second)
        first.check_same_chain(TronNodeHook("node_sandbox"))
        first.close()
        second.close()


def test_a_custom_chain_without_an_explorer_shows_no_link(sandbox, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_NODE_SANDBOX", node_connection_json(sandbox))
    with pytest.raises(TronNodeConnectionError, match="names no explorer_url"):
        TronNodeHook("node_sandbox").get_explorer()
    monkeypatch.setenv("AIRFLOW_CONN_NODE_SANDBOX", node_connection_json(
        sandbox, explorer_url="https://scan.example"))
    assert TronNodeHook("node_sandbox").get_explorer().root == "https://scan.example"
