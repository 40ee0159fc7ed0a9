"""The node client reading the chain's parameters and USDT's energy factor from the sandbox
over real HTTP, and following them when a proposal changes them; a block's receipts in one
read and the solid block; a node answering figures the chain could not hold is refused."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
import requests

from airflow_provider_tronenergy.node.chain_parameters import ChainParameters
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import NodeError
from support.chain import Chain, manual_chain
from support.control import Control
from support.hostile_server import Flood, HostileServer, answer
from support.sandbox import sandbox_fixture
from support.waiting import wait_until
from tronenergy_protocol.address import random_address

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
sandbox = sandbox_fixture(time_scale=0.01)  # a block every 30 ms


@pytest.fixture
def node(sandbox):
    with TronNodeClient(sandbox.root_url) as client:
        yield client


def test_the_chains_fees_and_usdts_factor(node):
    assert node.get_chain_parameters() == ChainParameters(
        energy_fee=100, transaction_fee=1_000, create_account_fee=100_000,
        create_new_account_fee_in_system_contract=1_000_000, free_net_limit=600,
        multi_sign_fee=1_000_000)
    info = node.get_contract_info()
    assert info is not None and (info.contract_address, info.energy_factor) == (USDT, 34_000)
    assert node.get_contract_info(random_address()) is None


def test_a_proposal_and_a_factor_change_are_read_once_in_force(sandbox, node):
    control = Control(sandbox)
    control.post("/chain/parameters", {"getEnergyFee": 210, "getCreateAccountFee": 0})
    control.post("/chain/contract", {"energy_factor": 10_000})
    wait_until(lambda: node.get_chain_parameters().energy_fee == 210, timeout=5)
    fees = node.get_chain_parameters()
    assert (fees.create_account_fee, fees.activation_sun) == (0, 1_000_000)
    wait_until(lambda: node.get_contract_info().energy_factor == 10_000, timeout=5)


def test_the_nodes_estimate_follows_usdts_energy_factor(sandbox, node):
    control = Control(sandbox)
    sender = control.wallet(trx="10", usdt="100")
    holder, newcomer = control.wallet(usdt="1"), random_address()
    assert node.estimate_transfer_energy(sender, holder, 1_000_000) == 64_285
    assert node.estimate_transfer_energy(sender, newcomer, 1_000_000) == 130_285
    control.post("/chain/contract", {"energy_factor": 10_000})
    wait_until(lambda: node.estimate_transfer_energy(sender, holder, 1) == 29_236, timeout=5)
    assert node.estimate_transfer_energy(sender, newcomer, 1_000_000) == 59_236


def test_a_node_answering_an_impossible_fee_is_refused(sandbox, node):
    # java-tron lets a proposal set this (its range reaches 10**17); no plan believes it.
    Control(sandbox).post("/chain/parameters", {"getEnergyFee": 1_000_000})
    wait_until(lambda: requests.post(sandbox.root_url + "/wallet/getchainparameters",
                                     timeout=5).json()["chainParameter"][0]["value"]
               == 1_000_000, timeout=5)
    with pytest.raises(ValueError, match=r"getEnergyFee.*sun per energy.*1,000,000"):
        node.get_chain_parameters()


# -- a block's receipts and the solid block (a manual clock: blocks move when told) ---------

@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


@pytest.fixture(scope="module")
def batch(chain: Chain) -> tuple[int, list[str]]:
    """Two USDT transfers and a TRX transfer packed in one block; its number and the txids."""
    key, owner = chain.account(trx="100", usdt="10")
    _, holder = chain.account(usdt="1")
    txids = [chain.sent(chain.expiring(chain.usdt(owner, random_address(), 1_000_000)), key),
             chain.sent(chain.expiring(chain.usdt(owner, holder, 1, fee_limit=1_000_050)), key),
             chain.sent(chain.expiring(chain.trx(owner, holder, 1_000_000)), key)]
    chain.blocks(1)
    return chain.info(txids[0])["blockNumber"], txids


def test_a_blocks_receipts_in_one_read_then_solidified(chain: Chain, batch):
    number, txids = batch
    with TronNodeClient(chain.sandbox.root_url) as node:
        receipts = node.get_block_receipts(number)
        assert receipts == [node.get_transaction_info(txid) for txid in txids]
        assert [(r.tx_hash, r.block_number, r.succeeded) for r in receipts] == \
            [(txids[0], number, True), (txids[1], number, False), (txids[2], number, True)]
        assert receipts[1].receipt_result == "OUT_OF_ENERGY"
        assert node.get_block_receipts(number + 1) == []  # not produced yet: read the head
        assert node.get_block_receipts(number, solidified=True) == []
        assert node.get_solid_block().number < number
        chain.blocks(19)
        assert node.get_solid_block().number == number
        solid = node.get_block_receipts(number, solidified=True)
        assert solid == [dataclasses.replace(r, solidified=True) for r in receipts]
        assert solid == [node.get_transaction_info(t, solidified=True) for t in txids]
        for bad in (0, -1, True, 1.5):
            with pytest.raises(ValueError, match="block number"):
                node.get_block_receipts(bad)  # type: ignore[arg-type]


def test_the_head_and_the_solid_block_with_their_ids(chain: Chain):
    with TronNodeClient(chain.sandbox.root_url) as node:
        head, solid = node.get_now_block(), node.get_solid_block()
        world = chain.sandbox.state.world
        assert head.number == chain.head() and solid.number == head.number - 19
        assert head.block_id == chain.tron.get_latest_block()["blockID"]
        assert solid.block_id == world.block_id(solid.number)
        assert solid.timestamp_ms == int(world.block_time(solid.number) * 1000)
        assert head.timestamp_ms - solid.timestamp_ms == 19 * 3_000


def test_a_fault_on_the_receipts_path_is_a_node_error_naming_it(chain: Chain, batch):
    number, _ = batch
    path = "/walletsolidity/gettransactioninfobyblocknum"
    chain.control.fault(kind="error", path=path, status=503)
    try:
        with TronNodeClient(chain.sandbox.root_url, max_retries=1) as node, \
                pytest.raises(NodeError) as info:
            node.get_block_receipts(number, solidified=True)
    finally:
        chain.control.clear_faults()
    assert info.value.status == 503 and info.value.path == path[1:]


def _lying(body: Any) -> NodeError:
    """What reading block 1,000's receipts from a node answering ``body`` raises."""
    with HostileServer(answer(200, body)) as server, \
            TronNodeClient(server.root, max_retries=0) as node, \
            pytest.raises(NodeError) as info:
        node.get_block_receipts(1_000)
    assert info.value.path == "wallet/gettransactioninfobyblocknum"
    assert server.received[0].body == b'{"num": 1000, "visible": true}'
    return info.value


