"""TronPayoutOperator refuses, before signing, a node (or a confirming node) on another chain.

Real Airflow (``dag.test()``), the sandbox as the service and the node. The sandbox is a
``custom`` chain (its block 0 named by tests/support/sandbox.py); a connection to it that
says mainnet (no ``network`` extra) or Nile, a confirming connection that names another
genesis, or a confirming node on Nile (a loopback server answering Nile's block 0) fails
the task without retry, nothing signed, broadcast or journaled, the reason in its log.
"""

from __future__ import annotations

import json

import pytest
from payouts import DAGS

from airflow_provider_tronenergy.node.network import NETWORKS
from operators.test_payout import journal, sent_from, wallet  # noqa: F401  # fixtures
from support.hostile_server import HostileServer, answer
from support.sandbox import SANDBOX_GENESIS, node_connection_json

pytestmark = pytest.mark.usefixtures("node_conn")
OTHER_GENESIS = "0" * 16 + "5a" * 24


def _refused(run_dag, control, sender: str, journal, batch_id: str,  # noqa: F811
             **conf: object) -> None:
    recipient = control.wallet(trx="1", usdt="1")
    out = run_dag(DAGS["te_payouts"], payouts=[{"recipient": recipient, "amount": "1"}],
                  sender=sender, batch_id=batch_id, **conf)
    assert out["send"][:2] == ("failed", 1), out  # the DAG retries once: it did not
    assert sent_from(control, sender) == [] and journal.recent() == []


@pytest.mark.parametrize(("extra", "says"), [({}, "mainnet"), ({"network": "nile"}, "nile")])
def test_a_node_connection_saying_another_network_than_its_node_signs_nothing(
        run_dag, control, wallet, journal, sandbox, monkeypatch, capfd, extra, says):  # noqa: F811
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT", json.dumps(
        {"conn_type": "tron_node", "host": sandbox.root_url, "extra": extra}))
    _refused(run_dag, control, wallet[1], journal, f"chain-{says}")
    out = capfd.readouterr().out
    assert f"'tron_node_default' says network {says}" in out
    assert f"its node answers block 0 {SANDBOX_GENESIS}" in out


def test_a_confirming_connection_naming_another_genesis_signs_nothing(
        run_dag, control, wallet, journal, sandbox, monkeypatch, capfd):  # noqa: F811
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_CONFIRM", node_connection_json(
        sandbox, genesis_block_id=OTHER_GENESIS))
    _refused(run_dag, control, wallet[1], journal, "chain-confirm-1",
             confirm_node_conn_id="tron_node_confirm")
    out = capfd.readouterr().out
    assert "'tron_node_confirm' says network custom" in out and OTHER_GENESIS in out


def test_a_confirming_node_on_another_chain_signs_nothing(
        run_dag, control, wallet, journal, monkeypatch, capfd):  # noqa: F811
    nile = NETWORKS["nile"]
    with HostileServer(answer(200, {"blockID": nile.genesis_block_id})) as node:
        monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_CONFIRM", json.dumps(
            {"conn_type": "tron_node", "host": node.root, "extra": {"network": "nile"}}))
        _refused(run_dag, control, wallet[1], journal, "chain-confirm-2",
                 confirm_node_conn_id="tron_node_confirm")
    assert {seen.path for seen in node.received} == {"/wallet/getblockbynum"}
    out = capfd.readouterr().out
    assert "'tron_node_default' and 'tron_node_confirm' are on different chains" in out
    assert f"{SANDBOX_GENESIS} and {nile.genesis_block_id}" in out
