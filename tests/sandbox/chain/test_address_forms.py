"""Both address forms on the node's routes, as java-tron parses them (issue 37).

java-tron's default is ``visible`` false: hex ``41...`` in and out; ``"visible": true``
(body, or ``?visible=true`` on a GET) is base58. The wrong form for the flag is
refused as java-tron refuses it (``JsonFormat``'s ``ParseException``), never read
leniently. GET and POST alike where java-tron's servlet serves both.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from tronpy.keys import to_hex_address

from support.chain import USDT, Chain, manual_chain
from tronenergy_protocol.address import random_address
from tronenergy_sandbox.chain.blocks import SOLIDIFY_BLOCKS

USDT_HEX = to_hex_address(USDT)


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


def _call(chain: Chain, path: str, body: dict[str, Any] | None = None, *,
          get: dict[str, Any] | None = None) -> Any:
    url = f"{chain.sandbox.root_url}/{path}"
    if get is not None:
        response = requests.get(url, params=get, timeout=10)
    else:
        response = requests.post(url, json=body, timeout=10)
    assert response.status_code == 200, (path, response.status_code, response.text)
    return response.json()


def test_a_hex_account_read_answers_in_hex(chain: Chain):
    _, owner = chain.account(trx="12")
    answer = _call(chain, "wallet/getaccount", {"address": to_hex_address(owner)})
    assert answer["address"] == to_hex_address(owner)
    assert answer["balance"] == 12_000_000
    seen = _call(chain, "wallet/getaccount", {"address": owner, "visible": True})
    assert seen["address"] == owner and seen["balance"] == 12_000_000


def test_the_wrong_form_is_refused_as_java_tron_refuses_it(chain: Chain):
    _, owner = chain.account()
    base58_as_hex = _call(chain, "wallet/getaccount", {"address": owner})
    assert "INVALID hex String" in base58_as_hex["Error"]
    assert base58_as_hex["Error"].startswith(
        "class org.tron.core.services.http.JsonFormat$ParseException : 1:")
    hex_as_base58 = _call(chain, "wallet/getaccount", {"address": USDT_HEX, "visible": True})
    assert hex_as_base58["Error"].endswith("INVALID base58 String, Illegal character 0 at 8")
    # Hex without a 0 passes Base58's alphabet and fails its checksum: java-tron's null.
    no_zero = _call(chain, "wallet/getaccount", {"address": "41" + "ab" * 20, "visible": True})
    assert no_zero == {"Error": "class java.lang.NullPointerException : null"}
    # A hex string that is no account is an account the chain does not know.
    assert _call(chain, "wallet/getaccount", {"address": "41" + "00" * 5}) == {}


def test_a_get_account_read_in_either_form(chain: Chain):
    _, owner = chain.account(trx="3")
    hexed = _call(chain, "wallet/getaccount", get={"address": to_hex_address(owner)})
    assert hexed["address"] == to_hex_address(owner) and hexed["balance"] == 3_000_000
    shown = _call(chain, "wallet/getaccount", get={"address": owner, "visible": "true"})
    assert shown["address"] == owner
    resource = _call(chain, "wallet/getaccountresource", get={"address": to_hex_address(owner)})
    assert resource["freeNetLimit"] == 600


def test_the_solidity_account_read(chain: Chain):
    _, owner = chain.account(trx="7")
    chain.blocks(SOLIDIFY_BLOCKS)  # the solidity API answers the solidified state
    answer = _call(chain, "walletsolidity/getaccount", {"address": to_hex_address(owner)})
    assert answer["address"] == to_hex_address(owner) and answer["balance"] == 7_000_000
    assert _call(chain, "walletsolidity/getaccount", {"address": owner, "visible": True}
                 )["address"] == owner


def test_resources_in_hex(chain: Chain):
    _, owner = chain.account()
    answer = _call(chain, "wallet/getaccountresource", {"address": to_hex_address(owner)})
    assert answer["freeNetLimit"] == 600
    wrong = _call(chain, "wallet/getaccountresource", {"address": owner})
    assert "Error" in wrong


def test_a_hex_constant_call_and_estimate(chain: Chain):
    _, owner = chain.account(usdt="4")
    chain.blocks(SOLIDIFY_BLOCKS)
    word = to_hex_address(owner)[2:].rjust(64, "0")
    answer = _call(chain, "wallet/triggerconstantcontract", {
        "owner_address": to_hex_address(owner), "contract_address": USDT_HEX,
        "function_selector": "balanceOf(address)", "parameter": word})
    assert answer["result"] == {"result": True}
    assert int(answer["constant_result"][0], 16) == 4_000_000
    assert answer["transaction"]["raw_data"]["contract"][0]["parameter"]["value"][
        "owner_address"] == to_hex_address(owner)
    to = to_hex_address(random_address())[2:].rjust(64, "0")
    estimate = _call(chain, "wallet/estimateenergy", {
        "owner_address": to_hex_address(owner), "contract_address": USDT_HEX,
        "function_selector": "transfer(address,uint256)", "parameter": to + f"{1:064x}"})
    assert estimate["energy_required"] > 0
    solid = _call(chain, "walletsolidity/triggerconstantcontract", {
        "owner_address": owner, "contract_address": USDT, "visible": True,
        "function_selector": "balanceOf(address)", "parameter": word})
    assert int(solid["constant_result"][0], 16) == 4_000_000
    wrong = _call(chain, "wallet/triggerconstantcontract", {
        "owner_address": owner, "contract_address": USDT,
        "function_selector": "balanceOf(address)", "parameter": word})
    assert wrong["result"]["code"] == "OTHER_ERROR"
    assert "INVALID hex String" in bytes.fromhex(wrong["result"]["message"]).decode()


def test_get_contract_by_get_and_post_in_either_form(chain: Chain):
    by_get = _call(chain, "wallet/getcontract", get={"value": USDT_HEX})
    assert by_get["contract_address"] == USDT_HEX and by_get["name"] == "TetherToken"
    visible = _call(chain, "wallet/getcontract", get={"value": USDT, "visible": "true"})
    assert visible["contract_address"] == USDT
    assert _call(chain, "wallet/getcontract", {"value": USDT_HEX})["contract_address"] == USDT_HEX


def test_get_block_latest_by_number_and_by_id(chain: Chain):
    head = _call(chain, "wallet/getblock", {})
    number = head["block_header"]["raw_data"]["number"]
    assert head["block_header"]["raw_data"]["witness_address"].startswith("41")
    by_number = _call(chain, "wallet/getblock", get={"id_or_num": str(number), "detail": "true"})
    assert by_number["blockID"] == head["blockID"]
    by_id = _call(chain, "wallet/getblock", {"id_or_num": head["blockID"], "visible": True})
    assert by_id["block_header"]["raw_data"]["witness_address"].startswith("T")
    solid = _call(chain, "walletsolidity/getblock", {})
    assert solid["block_header"]["raw_data"]["number"] <= number


def test_a_hex_built_trx_transfer_and_its_receipt_in_hex(chain: Chain):
    key, owner = chain.account(trx="10")
    to = random_address()
    unsigned = _call(chain, "wallet/createtransaction", {
        "owner_address": to_hex_address(owner), "to_address": to_hex_address(to),
        "amount": 1_000_000})
    assert unsigned["visible"] is False
    value = unsigned["raw_data"]["contract"][0]["parameter"]["value"]
    assert value["to_address"] == to_hex_address(to)
    from tronpy.tron import Transaction
    signed = Transaction.from_json({**unsigned, "permission": None, "signature": []}).sign(key)
    sent = _call(chain, "wallet/broadcasttransaction", {**signed.to_json(), "visible": False})
    assert sent["result"] is True
    chain.blocks(1)
    shown = _call(chain, "wallet/gettransactionbyid", get={"value": sent["txid"]})
    assert shown["raw_data"]["contract"][0]["parameter"]["value"]["owner_address"] == \
        to_hex_address(owner)
    again = _call(chain, "wallet/broadcasttransaction", signed.to_json())
    assert again["code"] == "DUP_TRANSACTION_ERROR"


def test_a_usdt_receipt_log_in_both_forms(chain: Chain):
    key, owner = chain.account(usdt="2")
    txid = chain.sent(chain.expiring(chain.usdt(owner, random_address(), 1)), key)
    chain.blocks(1)
    hexed = _call(chain, "wallet/gettransactioninfobyid", get={"value": txid})
    assert hexed["contract_address"] == USDT_HEX
    assert hexed["log"][0]["address"] == USDT_HEX[2:]
    shown = _call(chain, "wallet/gettransactioninfobyid", {"value": txid, "visible": True})
    assert shown["contract_address"] == USDT
