"""Account permissions on the sandbox chain, refused as java-tron refuses them.

A hot wallet as docs/payouts.md sets it up: the owner key offline, an ``active``
permission (id 2) holding the payout key and allowing only TriggerSmartContract (a
USDT transfer), so the payout key can neither send TRX nor sign as the owner. Every
refusal is java-tron's code and message (``TransactionCapsule.validateSignature`` and
``checkWeight``; ``TransactionUtil.getTransactionSignWeight``;
``AccountPermissionUpdateActuator``), read from the broadcast's answer.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from tronpy.keys import PrivateKey
from tronpy.tron import Transaction

from support.chain import Chain, manual_chain
from support.permissions import TRIGGER_ONLY, active, addr, permit
from tronenergy_protocol.address import random_address


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


def signed(chain: Chain, builder: Any, keys: list[PrivateKey], permission_id: int) -> Transaction:
    """Built under ``permission_id`` and signed by ``keys`` as given (no check). Built online:
    the txID is the node's (tronpy's offline txID leaves ``Permission_id`` out of the hash)."""
    txn = chain.expiring(builder.permission_id(permission_id)).build()
    txn.set_signature([k.sign_msg_hash(bytes.fromhex(txn.txid)).hex() for k in keys])
    return txn


@pytest.fixture
def wallet(chain: Chain):
    """A funded hot wallet whose owner key is offline and whose active 2 is the payout key."""
    cold, owner = chain.account(trx="100", usdt="100")
    payout = PrivateKey.random()
    answer = permit(chain.control, owner, [cold], [active([(payout, 1)])])
    assert answer.status_code == 200, answer.text
    return cold, owner, payout


def refusal(chain: Chain, txn: Transaction) -> tuple[str, str]:
    answer = chain.raw_broadcast(txn)
    return answer.get("code", "SUCCESS"), answer.get("message", "")


def test_an_account_shows_java_trons_default_permissions(chain: Chain):
    key, owner = chain.account()
    account = chain.tron.get_account(owner)
    assert account["owner_permission"] == {
        "permission_name": "owner", "threshold": 1, "keys": [{"address": owner, "weight": 1}]}
    [default] = account["active_permission"]
    assert default["id"] == 2 and default["type"] == "Active" and default["threshold"] == 1
    assert default["operations"] == "7fff1fc0033e0300" + "00" * 24  # java-tron's default
    txn = signed(chain, chain.usdt(owner, random_address(), 1), [key], 2)
    assert refusal(chain, txn) == ("SUCCESS", "")  # the default active allows it


def test_the_payout_key_pays_usdt_under_its_active_permission(chain: Chain, wallet):
    _, owner, payout = wallet
    to = random_address()
    txn = signed(chain, chain.usdt(owner, to, 5), [payout], 2)
    assert refusal(chain, txn) == ("SUCCESS", "")
    chain.blocks(1)
    [done] = [t for t in chain.transactions(owner=owner) if t["txid"] == txn.txid]
    assert done["receipt"]["receipt"]["result"] == "SUCCESS"
    weight = chain.tron.get_sign_weight(txn)
    assert weight["result"] == {} and weight["current_weight"] == 1
    assert weight["permission"]["id"] == 2 and weight["permission"]["operations"] == TRIGGER_ONLY
    assert weight["approved_list"] == [payout.public_key.to_hex_address()]


def test_the_payout_key_cannot_send_trx(chain: Chain, wallet):
    _, owner, payout = wallet
    txn = signed(chain, chain.trx(owner, random_address(), 1_000_000), [payout], 2)
    assert refusal(chain, txn) == ("SIGERROR", "Validate signature error: Permission denied")
    weight = chain.tron.get_sign_weight(txn)
    assert weight["result"] == {"code": "PERMISSION_ERROR", "message": "Permission denied!"}


def test_the_payout_key_cannot_sign_as_the_owner(chain: Chain, wallet):
    _, owner, payout = wallet
    txn = signed(chain, chain.usdt(owner, random_address(), 1), [payout], 0)
    code, message = refusal(chain, txn)
    assert code == "SIGERROR" and message == (
        f"Validate signature error: {txn._signature[0]} is signed by {addr(payout)} but it "
        "is not contained of permission.")


def test_the_old_owner_key_of_a_wallet_is_outside_its_active_permission(chain: Chain, wallet):
    cold, owner, _ = wallet
    stranger = PrivateKey.random()
    txn = signed(chain, chain.usdt(owner, random_address(), 1), [stranger], 2)
    assert refusal(chain, txn)[1].endswith(
        f"is signed by {addr(stranger)} but it is not contained of permission.")
    by_owner = signed(chain, chain.usdt(owner, random_address(), 1), [cold], 0)
    assert refusal(chain, by_owner) == ("SUCCESS", "")  # the owner key still can


def test_a_permission_that_does_not_exist(chain: Chain, wallet):
    _, owner, payout = wallet
    txn = signed(chain, chain.usdt(owner, random_address(), 1), [payout], 3)
    assert refusal(chain, txn) == ("SIGERROR", "Validate signature error: permission isn't exit")
    assert chain.tron.get_sign_weight(txn)["result"] == {
        "code": "PERMISSION_ERROR", "message": "Permission for this, does not exist!"}


def test_two_of_three_needs_two_signatures(chain: Chain):
    cold, owner = chain.account(trx="100", usdt="100")
    a, b, c = PrivateKey.random(), PrivateKey.random(), PrivateKey.random()
    assert permit(chain.control, owner, [cold], [active([(a, 1), (b, 1), (c, 1)], threshold=2)]
                  ).status_code == 200
    one = signed(chain, chain.usdt(owner, random_address(), 1), [a], 2)
    assert refusal(chain, one) == ("SIGERROR", "Validate signature error: sig error")
    weight = chain.tron.get_sign_weight(one)
    assert weight["result"] == {"code": "NOT_ENOUGH_PERMISSION"}
    assert weight["current_weight"] == 1
    twice = signed(chain, chain.usdt(owner, random_address(), 1), [a, a], 2)
    assert refusal(chain, twice) == ("SIGERROR", f"Validate signature error: {addr(a)} has "
                                                 "signed twice!")
    four = signed(chain, chain.usdt(owner, random_address(), 1), [a, b, c, cold], 2)
    assert refusal(chain, four) == ("SIGERROR", "Validate signature error: Signature count "
                                                "is 4 more than key counts of permission : 3")
    two = signed(chain, chain.usdt(owner, random_address(), 1), [a, c], 2)
    assert chain.tron.get_sign_weight(two)["current_weight"] == 2
    approved = requests.post(f"{chain.sandbox.root_url}/wallet/getapprovedlist",
                             json={**two.to_json(), "visible": True}, timeout=10).json()
    assert approved["approved_list"] == [addr(a), addr(c)]
    assert refusal(chain, two) == ("SUCCESS", "")


@pytest.mark.parametrize("owner_keys, actives, message", [
    (1, [], "active permission is missed"),
    (1, [{"type": "Active", "threshold": 3, "operations": TRIGGER_ONLY,
          "keys": [{"address": "KEY", "weight": 1}]}],
     "sum of all key's weight should not be less than threshold in permission Active"),
    (1, [{"type": "Active", "threshold": 1, "operations": TRIGGER_ONLY,
          "keys": [{"address": "KEY", "weight": 1}, {"address": "KEY", "weight": 1}]}],
     "address should be distinct in permission Active"),
    (1, [{"type": "Active", "threshold": 1, "operations": "00" * 31,
          "keys": [{"address": "KEY", "weight": 1}]}], "operations size must 32"),
    (1, [{"type": "Active", "threshold": 1, "operations": (1 << 200).to_bytes(32, "little").hex(),
          "keys": [{"address": "KEY", "weight": 1}]}], "200 isn't a validate ContractType"),
    (1, [{"type": "Active", "threshold": 0, "operations": TRIGGER_ONLY,
          "keys": [{"address": "KEY", "weight": 1}]}],
     "permission's threshold should be greater than 0"),
    (6, [{"type": "Active", "threshold": 1, "operations": TRIGGER_ONLY,
          "keys": [{"address": "KEY", "weight": 1}]}],
     "number of keys in permission should not be greater than 5"),
])
def test_an_update_java_tron_refuses_changes_nothing(chain: Chain, owner_keys, actives, message):
    _, owner = chain.account()
    payout = addr(PrivateKey.random())
    for permission in actives:
        for entry in permission["keys"]:
            entry["address"] = payout
    answer = permit(chain.control, owner, [PrivateKey.random() for _ in range(owner_keys)], actives)
    assert answer.status_code == 400 and message in answer.text
    assert chain.tron.get_account(owner)["owner_permission"]["keys"] == [
        {"address": owner, "weight": 1}]