def _receipt(number: int = 1_000, txid: str = "ab" * 32, **fields: Any) -> dict[str, Any]:
    return {"id": txid, "fee": 345_000, "blockNumber": number, "blockTimeStamp": 1_700_000_000_000,
            "contractResult": [""], "receipt": {"net_usage": 268}, **fields}


@pytest.mark.parametrize(("body", "why"), [
    ({}, "not a list of receipts: dict"),
    ({"Error": "class java.lang.NumberFormatException : x"}, "not a list of receipts"),
    ([_receipt(), "ab" * 32], "receipt 1 is not an object"),
    ([_receipt(txid="ab" * 31)], "receipt 0's id is not 64 hex"),
    ([_receipt(txid="zz" * 32)], "receipt 0's id is not 64 hex"),
    ([{k: v for k, v in _receipt().items() if k != "id"}], "receipt 0's id is not 64 hex"),
    ([_receipt(number=999)], "is in block 999, not 1000"),
    ([{k: v for k, v in _receipt().items() if k != "blockNumber"}], "is in block 0, not 1000"),
    ([_receipt(), _receipt()], "appears twice in block 1000"),
    ([_receipt(), _receipt(txid="cd" * 32, blockTimeStamp=1)], "another block timestamp"),
    ([_receipt(blockNumber="1000")], "'blockNumber' is not a non-negative integer"),
    ([_receipt(fee=-1, receipt="SUCCESS")], "'receipt' is not an object"),
])
def test_a_node_lying_about_a_blocks_receipts_is_refused(body, why):
    error = _lying(body)
    assert why in str(error) and "wallet/gettransactioninfobyblocknum" in str(error)


def test_a_genuine_answer_changed_in_one_field_is_refused(chain: Chain, batch):
    number, txids = batch
    genuine = requests.post(f"{chain.sandbox.root_url}/wallet/gettransactioninfobyblocknum",
                            json={"num": number, "visible": True}, timeout=10).json()
    with HostileServer(answer(200, genuine)) as server, \
            TronNodeClient(server.root, max_retries=0) as node:
        assert [r.tx_hash for r in node.get_block_receipts(number)] == txids
        with pytest.raises(NodeError, match=f"in block {number}, not {number + 1}"):
            node.get_block_receipts(number + 1)  # the same answer for another block
    moved = copy.deepcopy(genuine)
    moved[2]["blockNumber"] = number + 1
    with HostileServer(answer(200, moved)) as server, \
            TronNodeClient(server.root, max_retries=0) as node, \
            pytest.raises(NodeError, match=f"receipt 2 .*in block {number + 1}"):
        node.get_block_receipts(number)


