"""Broadcasting: java-tron's checks, codes and messages, and packing into the next block.

Each refusal is shown twice: as tronpy raises it, and as java-tron's answer
(``code`` and the message, decoded from hex) that tronpy read it from.
"""

from __future__ import annotations

import json

import pytest
import requests
from tronpy.exceptions import (
    BadSignature,
    TaposError,
    TransactionError,
    UnknownError,
    ValidationError,
)
from tronpy.keys import PrivateKey
from tronpy.tron import Transaction

from support.chain import Chain, manual_chain
from tronenergy_protocol.address import decode_address, random_address


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


def _offline(chain: Chain, owner: str, to: str | None = None, *, ref: str | None = None,
             after_head_ms: int = 60_000) -> Transaction:
    builder = chain.expiring(chain.usdt(owner, to or random_address(), 1), after_head_ms)
    return builder.build(offline=True, ref_block_id=ref or chain.tron.get_latest_solid_block_id())


def test_an_accepted_transfer_is_packed_into_the_next_block(chain: Chain):
    key, owner = chain.account(usdt="10")
    head = chain.head()
    txid = chain.sent(chain.expiring(chain.usdt(owner, random_address(), 1_000_000)), key)
    assert chain.info(txid) == {}  # waiting for its block
    assert chain.transactions(owner=owner, status="pending")[0]["txid"] == txid
    chain.blocks(1)
    info = chain.info(txid)
    assert info["blockNumber"] == head + 1 and info["receipt"]["result"] == "SUCCESS"


def test_offline_build_with_a_ref_block_id(chain: Chain):
    key, owner = chain.account(usdt="10")
    txn = _offline(chain, owner).sign(key)
    assert chain.raw_broadcast(txn) == {"result": True, "txid": txn.txid}


def test_broadcast_hex_takes_the_protobuf_transaction(chain: Chain):
    from tronpy.proto import tron_pb2
    from tronpy.proto.transaction import _raw_data_to_protobuf

    key, owner = chain.account(usdt="10")
    txn = _offline(chain, owner).sign(key)
    message = tron_pb2.Transaction(raw_data=_raw_data_to_protobuf(txn._raw_data),
                                   signature=[bytes.fromhex(s) for s in txn._signature])
    answer = requests.post(f"{chain.sandbox.root_url}/wallet/broadcasthex",
                           json={"transaction": message.SerializeToString().hex()},
                           timeout=10).json()
    assert (answer["result"], answer["code"], answer["txid"]) == (True, "SUCCESS", txn.txid)
    assert json.loads(answer["transaction"])["txID"] == txn.txid
    again = requests.post(f"{chain.sandbox.root_url}/wallet/broadcasthex",
                          json={"transaction": message.SerializeToString().hex()},
                          timeout=10).json()
    assert (again["result"], again["code"], again["message"]) == (
        False, "DUP_TRANSACTION_ERROR", "Dup transaction.")


def test_a_duplicate_is_refused_before_and_after_its_block(chain: Chain):
    key, owner = chain.account(usdt="10")
    txn = _offline(chain, owner).sign(key)
    assert chain.raw_broadcast(txn)["result"] is True
    assert chain.raw_broadcast(txn) == {"code": "DUP_TRANSACTION_ERROR",
                                        "message": "Dup transaction.", "txid": txn.txid}
    chain.blocks(1)
    with pytest.raises(UnknownError, match="Dup transaction"):
        chain.tron.broadcast(txn)
    assert len(chain.transactions(owner=owner)) == 1


def test_a_signature_that_does_not_recover_to_the_owner(chain: Chain):
    _, owner = chain.account(usdt="10")
    stranger = PrivateKey.random()
    txn = _offline(chain, owner).sign(stranger)  # offline: tronpy has no permission to check
    answer = chain.raw_broadcast(txn)
    assert answer["code"] == "SIGERROR"
    assert answer["message"] == (
        f"Validate signature error: {txn._signature[0]} is signed by "
        f"{stranger.public_key.to_base58check_address()} but it is not contained of permission.")
    with pytest.raises(BadSignature):
        chain.tron.broadcast(txn)


def test_a_corrupted_signature(chain: Chain):
    key, owner = chain.account(usdt="10")
    txn = _offline(chain, owner).sign(key)
    signature = bytearray(bytes.fromhex(txn._signature[0]))
    signature[10] ^= 0xFF
    txn.set_signature([signature.hex()])
    answer = chain.raw_broadcast(txn)
    assert answer["code"] == "SIGERROR"
    assert answer["message"].startswith("Validate signature error: ")


