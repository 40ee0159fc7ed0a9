"""The chain's control API: executed transactions with receipts, a node that lags (pause),
and faults on the node's paths (the answer lost after a transaction was accepted)."""

from __future__ import annotations

import pytest
import requests
from tronpy.exceptions import TransactionNotFound

from support.chain import Chain, manual_chain
from tronenergy_protocol.address import random_address


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


@pytest.fixture(autouse=True)
def no_faults(chain: Chain):
    yield
    chain.control.clear_faults()


def test_executed_transactions_are_listed_with_their_receipts(chain: Chain):
    key, owner = chain.account(usdt="10")
    _, holder = chain.account(usdt="1")
    first = chain.sent(chain.expiring(chain.usdt(owner, holder, 1_500_000)), key)
    second = chain.sent(chain.expiring(chain.trx(owner, holder, 2_000_000)), key)
    assert chain.transactions(owner=owner) == []
    assert {t["txid"] for t in chain.transactions(owner=owner, status="pending")} == \
        {first, second}
    chain.blocks(1)
    listed = chain.transactions(owner=owner)
    assert [(t["txid"], t["token"], t["amount"], t["to"]) for t in listed] == [
        (first, "USDT", "1.5", holder), (second, "TRX", "2", holder)]
    assert listed[0]["receipt"] == chain.info(first)
    assert chain.transactions(to=holder) == listed
    assert chain.transactions(owner=owner, to=random_address()) == []


def test_a_bad_query_is_refused(chain: Chain):
    root = chain.control.root
    assert requests.get(f"{root}/chain/transactions", params={"owner": "nope"},
                        timeout=10).status_code == 400
    assert requests.get(f"{root}/chain/transactions", params={"status": "lost"},
                        timeout=10).status_code == 400


def test_while_paused_transactions_wait_and_land_in_the_next_block_after_resume(chain: Chain):
    key, owner = chain.account(usdt="10")
    chain.control.post("/chain/pause")
    txid = chain.sent(chain.expiring(chain.usdt(owner, random_address(), 1),
                                     after_head_ms=600_000), key)
    head = chain.head()
    chain.blocks(20)
    assert chain.head() == head and chain.info(txid) == {}
    chain.control.post("/chain/resume")
    chain.blocks(1)
    assert chain.info(txid)["blockNumber"] == head + 1


def test_a_transaction_expiring_while_the_node_lags_never_lands(chain: Chain):
    key, owner = chain.account(usdt="10")
    chain.control.post("/chain/pause")
    txid = chain.sent(chain.expiring(chain.usdt(owner, random_address(), 1),
                                     after_head_ms=30_000), key)
    chain.clock.advance(60)
    chain.control.post("/chain/resume")
    chain.blocks(1)
    assert chain.info(txid) == {}
    (dropped,) = chain.transactions(owner=owner, status="dropped")
    assert dropped["refusal"] == {"code": "TRANSACTION_EXPIRATION_ERROR",
                                  "message": "Transaction expired"}
    assert chain.contract().functions.balanceOf(owner) == 10_000_000


def test_a_broadcast_whose_answer_is_lost_still_executes(chain: Chain):
    key, owner = chain.account(usdt="10")
    chain.control.fault(kind="drop", path="/wallet/broadcasttransaction", count=1)
    txn = chain.expiring(chain.usdt(owner, random_address(), 1)).build().sign(key)
    with pytest.raises(requests.ConnectionError):
        txn.broadcast()
    chain.blocks(1)
    assert chain.info(txn.txid)["receipt"]["result"] == "SUCCESS"
    assert chain.raw_broadcast(txn)["code"] == "DUP_TRANSACTION_ERROR"  # sending again is safe


def test_node_paths_answer_5xx_and_latency_faults(chain: Chain):
    chain.control.fault(kind="error", path="/wallet/getnowblock", status=503, count=1)
    with pytest.raises(requests.HTTPError):
        chain.tron.get_latest_block()
    assert chain.tron.get_latest_block()["blockID"]
    chain.control.fault(kind="latency", path="/walletsolidity/*", latency_ms=200, count=1)
    with pytest.raises(requests.Timeout):
        requests.post(f"{chain.sandbox.root_url}/walletsolidity/gettransactioninfobyid",
                      json={"value": "ab" * 32}, timeout=0.05)
    with pytest.raises(TransactionNotFound):
        chain.tron.get_solid_transaction_info("ab" * 32)


def test_a_service_wide_fault_leaves_the_node_alone(chain: Chain):
    chain.control.fault(kind="error", path="*", status=500)
    assert chain.tron.get_latest_block()["blockID"]
    assert chain.control.faults()[0]["fired"] == 0