def test_a_flood_of_receipts_is_cut_at_the_cap():
    flood = Flood(200_000_000)
    with HostileServer(flood) as server, \
            TronNodeClient(server.root, max_retries=0, max_answer_bytes=65_536) as node, \
            pytest.raises(NodeError, match=r"larger than 65,536 bytes"):
        node.get_block_receipts(1_000)
    assert flood.sent < flood.total


def _block(number: int, block_id: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"block_header": {"raw_data": {"number": number,
                                                          "timestamp": 1_700_000_000_000}}}
    if block_id is not None:
        body["blockID"] = block_id
    return body


@pytest.mark.parametrize(("body", "why"), [
    (_block(1_000, None), "blockID is not 64 hex"),
    (_block(1_000, "00" * 32), "is not block 1000's"),
    (_block(1_000, (999).to_bytes(8, "big").hex() + "ab" * 24), "is not block 1000's"),
    (_block(1_000, (1_000).to_bytes(8, "big").hex() + "ab" * 23), "blockID is not 64 hex"),
    ({"blockID": (1_000).to_bytes(8, "big").hex() + "ab" * 24}, "no block_header.raw_data"),
    ({}, "no block_header.raw_data"),
])
def test_a_solid_block_whose_id_is_not_its_number_is_refused(body, why):
    with HostileServer(answer(200, body)) as server, \
            TronNodeClient(server.root, max_retries=0) as node:
        with pytest.raises(NodeError, match=why) as info:
            node.get_solid_block()
        assert info.value.path == "walletsolidity/getnowblock"
        assert server.received[0].path == "/walletsolidity/getnowblock"
        with pytest.raises(NodeError, match=why):
            node.get_now_block()


def test_a_block_by_number_with_the_txids_it_holds(chain: Chain, batch):
    number, txids = batch
    with TronNodeClient(chain.sandbox.root_url) as node:
        body = node.get_block(number)
        assert body is not None and body.txids == frozenset(txids)
        assert body.block.number == number
        assert body.block.timestamp_ms == node.get_transaction_info(txids[0]).block_timestamp_ms
        head = node.get_now_block()
        assert node.get_block(head.number) == node.get_block(head.number)
        assert node.get_block(head.number).block == head  # type: ignore[union-attr]
        assert node.get_block(head.number + 1) is None  # not produced yet
        solid = node.get_solid_block()
        assert node.get_block(solid.number + 1, solidified=True) is None  # not solid yet
        assert node.get_block(solid.number, solidified=True).block == solid  # type: ignore[union-attr]
        for bad in (0, -1, True):
            with pytest.raises(ValueError, match="block number"):
                node.get_block(bad)


@pytest.mark.parametrize(("body", "why"), [
    ({**_block(1_000, (1_000).to_bytes(8, "big").hex() + "ab" * 24),
      "transactions": [{"txID": "ab" * 32}, {"txID": "AB" * 32}]}, "twice"),
    ({**_block(1_000, (1_000).to_bytes(8, "big").hex() + "ab" * 24),
      "transactions": [{"raw_data": {}}]}, "no 64-hex txID"),
    (_block(999, (999).to_bytes(8, "big").hex() + "ab" * 24), "block 999 for block 1000"),
])
def test_a_block_by_number_the_chain_cannot_hold_is_refused(body, why):
    with HostileServer(answer(200, body)) as server, \
            TronNodeClient(server.root, max_retries=0) as node:
        with pytest.raises(NodeError, match=why):
            node.get_block(1_000)
        assert server.received[0].path == "/wallet/getblockbynum"


def test_a_receipt_naming_another_transaction_is_refused(chain: Chain, batch):
    """``gettransactioninfobyid`` answering another transaction's receipt (a mangling proxy)
    is not the receipt asked for."""
    _, txids = batch
    chain.control.fault(kind="tamper", path="/wallet/gettransactioninfobyid",
                        patch={"id": f'"{txids[1]}"'})
    try:
        with TronNodeClient(chain.sandbox.root_url, max_retries=0) as node, \
                pytest.raises(NodeError, match="receipt names transaction"):
            node.get_transaction_info(txids[0])
    finally:
        chain.control.clear_faults()
