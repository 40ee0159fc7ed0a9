"""The pending pool: a transaction accepted and not yet in a block (issue 37).

java-tron keeps accepted transactions in its pending list and checks each new one
in a session holding their effects (``Manager.pushTransaction``), so a spend still
waiting for its block counts at broadcast; ``gettransactionfrompending``,
``gettransactionlistfrompending`` and ``getpendingsize`` read the list.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from tronpy.exceptions import ValidationError
from tronpy.keys import to_hex_address

from support.chain import Chain, manual_chain
from tronenergy_protocol.address import random_address


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


def test_a_pending_transaction_is_known_until_its_block(chain: Chain):
    key, owner = chain.account(trx="10")
    txid = chain.sent(chain.trx(owner, random_address(), 1_000_000), key)
    pending = chain.node_post("gettransactionfrompending", {"value": txid})
    assert pending["txID"] == txid and "ret" not in pending
    assert pending["raw_data"]["contract"][0]["parameter"]["value"]["owner_address"] == \
        to_hex_address(owner)  # java-tron's default form
    assert chain.node_post("getpendingsize", {}) == {"pendingSize": 1}
    assert chain.node_post("gettransactionlistfrompending", {}) == {"txId": [txid]}
    assert chain.node_post("gettransactionbyid", {"value": txid}) == {}
    chain.blocks(1)
    assert chain.node_post("gettransactionfrompending", {"value": txid}) == {}
    assert chain.node_post("getpendingsize", {}) == {"pendingSize": 0}
    assert chain.node_post("gettransactionbyid", {"value": txid})["txID"] == txid


def test_a_transfer_whose_balance_a_pending_one_empties_is_refused(chain: Chain):
    key, owner = chain.account(trx="10")
    _, payee = chain.account(trx="1")
    first = chain.sent(chain.trx(owner, payee, 6_000_000), key)
    # 10 TRX now: the second passes against the accounts as they stand, not the pending state.
    second = chain.trx(owner, payee, 6_000_000).build().sign(key)
    with pytest.raises(ValidationError, match="balance is not sufficient"):
        second.broadcast()
    chain.blocks(1)
    assert chain.info(first)["receipt"]["net_usage"] > 0
    assert [t["txid"] for t in chain.transactions(owner=owner, status="dropped")] == []
    assert chain.wallet(owner)["trx_sun"] == 4_000_000


def test_a_pending_transfer_in_funds_the_next(chain: Chain):
    key, owner = chain.account(trx="10")
    key_b, second_owner = chain.account(trx="1")
    _, payee = chain.account(trx="1")
    chain.sent(chain.trx(owner, second_owner, 5_000_000), key)
    # java-tron's pending session holds the incoming 5 TRX: the spend passes its check.
    spent = chain.sent(chain.trx(second_owner, payee, 5_500_000), key_b)
    chain.blocks(1)
    assert chain.info(spent)["blockNumber"] == chain.head()
    assert chain.tron.get_account_balance(second_owner) == Decimal("0.5")

