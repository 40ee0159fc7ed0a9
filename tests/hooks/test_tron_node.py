"""TronNodeHook's connection, its API key and its failures, against real loopback servers.

Its reads against the sandbox's node API are in tests/node; here a recording HTTP
server stands in for a node so the headers it is sent can be seen.
"""

from __future__ import annotations

import json
import logging

import pytest

from airflow_provider_tronenergy.client import Timeout
from airflow_provider_tronenergy.errors import ConnectionMissing, NotRetryable
from airflow_provider_tronenergy.hooks.tron_node import TronNodeConnectionError, TronNodeHook
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.models import USDT_MAINNET
from airflow_provider_tronenergy.node.network import NETWORKS
from support.hostile_server import Behaviour, HostileServer, answer
from support.receiver import RecordingReceiver

API_KEY = "node-key-5f1c2a7e-0000-4bd1-9a3e-1234567890ab"
MAINNET_GENESIS = {"blockID": NETWORKS["mainnet"].genesis_block_id,
                   "block_header": {"raw_data": {}}}


def node_answer(body: object, genesis: object = MAINNET_GENESIS) -> Behaviour:
    """A node answering block 0 with ``genesis`` (mainnet's) and every other call ``body``:
    the hook reads block 0 before it hands its client out."""
    zero, other = answer(200, genesis), answer(200, body)

    def behave(sock, request) -> None:
        asked = request.path == "/wallet/getblockbynum" and json.loads(request.body) == {
            "num": 0, "visible": True}
        (zero if asked else other)(sock, request)

    return behave


def _connect(monkeypatch: pytest.MonkeyPatch, conn_id: str, **fields) -> TronNodeHook:
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}",
                       json.dumps({"conn_type": "tron_node", **fields}))
    return TronNodeHook(conn_id)


def test_settings_from_a_connection(monkeypatch):
    hook = _connect(monkeypatch, "node_a", host="https://nile.example/", password=API_KEY,
                    extra={"timeout": "2.5", "max_retries": 0})
    settings = TronNodeHook.node_settings(hook.get_connection("node_a"))
    assert settings == {"url": "https://nile.example", "api_key": API_KEY,
                        "usdt_contract": USDT_MAINNET, "timeout": Timeout(2.5, 2.5),
                        "max_retries": 0, "max_answer_bytes": 16_777_216}
    assert API_KEY not in repr(hook) and API_KEY not in repr(TronNodeClient(**settings))


NEEDS = "payouts need a TRON node to sign against"


def test_required_looks_the_connection_up_and_refuses_one_that_names_nothing(monkeypatch):
    """Payouts, the keeper, proofs and the scan: None, blank or a typo is refused with the
    provider's ``ConnectionMissing`` (not retried), naming the setting, the id and what needs
    it; never Airflow's not-found (retried as any AirflowException)."""
    _connect(monkeypatch, "node_here", host="https://nile.example")
    found = TronNodeHook.required("node_here", needs=NEEDS)
    assert isinstance(found, TronNodeHook) and found.tron_node_conn_id == "node_here"
    monkeypatch.delenv("AIRFLOW_CONN_NODE_NOWHERE", raising=False)
    with pytest.raises(ConnectionMissing) as missing:
        TronNodeHook.required("node_nowhere", needs=NEEDS)
    assert str(missing.value) == (f"tron_node_conn_id 'node_nowhere' names no connection; "
                                  f"{NEEDS}: create it")
    assert isinstance(missing.value, NotRetryable)
    for unset, said in ((None, "None"), ("", "empty"), ("  ", "empty")):
        with pytest.raises(ConnectionMissing, match=f"^tron_node_conn_id is {said}; {NEEDS}"):
            TronNodeHook.required(unset, needs=NEEDS)
    with pytest.raises(ConnectionMissing, match=r"^confirm_node_conn_id 'node_nowhere' names"):
        TronNodeHook.required("node_nowhere", needs=NEEDS, setting="confirm_node_conn_id")


