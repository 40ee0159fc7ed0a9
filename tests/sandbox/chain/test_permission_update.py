"""AccountPermissionUpdateContract on the sandbox chain: built, signed, broadcast, executed.

A hot wallet made as docs/payouts.md says, through a real signed transaction: its
owner signs an update (tronpy's ``trx.account_permission_update``, or the node's
``/wallet/accountpermissionupdate`` in either address form) giving a KMS-like payout
key an active permission limited to TriggerSmartContract. Executed in its block, for
the chain's ``getUpdateAccountPermissionFee``, the new permissions govern every
signature: the payout key's TRX transfer is refused as java-tron refuses it, its USDT
transfer under permission 2 is executed. Every refusal is java-tron's code and
message (``AccountPermissionUpdateActuator`` at commit
029e709e537363e24f574e5dc92b6ec3392b6c8a; ``Wallet.broadcastTransaction``).
"""

from __future__ import annotations

from typing import Any

import pytest
from tronpy.keys import PrivateKey, to_hex_address
from tronpy.tron import Transaction

from support.chain import Chain, manual_chain
from support.permissions import TRANSFER_ONLY, TRIGGER_ONLY, addr, answer, signed
from tronenergy_protocol.address import random_address

FEE = 100_000_000
"""100 TRX: mainnet's ``getUpdateAccountPermissionFee`` (spec/chain-facts.md)."""
VALIDATE = "class org.tron.core.exception.ContractValidateException : "


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


def hot_wallet(owner_key: PrivateKey, payout: PrivateKey | str,
               operations: str = TRIGGER_ONLY) -> dict[str, Any]:
    """tronpy's ``perm``: the owner key kept, one active permission for the payout key."""
    return {"owner": {"permission_name": "owner", "threshold": 1,
                      "keys": [{"address": addr(owner_key), "weight": 1}]},
            "actives": [{"type": "Active", "permission_name": "payouts", "threshold": 1,
                         "operations": operations,
                         "keys": [{"address": addr(payout), "weight": 1}]}],
            "witness": None}  # as tronpy's get_account_permission gives it


def update(chain: Chain, owner: str, perm: dict[str, Any]) -> Transaction:
    """The update built by tronpy (online: the node's txID through getsignweight)."""
    return chain.expiring(chain.tron.trx.account_permission_update(owner, perm)).build()


def test_the_chain_names_the_fee(chain: Chain):
    rows = chain.node_post("getchainparameters", {})["chainParameter"]
    assert {"key": "getUpdateAccountPermissionFee", "value": FEE} in rows


def test_an_owner_bounds_a_payout_key_through_a_signed_update(chain: Chain):
    key, owner = chain.account(trx="150", usdt="100")
    payout = PrivateKey.random()  # a KMS key's address in production: only its address here
    txn = update(chain, owner, hot_wallet(key, payout)).sign(key)
    assert answer(chain, txn) == ("SUCCESS", "")
    chain.blocks(1)
    info = chain.info(txn.txid)
    assert info["fee"] == FEE  # the update's bytes came from free bandwidth
    assert "contract_address" not in info and info["receipt"]["net_usage"] > 0
    [listed] = [t for t in chain.transactions(owner=owner) if t["txid"] == txn.txid]
    assert listed["status"] == "executed"
    shown = chain.tron.get_transaction(txn.txid)
    assert shown["ret"] == [{"contractRet": "SUCCESS", "fee": FEE}]
    assert shown["raw_data"]["contract"][0]["type"] == "AccountPermissionUpdateContract"
    account = chain.tron.get_account(owner)
    assert account["balance"] == 50_000_000  # 150 TRX less the fee, exactly
    assert account["owner_permission"]["keys"] == [{"address": owner, "weight": 1}]
    assert account["active_permission"] == [{
        "type": "Active", "id": 2, "permission_name": "payouts", "threshold": 1,
        "operations": TRIGGER_ONLY, "keys": [{"address": addr(payout), "weight": 1}]}]

    # The new permissions govern signatures from the block on.
    trx = signed(chain, chain.trx(owner, random_address(), 1_000_000), [payout], 2)
    assert answer(chain, trx) == ("SIGERROR", "Validate signature error: Permission denied")
    as_owner = signed(chain, chain.usdt(owner, random_address(), 1), [payout], 0)
    assert answer(chain, as_owner)[1].endswith(
        f"is signed by {addr(payout)} but it is not contained of permission.")
    usdt = signed(chain, chain.usdt(owner, random_address(), 5), [payout], 2)
    assert answer(chain, usdt) == ("SUCCESS", "")
    chain.blocks(1)
    assert chain.info(usdt.txid)["receipt"]["result"] == "SUCCESS"


def test_the_payout_key_cannot_change_permissions_under_a_contract_call_permission(
        chain: Chain):
    key, owner = chain.account(trx="300", usdt="1")
    payout = PrivateKey.random()
    assert answer(chain, update(chain, owner, hot_wallet(key, payout)).sign(key))[0] == "SUCCESS"
    chain.blocks(1)
    builder = chain.tron.trx.account_permission_update(owner, hot_wallet(payout, payout))
    grab = signed(chain, builder, [payout], 2)
    assert answer(chain, grab) == ("SIGERROR", "Validate signature error: Permission denied")
    grab_as_owner = signed(chain, chain.tron.trx.account_permission_update(
        owner, hot_wallet(payout, payout)), [payout], 0)
    assert "is not contained of permission." in answer(chain, grab_as_owner)[1]
    assert chain.tron.get_account(owner)["owner_permission"]["keys"] == [
        {"address": owner, "weight": 1}]


