"""The payout trigger carries identifiers only and fires once the batch is settled."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from airflow_provider_tronenergy.triggers.payout import TronPayoutBatchTrigger
from support.airflow_compat import malformed_says
from support.sandbox import node_connection_json


def test_serialize_round_trips_identifiers_only():
    trigger = TronPayoutBatchTrigger("b1", "tron_node_default", follow=["b0"],
                                     solidified=True, poll_interval_seconds=2, end_time=1e9,
                                     max_requests_per_poll=20)
    path, kwargs = trigger.serialize()
    assert path.endswith("triggers.payout.TronPayoutBatchTrigger")
    assert kwargs == {"batch_id": "b1", "tron_node_conn_id": "tron_node_default",
                      "follow": ["b0"], "solidified": True, "poll_interval_seconds": 2.0,
                      "end_time": 1e9, "max_requests_per_poll": 20}
    assert TronPayoutBatchTrigger(**kwargs).serialize() == (path, kwargs)


def test_by_default_it_confirms_on_solidified_blocks():
    _, kwargs = TronPayoutBatchTrigger("b1", "n", end_time=1e9).serialize()
    assert kwargs["solidified"] is True


@pytest.mark.parametrize("kwargs", [{"batch_id": ""}, {"poll_interval_seconds": 0},
                                    {"end_time": float("nan")}, {"follow": "b0"},
                                    {"follow": [""]}])
def test_constructor_rejects_bad_arguments(kwargs):
    base = {"batch_id": "b", "tron_node_conn_id": "n", "end_time": 1.0}
    with pytest.raises(ValueError):
        TronPayoutBatchTrigger(**{**base, **kwargs})


def test_an_empty_batch_is_settled_at_once(sandbox, monkeypatch, tmp_path):
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", f"sqlite:///{tmp_path / 'j.db'}")
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_T", node_connection_json(sandbox))
    trigger = TronPayoutBatchTrigger("nothing", "tron_node_t", end_time=time.time() + 5)
    event = asyncio.run(trigger._wait())
    assert event["status"] == "done" and event["total"] == 0


def test_a_confirming_node_on_another_chain_ends_with_an_error_event(sandbox, monkeypatch,
                                                                    tmp_path):
    """Both nodes' block 0, once per run, before the watch reads a receipt."""
    from airflow_provider_tronenergy.node.network import NETWORKS
    from support.hostile_server import HostileServer, answer

    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", f"sqlite:///{tmp_path / 'j.db'}")
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_T", node_connection_json(sandbox))
    with HostileServer(answer(200, {"blockID": NETWORKS["nile"].genesis_block_id})) as nile:
        monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_NILE", json.dumps(
            {"conn_type": "tron_node", "host": nile.root, "extra": {"network": "nile"}}))
        event = asyncio.run(TronPayoutBatchTrigger(
            "nothing", "tron_node_t", end_time=time.time() + 5,
            confirm_node_conn_id="tron_node_nile")._wait())
    assert event["status"] == "error" and event["message"].startswith("WrongChain: ")
    assert "'tron_node_t' and 'tron_node_nile' are on different chains" in event["message"]
    assert [seen.path for seen in nile.received] == ["/wallet/getblockbynum"]


@pytest.mark.parametrize(("fields", "says"), [
    ({"host": "ftp://nowhere"}, "host must be"),
    ({"host": "http://127.0.0.1:9", "extra": '{"network": "nile"'},
     malformed_says("not valid JSON")),
], ids=["bad-host", "extra-not-json"])
def test_an_unusable_connection_ends_with_an_error_event_not_retried(monkeypatch, tmp_path,
                                                                    fields, says):
    """A malformed connection is bad input a person fixes: the task fails on it once."""
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", f"sqlite:///{tmp_path / 'j.db'}")
    monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_T", json.dumps(
        {"conn_type": "tron_node", **fields}))
    event = asyncio.run(TronPayoutBatchTrigger("b", "tron_node_t",
                                               end_time=time.time() + 5)._wait())
    assert event["status"] == "error" and says in event["message"], event
    assert event["retryable"] is False and "'tron_node_t'" in event["message"]


def test_the_trust_settings_travel_only_when_set():
    """The clock tolerance and the confirming node's connection id (identifiers only)."""
    trigger = TronPayoutBatchTrigger("b1", "tron_node_default", end_time=1e9,
                                     clock_tolerance_seconds=15, confirm_node_conn_id="tron_node_2")
    path, kwargs = trigger.serialize()
    assert (kwargs["clock_tolerance_seconds"], kwargs["confirm_node_conn_id"]) == (15.0,
                                                                                   "tron_node_2")
    assert TronPayoutBatchTrigger(**kwargs).serialize() == (path, kwargs)
    _, plain = TronPayoutBatchTrigger("b1", "n", end_time=1e9).serialize()
    assert "clock_tolerance_seconds" not in plain and "confirm_node_conn_id" not in plain
