"""Building and signing with tronpy: sign weight, USDT's ABI, unsigned transactions as java-tron
builds them (``triggersmartcontract``, ``createtransaction``), txIDs tronpy computes offline."""

from __future__ import annotations

import pytest
from tronpy.exceptions import BadKey
from tronpy.keys import PrivateKey
from tronpy.proto import calculate_txid_from_raw_data
from tronpy.tron import Transaction

from support.chain import USDT, Chain, manual_chain
from tronenergy_protocol.address import random_address


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


def test_usdt_abi_lets_tronpy_build_a_transfer(chain: Chain):
    contract = chain.contract()
    assert contract.name == "TetherToken"
    assert str(contract.functions.transfer) == \
        "function transfer(address _to, uint256 _value) returns (bool )"
    _, owner = chain.account(usdt="5")
    assert contract.functions.balanceOf(owner) == 5_000_000
    assert contract.functions.decimals() == 6
    assert chain.node_post("getcontract", {"value": random_address(), "visible": True}) == {}


def test_sign_weight_gives_the_txid_tronpy_computes_offline(chain: Chain):
    key, owner = chain.account()
    online = chain.usdt(owner, random_address(), 1).build()
    assert online.txid == calculate_txid_from_raw_data(online._raw_data)
    weight = chain.tron.get_sign_weight(online)
    assert weight["permission"]["keys"] == [{"address": key.public_key.to_hex_address(),
                                             "weight": 1}]
    assert weight["result"] == {"code": "NOT_ENOUGH_PERMISSION"}
    online.sign(key)
    signed = chain.tron.get_sign_weight(online)
    assert signed["result"] == {} and signed["current_weight"] == 1  # ENOUGH_PERMISSION
    assert signed["approved_list"] == [key.public_key.to_hex_address()]


def test_tronpy_refuses_to_sign_with_a_key_outside_the_owners_permission(chain: Chain):
    _, owner = chain.account()
    with pytest.raises(BadKey):
        chain.usdt(owner, random_address(), 1).build().sign(PrivateKey.random())


def test_sign_weight_of_an_unknown_owner_is_a_permission_error(chain: Chain):
    stranger = random_address()
    txn = chain.trx(stranger, random_address(), 1).build(
        offline=True, ref_block_id=chain.tron.get_latest_solid_block_id())
    weight = chain.tron.get_sign_weight(txn)
    assert weight["result"] == {"code": "PERMISSION_ERROR", "message": "Account does not exist!"}
    assert "permission" not in weight
    assert weight["transaction"]["transaction"]["txID"] == txn.txid


def test_trigger_smart_contract_returns_the_unsigned_call(chain: Chain):
    key, owner = chain.account(usdt="1")
    to = random_address()
    parameter = chain.contract().functions.transfer._prepare_parameter(to, 7)
    answer = chain.node_post("triggersmartcontract", {
        "owner_address": owner, "contract_address": USDT, "visible": True,
        "function_selector": "transfer(address,uint256)", "parameter": parameter,
        "fee_limit": 20_000_000})
    assert answer["result"] == {"result": True}
    tx = answer["transaction"]
    raw = tx["raw_data"]
    head = chain.tron.get_latest_block()
    assert raw["ref_block_bytes"] == head["blockID"][12:16]
    assert raw["ref_block_hash"] == head["blockID"][16:32]
    assert raw["expiration"] == head["block_header"]["raw_data"]["timestamp"] + 60_000
    assert raw["fee_limit"] == 20_000_000
    value = raw["contract"][0]["parameter"]["value"]
    assert value == {"data": "a9059cbb" + parameter, "owner_address": owner,
                     "contract_address": USDT}
    assert tx["txID"] == calculate_txid_from_raw_data({
        **raw, "contract": [{**raw["contract"][0], "parameter": {
            **raw["contract"][0]["parameter"], "value": {
                **value, "owner_address": key.public_key.to_hex_address(),
                "contract_address": "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"}}}]})
    signed = Transaction.from_json({**tx, "permission": None, "signature": []}).sign(key)
    assert chain.raw_broadcast(signed, visible=True) == {"result": True, "txid": tx["txID"]}


def test_trigger_smart_contract_refuses_what_java_tron_refuses(chain: Chain):
    _, owner = chain.account()
    other = chain.node_post("triggersmartcontract", {
        "owner_address": owner, "contract_address": random_address(), "visible": True,
        "function_selector": "transfer(address,uint256)", "parameter": ""})
    assert other["result"]["code"] == "CONTRACT_VALIDATE_ERROR"
    assert other["result"]["message"] == "No contract or not a valid smart contract"  # visible
    missing = chain.node_post("triggersmartcontract", {"contract_address": USDT, "visible": True})
    assert missing["result"]["message"].endswith("owner_address isn't set.")


def test_create_transaction_builds_a_trx_transfer(chain: Chain):
    key, owner = chain.account(trx="10")
    to = random_address()
    tx = chain.node_post("createtransaction", {"owner_address": owner, "to_address": to,
                                            "amount": 1_000_000, "visible": True})
    assert tx["visible"] is True
    assert tx["raw_data"]["contract"][0]["parameter"]["value"] == {
        "amount": 1_000_000, "owner_address": owner, "to_address": to}
    assert len(tx["txID"]) == 64 and tx["raw_data_hex"]
    signed = Transaction.from_json({**tx, "permission": None, "signature": []}).sign(key)
    assert chain.raw_broadcast(signed, visible=True) == {"result": True, "txid": tx["txID"]}


@pytest.mark.parametrize(("amount", "to_self", "message"), [
    (0, False, "Amount must be greater than 0."),
    (1, True, "Cannot transfer TRX to yourself."),
    (10_000_000, False, "Validate TransferContract error, balance is not sufficient."),
])
def test_create_transaction_refuses_as_the_transfer_actuator(chain: Chain, amount: int,
                                                             to_self: bool, message: str):
    _, owner = chain.account(trx="10")
    answer = chain.node_post("createtransaction", {
        "owner_address": owner, "to_address": owner if to_self else random_address(),
        "amount": amount, "visible": True})
    assert answer == {"Error": "class org.tron.core.exception.ContractValidateException : "
                      + message}


def test_create_transaction_from_an_unactivated_owner(chain: Chain):
    answer = chain.node_post("createtransaction", {
        "owner_address": random_address(), "to_address": random_address(), "amount": 1,
        "visible": True})
    assert answer["Error"].endswith("Validate TransferContract error, no OwnerAccount.")