@pytest.mark.parametrize("visible", [True, False])
def test_the_node_builds_an_update_in_either_address_form(chain: Chain, visible: bool):
    key, owner = chain.account(trx="101")
    payout = PrivateKey.random()
    form = (lambda a: a) if visible else to_hex_address
    body = hot_wallet(key, payout)
    del body["witness"]
    for permission in (body["owner"], *body["actives"]):
        for entry in permission["keys"]:
            entry["address"] = form(entry["address"])
    built = chain.node_post("accountpermissionupdate",
                            {"owner_address": form(owner), **body, "visible": visible})
    assert built["visible"] is visible
    value = built["raw_data"]["contract"][0]["parameter"]["value"]
    assert value["owner_address"] == form(owner)
    assert value["actives"][0]["keys"] == [{"address": form(addr(payout)), "weight": 1}]
    assert value["actives"][0]["operations"] == TRIGGER_ONLY
    txn = Transaction.from_json({**built, "permission": None, "signature": []})
    txn.sign(key)
    got = chain.raw_broadcast(txn, visible=visible)
    assert got.get("result") is True, got
    chain.blocks(1)
    assert chain.tron.get_account(owner)["active_permission"][0]["keys"] == [
        {"address": addr(payout), "weight": 1}]
    assert chain.tron.get_account(owner)["balance"] == 1_000_000


def test_the_node_sets_permission_id_on_an_update_it_builds(chain: Chain):
    _, owner = chain.account()
    body = {"owner_address": owner, **hot_wallet(PrivateKey.random(), PrivateKey.random()),
            "Permission_id": 2, "visible": True}
    del body["witness"]
    built = chain.node_post("accountpermissionupdate", body)
    assert built["raw_data"]["contract"][0]["Permission_id"] == 2


@pytest.mark.parametrize("change, message", [
    (lambda b: b.update(witness=b["owner"]), "account isn't witness can't set witness permission"),
    (lambda b: b.pop("owner"), "owner permission is missed"),
    (lambda b: b["actives"][0].pop("type"), "active permission type is error"),
    (lambda b: b["owner"].update(type="Active"), "owner permission type is error"),
    (lambda b: b["actives"][0].update(operations="00" * 31), "operations size must 32"),
    (lambda b: b["owner"].update(operations=TRIGGER_ONLY), "Owner permission needn't operations"),
    (lambda b: b["actives"][0]["keys"][0].update(weight=0),
     "key's weight should be greater than 0"),
    (lambda b: b["actives"][0].update(parent_id=2), "permission's parent should be owner"),
    (lambda b: b["actives"][0].update(permission_name="x" * 33), "permission's name is too long"),
    (lambda b: b.update(actives=b["actives"] * 9), "active permission is too many"),
])
def test_the_node_refuses_to_build_what_the_actuator_refuses(chain: Chain, change, message):
    key, owner = chain.account()
    body = {"owner_address": owner, **hot_wallet(key, PrivateKey.random()), "visible": True}
    del body["witness"]
    change(body)
    assert chain.node_post("accountpermissionupdate", body) == {"Error": VALIDATE + message}


def test_an_account_that_does_not_exist_cannot_be_updated(chain: Chain):
    body = {"owner_address": random_address(), "visible": True,
            **hot_wallet(PrivateKey.random(), PrivateKey.random())}
    del body["witness"]
    assert chain.node_post("accountpermissionupdate", body) == {
        "Error": VALIDATE + "ownerAddress account does not exist"}


def test_an_update_without_the_fee_is_refused_at_broadcast(chain: Chain):
    key, owner = chain.account(trx="99")
    txn = update(chain, owner, hot_wallet(key, PrivateKey.random())).sign(key)
    code, message = answer(chain, txn)
    assert code == "CONTRACT_EXE_ERROR"
    assert message == (f"Contract execute error : {to_hex_address(owner)} insufficient balance, "
                       f"balance: 99000000, amount: {FEE}")


def test_an_update_built_offline_that_the_actuator_refuses_is_refused_at_broadcast(
        chain: Chain):
    key, owner = chain.account(trx="200")
    perm = hot_wallet(key, PrivateKey.random(), operations=TRANSFER_ONLY)
    perm["actives"][0]["threshold"] = 2
    txn = update(chain, owner, perm).sign(key)
    assert answer(chain, txn) == (
        "CONTRACT_VALIDATE_ERROR", "Contract validate error : sum of all key's weight should "
        "not be less than threshold in permission Active")


def test_an_update_signed_by_a_stranger_is_refused(chain: Chain):
    _, owner = chain.account(trx="200")
    stranger = PrivateKey.random()
    txn = update(chain, owner, hot_wallet(stranger, stranger))
    txn.set_signature([stranger.sign_msg_hash(bytes.fromhex(txn.txid)).hex()])
    code, message = answer(chain, txn)
    assert code == "SIGERROR" and message.endswith(
        f"is signed by {addr(stranger)} but it is not contained of permission.")
    chain.blocks(1)
    assert chain.tron.get_account(owner)["balance"] == 200_000_000