def test_chosen_is_none_only_for_a_written_none(monkeypatch):
    """Preparation may go without a node, but only by ``tron_node_conn_id=None``: an empty
    id or a typo is refused, and the error says how to go without on purpose."""
    _connect(monkeypatch, "node_here", host="https://nile.example")
    assert TronNodeHook.chosen(None, needs=NEEDS, without="plan blind") is None
    assert TronNodeHook.chosen("node_here", needs=NEEDS, without="plan blind") is not None
    monkeypatch.delenv("AIRFLOW_CONN_TRON_NOD_DEFAULT", raising=False)
    with pytest.raises(ConnectionMissing) as missing:
        TronNodeHook.chosen("tron_nod_default", needs=NEEDS, without="plan blind")
    assert str(missing.value) == (
        f"tron_node_conn_id 'tron_nod_default' names no connection; {NEEDS}: create it, or "
        "pass tron_node_conn_id=None to plan blind")
    with pytest.raises(ConnectionMissing, match=r"is empty; .* or pass tron_node_conn_id=None"):
        TronNodeHook.chosen("", needs=NEEDS, without="plan blind")


def test_a_hook_built_on_a_missing_connection_fails_with_the_providers_error(monkeypatch):
    """Every read of the hook goes through the one lookup (``hooks.lookup``)."""
    monkeypatch.delenv("AIRFLOW_CONN_NODE_NOWHERE", raising=False)
    hook = TronNodeHook("node_nowhere")
    with pytest.raises(ConnectionMissing, match="'node_nowhere' names no connection"):
        hook.get_conn()
    with pytest.raises(ConnectionMissing, match="'node_nowhere' names no connection"):
        hook.get_explorer()


@pytest.mark.parametrize(("fields", "match"), [
    ({"host": "nile.example"}, "host must be the node's URL"),
    ({"host": "http://n", "extra": {"timeout": "٣"}}, "timeout"),
    ({"host": "http://n", "extra": {"max_retries": "-1"}}, "max_retries"),
    ({"host": "http://n", "extra": {"usdt_contract": "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6T"}},
     "usdt_contract"),
    ({"host": "http://n", "extra": {"explorer_url": "javascript:alert(1)"}},
     "'node_bad': extra explorer_url must start with https://"),
])
def test_bad_connections_are_refused_clearly(monkeypatch, fields, match):
    hook = _connect(monkeypatch, "node_bad", **fields)
    with pytest.raises(TronNodeConnectionError, match=match):
        hook.get_conn()


@pytest.mark.parametrize(("extra", "root"), [
    ({}, "https://tronscan.org"),
    ({"explorer_url": None}, "https://tronscan.org"),  # what the form saves when left empty
    ({"explorer_url": "https://nile.tronscan.org/"}, "https://nile.tronscan.org"),
])
def test_the_payout_links_explorer_comes_from_the_extra(monkeypatch, extra, root):
    hook = _connect(monkeypatch, "node_x", host="https://nile.example", extra=extra)
    assert hook.get_explorer().root == root


def test_credentials_in_the_explorer_url_are_refused_without_showing_them(monkeypatch):
    hook = _connect(monkeypatch, "node_x", host="https://n.example",
                    extra={"explorer_url": "https://scan:pw-77f1@explorer.example"})
    with pytest.raises(TronNodeConnectionError, match="user name or password") as refused:
        hook.get_explorer()
    assert "pw-77f1" not in str(refused.value)


HEAD = {"blockID": (1_000).to_bytes(8, "big").hex() + "ab" * 24,
        "block_header": {"raw_data": {"number": 1_000, "timestamp": 1_700_000_000_000}}}


