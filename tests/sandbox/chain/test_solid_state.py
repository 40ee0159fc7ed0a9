"""The solidity API answers the state as of the solidified block (issue 37).

java-tron serves ``/walletsolidity`` from the solidified database
(``WalletOnSolidity.futureGet``: ``dbManager.setMode(false)``), so what the last 19
blocks moved shows on ``/wallet`` at once and on ``/walletsolidity`` only once its
block is solidified: an account's balance, USDT's ``balanceOf``, whether a recipient
already holds USDT (the energy a transfer to it is estimated at).
"""

from __future__ import annotations

from typing import Any

import pytest
from tronpy.keys import to_hex_address

from support.chain import USDT, Chain, manual_chain
from tronenergy_sandbox.chain.blocks import SOLIDIFY_BLOCKS


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


def _post(chain: Chain, path: str, body: dict[str, Any]) -> Any:
    import requests

    response = requests.post(f"{chain.sandbox.root_url}/{path}", json=body, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def _balance(chain: Chain, api: str, address: str) -> int:
    return int(_post(chain, f"{api}/getaccount",
                     {"address": address, "visible": True}).get("balance", 0))


def _usdt(chain: Chain, api: str, holder: str) -> int:
    answer = _post(chain, f"{api}/triggerconstantcontract", {
        "owner_address": holder, "contract_address": USDT, "visible": True,
        "function_selector": "balanceOf(address)",
        "parameter": to_hex_address(holder)[2:].rjust(64, "0")})
    return int(answer["constant_result"][0], 16)


def _estimate(chain: Chain, api: str, owner: str, to: str) -> int:
    answer = _post(chain, f"{api}/estimateenergy", {
        "owner_address": owner, "contract_address": USDT, "visible": True,
        "function_selector": "transfer(address,uint256)",
        "parameter": to_hex_address(to)[2:].rjust(64, "0") + f"{1:064x}"})
    return int(answer["energy_required"])


def test_a_trx_transfer_shows_on_the_solidity_api_once_its_block_is_solidified(chain: Chain):
    key, sender = chain.account(trx="50")
    _, receiver = chain.account(trx="1")
    chain.blocks(SOLIDIFY_BLOCKS)
    assert _balance(chain, "walletsolidity", receiver) == 1_000_000
    chain.sent(chain.expiring(chain.trx(sender, receiver, 2_000_000)), key)
    chain.blocks(1)  # packed and executed in the next block
    assert _balance(chain, "wallet", receiver) == 3_000_000
    assert _balance(chain, "walletsolidity", receiver) == 1_000_000
    assert _balance(chain, "walletsolidity", sender) == 50_000_000
    chain.blocks(SOLIDIFY_BLOCKS - 1)  # its block is one short of solidified
    assert _balance(chain, "walletsolidity", receiver) == 1_000_000
    chain.blocks(1)
    assert _balance(chain, "walletsolidity", receiver) == 3_000_000
    assert _balance(chain, "walletsolidity", sender) == _balance(chain, "wallet", sender)


def test_a_usdt_transfer_shows_in_balance_of_once_solidified(chain: Chain):
    key, sender = chain.account(trx="50", usdt="10")
    _, receiver = chain.account(trx="1", usdt="1")
    fresh = chain.account(trx="1")[1]
    chain.blocks(SOLIDIFY_BLOCKS)
    assert _usdt(chain, "walletsolidity", receiver) == 1_000_000
    first = _estimate(chain, "walletsolidity", sender, fresh)
    chain.sent(chain.expiring(chain.usdt(sender, receiver, 4_000_000)), key)
    chain.sent(chain.expiring(chain.usdt(sender, fresh, 1_000_000)), key)
    chain.blocks(1)
    assert _usdt(chain, "wallet", receiver) == 5_000_000
    assert _usdt(chain, "walletsolidity", receiver) == 1_000_000
    assert _usdt(chain, "walletsolidity", sender) == 10_000_000
    # The fresh address holds USDT at the head, not yet in the solidified state.
    assert _estimate(chain, "wallet", sender, fresh) < first
    assert _estimate(chain, "walletsolidity", sender, fresh) == first
    chain.blocks(SOLIDIFY_BLOCKS)
    assert _usdt(chain, "walletsolidity", receiver) == 5_000_000
    assert _usdt(chain, "walletsolidity", sender) == 5_000_000
    assert _estimate(chain, "walletsolidity", sender, fresh) == \
        _estimate(chain, "wallet", sender, fresh)


def test_an_account_created_in_the_tail_is_unknown_to_the_solidity_api(chain: Chain):
    _, owner = chain.account(trx="3")
    assert _post(chain, "wallet/getaccount", {"address": owner, "visible": True})
    assert _post(chain, "walletsolidity/getaccount", {"address": owner, "visible": True}) == {}
    chain.blocks(SOLIDIFY_BLOCKS)
    assert _balance(chain, "walletsolidity", owner) == 3_000_000


def test_undo_records_of_solidified_blocks_are_pruned(chain: Chain):
    for _ in range(3):
        chain.account(trx="1")
    world = chain.sandbox.state.world
    chain.blocks(SOLIDIFY_BLOCKS + 1)
    world.advance()
    (left,) = world.db.execute("SELECT COUNT(*) FROM chain_undo").fetchone()
    assert left == 0