def test_a_transaction_without_a_signature(chain: Chain):
    _, owner = chain.account(usdt="10")
    txn = _offline(chain, owner)
    assert chain.raw_broadcast(txn)["message"] == "Validate signature error: miss sig or contract"


def test_a_signature_over_other_data_than_the_raw_data_sent(chain: Chain):
    """The node hashes the raw_data it is sent: a changed amount breaks the signature."""
    key, owner = chain.account(trx="10")
    txn = chain.expiring(chain.trx(owner, random_address(), 1_000_000)).build(
        offline=True, ref_block_id=chain.tron.get_latest_solid_block_id()).sign(key)
    txn._raw_data["contract"][0]["parameter"]["value"]["amount"] = 9_000_000
    assert chain.raw_broadcast(txn)["code"] == "SIGERROR"


def test_an_expired_transaction(chain: Chain):
    key, owner = chain.account(usdt="10")
    txn = _offline(chain, owner, after_head_ms=10_000).sign(key)
    chain.clock.advance(10)
    answer = chain.raw_broadcast(txn)
    assert (answer["code"], answer["message"]) == ("TRANSACTION_EXPIRATION_ERROR",
                                                   "Transaction expired")
    with pytest.raises(TransactionError, match="Transaction expired"):
        chain.tron.broadcast(txn)


def test_an_expiration_more_than_24_hours_ahead(chain: Chain):
    key, owner = chain.account(usdt="10")
    txn = _offline(chain, owner, after_head_ms=24 * 3600 * 1000 + 1_000).sign(key)
    assert chain.raw_broadcast(txn)["code"] == "TRANSACTION_EXPIRATION_ERROR"
    fine = _offline(chain, owner, after_head_ms=23 * 3600 * 1000).sign(key)
    assert chain.raw_broadcast(fine)["result"] is True


def test_an_unknown_reference_block(chain: Chain):
    key, owner = chain.account(usdt="10")
    real = chain.tron.get_latest_solid_block_id()
    txn = _offline(chain, owner, ref=real[:16] + "ab" * 24).sign(key)
    answer = chain.raw_broadcast(txn)
    assert (answer["code"], answer["message"]) == ("TAPOS_ERROR", "Tapos check error.")
    with pytest.raises(TaposError):
        chain.tron.broadcast(txn)


def test_a_reference_block_older_than_65536_blocks():
    with manual_chain() as chain:
        key, owner = chain.account(usdt="10")
        ref = chain.tron.get_latest_block_id()
        chain.blocks(65_535)
        assert chain.raw_broadcast(_offline(chain, owner, ref=ref).sign(key))["result"] is True
        chain.blocks(1)  # the reference block leaves the window: its bytes name a newer one
        answer = chain.raw_broadcast(_offline(chain, owner, ref=ref).sign(key))
        assert answer["code"] == "TAPOS_ERROR"


def test_an_unactivated_owner(chain: Chain):
    key = PrivateKey.random()
    owner = key.public_key.to_base58check_address()
    txn = _offline(chain, owner).sign(key)
    answer = chain.raw_broadcast(txn)
    assert answer == {"code": "CONTRACT_VALIDATE_ERROR", "txid": txn.txid,
                      "message": f"Contract validate error : account [{owner}] does not exist"}
    with pytest.raises(ValidationError):
        chain.tron.broadcast(txn)


def test_a_call_to_another_contract(chain: Chain):
    key, owner = chain.account()
    other = random_address()
    txn = chain.expiring(chain.usdt(owner, random_address(), 1)).build(
        offline=True, ref_block_id=chain.tron.get_latest_solid_block_id())
    txn._raw_data["contract"][0]["parameter"]["value"]["contract_address"] = \
        decode_address(other).hex()
    from tronpy.proto import calculate_txid_from_raw_data
    txn.txid = calculate_txid_from_raw_data(txn._raw_data)
    answer = chain.raw_broadcast(txn.sign(key))
    assert answer["code"] == "CONTRACT_VALIDATE_ERROR"
    assert answer["message"] == "Contract validate error : No contract or not a smart contract"


def test_an_unreadable_transaction_is_an_error_not_a_refusal(chain: Chain):
    answer = requests.post(f"{chain.sandbox.root_url}/wallet/broadcasttransaction",
                           json={"raw_data": {"contract": "nope"}}, timeout=10).json()
    assert "Error" in answer
