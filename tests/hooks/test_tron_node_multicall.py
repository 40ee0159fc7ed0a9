"""The ``tron_node`` connection's ``multicall`` extras: named, checked, or absent."""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.hooks.tron_node import TronNodeConnectionError, TronNodeHook
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.multicall import MAINNET_MULTICALL as MULTICALL


def test_the_connection_names_the_multicall(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_NODE_MC", '{"conn_type": "tron_node", "host": '
                       f'"http://n", "extra": {{"multicall": "{MULTICALL}", '
                       '"multicall_chunk": "150"}}')
    settings = TronNodeHook.node_settings(TronNodeHook("node_mc").get_connection("node_mc"))
    assert (settings["multicall"], settings["multicall_chunk"]) == (MULTICALL, 150)
    assert TronNodeClient(**settings).multicall == MULTICALL  # no request: the chain unchecked
    for extra, match in (('{"multicall": "0x41abc"}', "multicall must be a contract's base58"),
                         (f'{{"multicall": "{MULTICALL}", "multicall_chunk": 0}}',
                          "multicall_chunk must be 1 to 500")):
        monkeypatch.setenv("AIRFLOW_CONN_NODE_BAD", '{"conn_type": "tron_node", "host": '
                           f'"http://n", "extra": {extra}}}')
        with pytest.raises(TronNodeConnectionError, match=match):
            TronNodeHook("node_bad").get_conn()
    monkeypatch.setenv("AIRFLOW_CONN_NODE_NONE", '{"conn_type": "tron_node", "host": "http://n"}')
    hook = TronNodeHook("node_none")
    assert TronNodeClient(**hook.node_settings(hook.get_connection("node_none"))).multicall \
        is None
