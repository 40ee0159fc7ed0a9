"""Many USDT balances per request through a Multicall, on the sandbox's chain over HTTP.

The sandbox deploys a Multicall (``aggregate((address,bytes)[])``) at mainnet's known
address and runs each ``balanceOf`` against its USDT ledger. The client reads
``multicall_chunk`` balances per ``triggerconstantcontract`` request and believes
only an answer shaped as the contract encodes it: one 32-byte word per address asked.
The ``tamper`` fault makes the node lie; the sandbox's own contract shows the EVM's
answers (a call to an address without code returns no data; an unknown function reverts).
"""

from __future__ import annotations

from collections.abc import Iterator
from math import ceil

import pytest
import requests
from eth_abi import encode

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import NodeError, UnreliableNode
from airflow_provider_tronenergy.node.multicall import AGGREGATE, MAINNET_MULTICALL, evm_address
from support.chain import USDT, Chain, manual_chain
from tronenergy_protocol.address import random_address
from tronenergy_sandbox.chain.multicall import MULTICALL

CONSTANT = "/wallet/triggerconstantcontract"


@pytest.fixture
def chain() -> Iterator[Chain]:
    with manual_chain() as chain:
        yield chain


def client(chain: Chain, chunk: int = 100, **settings) -> TronNodeClient:
    return TronNodeClient(chain.sandbox.root_url, max_retries=0, multicall=MULTICALL,
                          multicall_chunk=chunk, **{"usdt_contract": USDT, **settings})


def fired(chain: Chain, fault_id: int) -> int:
    return next(int(f["fired"]) for f in chain.control.faults() if f["id"] == fault_id)


def test_the_sandbox_multicall_is_at_mainnets_known_address():
    assert MULTICALL == MAINNET_MULTICALL


@pytest.mark.parametrize(("count", "chunk"), [(1, 100), (7, 3), (12, 4), (250, 100)])
def test_balances_in_one_request_per_chunk(chain, count, chunk):
    """Holders, seeded holders, emptied and fresh addresses, the same address twice: each
    one's balance as its own balanceOf says, in ceil(distinct / chunk) requests."""
    control = chain.control
    addresses = [control.wallet(trx="1", usdt=f"{i}.5") if i % 3 == 0
                 else control.activated(holder=True) if i % 3 == 1
                 else random_address() for i in range(count)]
    owner = addresses[0]
    seen = control.fault(kind="latency", path=CONSTANT, latency_ms=0)
    with client(chain, chunk) as node:
        balances = node.get_usdt_balances(owner, addresses + addresses[:2])
        assert fired(chain, seen["id"]) == ceil(count / chunk)
        assert balances is not None and list(balances) == addresses
        assert balances == {a: node.get_usdt_balance(a) for a in addresses}
    assert all(balances[a] > 0 for a in addresses[1::3])  # seeded holders hold some


def test_a_holder_seeded_with_the_flag_holds_usdt_and_is_charged_as_one(chain):
    """The sandbox's flag-seeded holders had a balance of 0 and a holder's charge: the
    balance said "first transfer", the chain charged a holder's. Now both say holder."""
    _, owner = chain.account(trx="10", usdt="5")
    holder = chain.control.activated(holder=True)
    with client(chain) as node:
        assert node.get_usdt_balance(holder) > 0
        assert node.estimate_transfer_energy(owner, holder, 1) == 64_285
        chain.control.post(f"/addresses/{holder}/balances", {"usdt": "0"})  # swept
        assert node.get_usdt_balances(owner, [holder]) == {holder: 0}
        assert node.estimate_transfer_energy(owner, holder, 1) == 130_285


def test_no_multicall_no_batched_read(chain):
    with TronNodeClient(chain.sandbox.root_url, usdt_contract=USDT) as node:
        assert node.multicall is None
        assert node.get_usdt_balances(random_address(), [random_address()]) is None


def _words(*items: bytes, block: int = 7) -> str:
    return f'"{bytes(encode(["uint256", "bytes[]"], [block, list(items)])).hex()}"'


@pytest.mark.parametrize(("patch", "match"), [
    ({"constant_result.0": _words(bytes(32))}, "1 results for 2 calls"),
    ({"constant_result.0": _words(bytes(32), bytes(31))}, "not one 32-byte word"),
    ({"constant_result.0": _words(bytes(32), bytes(32), block=0)}, "names block 0"),
    ({"constant_result.0": _words(bytes(32), bytes(32))[:-1] + '00"'},
     "not encoded as the contract encodes it"),
    ({"constant_result.0": '"zz"'}, r"not \(uint256, bytes\[\]\)"),
    ({"constant_result": "[]"}, "no single result"),
    ({"result.result": "false"}, "did not run to its end"),
    ({"transaction.ret": '[{"ret": "FAILED"}]'}, "the constant call failed"),
])
def test_a_malformed_answer_is_an_unreliable_node(chain, patch, match):
    addresses = [chain.control.wallet(trx="1", usdt="1") for _ in range(2)]
    chain.control.fault(kind="tamper", path=CONSTANT, patch=patch)
    with client(chain) as node, pytest.raises(UnreliableNode, match=match) as caught:
        node.get_usdt_balances(addresses[0], addresses)
    assert chain.sandbox.root_url not in str(caught.value)


def test_a_contract_that_is_not_the_token_answers_no_balance(chain):
    """``usdt_contract`` naming an address without code: the EVM's staticcall succeeds
    with no data, which is no balance (refused, not read as 0)."""
    owner = chain.control.wallet(trx="1", usdt="1")
    with client(chain, usdt_contract=random_address()) as node, \
            pytest.raises(UnreliableNode, match="not one 32-byte word"):
        node.get_usdt_balances(owner, [owner])


def test_the_sandbox_contract_reverts_a_call_it_cannot_make(chain):
    """One call in the batch fails (``transfer`` through a static call): the whole
    aggregate reverts, as Multicall's ``require(success)`` does; the client names it."""
    owner = chain.control.wallet(trx="1", usdt="1")
    data = bytes.fromhex("a9059cbb") + bytes(64)
    parameter = bytes(encode(["(address,bytes)[]"], [[(evm_address(USDT), data)]])).hex()
    answer = requests.post(f"{chain.sandbox.root_url}{CONSTANT}", timeout=10, json={
        "owner_address": owner, "contract_address": MULTICALL, "function_selector": AGGREGATE,
        "parameter": parameter, "visible": True}).json()
    assert answer["result"] == {"result": True, "message": "REVERT opcode executed"}
    assert answer["transaction"]["ret"] == [{"ret": "FAILED"}]
    assert bytes.fromhex(answer["constant_result"][0])[-32:].rstrip(b"\0").endswith(
        b"Multicall: call failed")
    chain.control.fault(kind="tamper", path=CONSTANT, patch={
        "result": '{"result": true, "message": "REVERT opcode executed"}'})
    with client(chain) as node, pytest.raises(NodeError, match="triggerconstantcontract"):
        node.get_usdt_balances(owner, [owner])


@pytest.mark.parametrize(("settings", "match"), [
    ({"multicall": "TGXuuKAb4bnrn137u39EKbYzKNXvdCes9"}, "multicall is not a valid"),
    ({"multicall": MULTICALL, "multicall_chunk": 0}, "multicall_chunk must be 1 to 500"),
    ({"multicall": MULTICALL, "multicall_chunk": 501}, "multicall_chunk must be 1 to 500"),
])
def test_bad_settings_are_refused_before_any_request(settings, match):
    with pytest.raises(ValueError, match=match):
        TronNodeClient("http://127.0.0.1:9", **settings)