def test_the_api_key_travels_only_as_its_header(monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    with HostileServer(node_answer(HEAD)) as node:
        hook = _connect(monkeypatch, "node_key", host=node.root, password=API_KEY)
        assert hook.test_connection() == (True, "Connected to mainnet: head block 1000")
        keyless = _connect(monkeypatch, "node_nokey", host=node.root)
        keyless.get_now_block()
        hook.close()
        keyless.close()
    genesis, first, _, second = node.received
    assert genesis.path == "/wallet/getblockbynum"
    assert genesis.headers["tron-pro-api-key"] == API_KEY
    assert first.path == "/wallet/getnowblock" and first.headers["tron-pro-api-key"] == API_KEY
    assert "tron-pro-api-key" not in second.headers  # no key of tronpy's own, ever
    assert API_KEY not in first.body.decode() and API_KEY not in caplog.text


def test_the_connection_test_fails_on_an_answer_that_is_no_block(monkeypatch):
    with HostileServer(node_answer({"ok": True})) as node:
        hook = _connect(monkeypatch, "node_noblock", host=node.root)
        ok, message = hook.test_connection()
        hook.close()
    assert not ok and "wallet/getnowblock" in message and "block_header" in message


def test_a_failing_node_is_retried_then_named_without_url_or_key():
    with RecordingReceiver(respond=lambda n: 503) as node:
        root = node.url.removesuffix("/callbacks") + "/secret-path-token"
        client = TronNodeClient(root, api_key=API_KEY, max_retries=2)
        with pytest.raises(NodeError) as failed:
            client.get_account("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")
        client.close()
    assert len(node.received) == 3  # the read, then two resends
    message = str(failed.value)
    assert "wallet/getaccount" in message and failed.value.status == 503
    assert "secret-path-token" not in message and API_KEY not in message
    assert "127.0.0.1" not in message


def test_bad_input_is_refused_before_any_request():
    with RecordingReceiver() as node:
        client = TronNodeClient(node.url.removesuffix("/callbacks"))
        with pytest.raises(ValueError, match="base58check"):
            client.get_usdt_balance("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6T")
        with pytest.raises(ValueError, match="64 hexadecimal"):
            client.get_transaction_info("not-a-hash")
        with pytest.raises(ValueError, match="positive"):
            client.estimate_transfer_energy(USDT_MAINNET, USDT_MAINNET, 0)
        client.close()
    assert node.received == []


def test_the_solid_block_and_a_blocks_receipts_through_the_hook(monkeypatch):
    receipt = {"id": "cd" * 32, "blockNumber": 1_000, "blockTimeStamp": 1_700_000_000_000,
               "receipt": {"result": "SUCCESS"}}
    with HostileServer(node_answer(HEAD)) as node:
        hook = _connect(monkeypatch, "node_solid", host=node.root)
        assert hook.get_solid_block().block_id == HEAD["blockID"]
        hook.close()
    with HostileServer(node_answer([receipt])) as node:
        hook = _connect(monkeypatch, "node_receipts", host=node.root)
        (info,) = hook.get_block_receipts(1_000, solidified=True)
        hook.close()
    assert (info.tx_hash, info.block_number, info.solidified, info.succeeded) == \
        ("cd" * 32, 1_000, True, True)
    assert node.received[1].path == "/walletsolidity/gettransactioninfobyblocknum"


def test_a_trx_payouts_block_and_fees_through_the_hook(monkeypatch):
    transfer = {"txID": "ef" * 32, "ret": [{"contractRet": "SUCCESS", "fee": 1_000_000}],
                "raw_data": {"contract": [{"type": "TransferContract", "parameter": {"value": {
                    "owner_address": USDT_MAINNET, "to_address": NETWORKS["nile"].usdt_contract,
                    "amount": 7}}}]}}
    with HostileServer(node_answer({**HEAD, "transactions": [transfer]})) as node:
        hook = _connect(monkeypatch, "node_trx_block", host=node.root)
        block = hook.get_block_trx(1_000, solidified=True)
        hook.close()
    assert node.received[1].path == "/walletsolidity/getblockbynum"
    entry = block.entries["ef" * 32]
    assert (entry.ret_fee_sun, entry.transfer.units, block.body.block.number) == (
        1_000_000, 7, 1_000)
    bad = {**transfer, "raw_data": {"contract": [{**transfer["raw_data"]["contract"][0],
                                                  "parameter": {"value": {"amount": 1.5}}}]}}
    with HostileServer(node_answer({**HEAD, "transactions": [bad]})) as node:
        hook = _connect(monkeypatch, "node_trx_bad", host=node.root)
        with pytest.raises(NodeError, match=r"wallet/getblockbynum answered what the chain"):
            hook.get_block_trx(1_000)
        hook.close()
    fees = {"chainParameter": [{"key": k, "value": 1_000} for k in (
        "getEnergyFee", "getTransactionFee", "getCreateAccountFee",
        "getCreateNewAccountFeeInSystemContract", "getFreeNetLimit", "getMultiSignFee")]}
    with HostileServer(node_answer(fees)) as node:
        hook = _connect(monkeypatch, "node_trx_fees", host=node.root)
        with pytest.raises(NodeError, match="getCreateNewAccountBandwidthRate"):
            hook.get_trx_fees()  # java-tron always lists it: a list without it is refused
        hook.close()
