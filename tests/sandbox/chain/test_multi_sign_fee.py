"""The multi-sign fee on the sandbox chain, charged as java-tron charges it.

java-tron (commit 1e35f79a165424bbae319799d9aca92948b8f5c2): ``Manager.processTransaction``
calls ``consumeMultiSignFee`` right after the bandwidth and before the contract runs; a
transaction with more than one signature pays ``getMultiSignFee`` (1 TRX on mainnet,
``DynamicPropertiesStore``) once, whatever the number of signatures, from its owner's
balance; a balance short of it raises ``AccountResourceInsufficientException``, which
``Wallet.broadcastTransaction`` answers ``BANDWITH_ERROR`` / ``Account resource insufficient
error.``. The receipt has no field of its own for it: ``gettransactioninfobyid``'s ``fee``
adds it (``TransactionUtil.buildTransactionInfoInstance``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
from tronpy.keys import PrivateKey

from support.chain import Chain, manual_chain
from support.permissions import TRANSFER_ONLY, active, answer, permit, signed
from tronenergy_protocol.address import random_address

FEE = 1_000_000
"""Mainnet's ``getMultiSignFee``: 1 TRX."""


@pytest.fixture(scope="module")
def chain() -> Iterator[Chain]:
    with manual_chain() as chain:
        yield chain


def two_of_three(chain: Chain, trx: str, operations: str | None = None
                 ) -> tuple[str, list[PrivateKey]]:
    """A wallet whose active permission 2 needs two of three keys; energy and bandwidth
    staked, so a USDT transfer burns nothing for them."""
    cold, owner = chain.account(trx=trx, usdt="100", staked=1_000_000)
    chain.control.post(f"/addresses/{owner}/bandwidth", {"staked": 100_000})
    keys = [PrivateKey.random() for _ in range(3)]
    perm = active([(k, 1) for k in keys], threshold=2,
                  **({"operations": operations} if operations else {}))
    assert permit(chain.control, owner, [cold], [perm]).status_code == 200
    return owner, [cold, *keys]


def balance(chain: Chain, address: str) -> int:
    return int(chain.tron.get_account(address).get("balance", 0))


def test_the_chain_names_the_fee(chain: Chain):
    rows = chain.node_post("getchainparameters", {})["chainParameter"]
    assert {"key": "getMultiSignFee", "value": FEE} in rows


@pytest.mark.parametrize("signers, charged", [
    ([0], 0),           # the owner key alone, under the owner permission
    ([1, 2], FEE),      # two of the active's three keys
    ([1, 2, 3], FEE),   # all three: the fee is per transaction, not per signature
])
def test_a_transaction_with_more_than_one_signature_pays_the_fee(chain: Chain, signers, charged):
    """Failed before: the sandbox charged nothing for a second signature."""
    owner, keys = two_of_three(chain, trx="10")
    permission_id = 0 if signers == [0] else 2
    txn = signed(chain, chain.usdt(owner, random_address(), 5), [keys[i] for i in signers],
                 permission_id)
    assert answer(chain, txn) == ("SUCCESS", "")
    chain.blocks(1)
    info = chain.info(txn.txid)
    assert info["receipt"]["result"] == "SUCCESS"
    assert "energy_fee" not in info["receipt"] and "net_fee" not in info["receipt"]
    assert info.get("fee", 0) == charged  # the receipt's only trace of it
    assert balance(chain, owner) == 10_000_000 - charged
    assert "fee" not in chain.tron.get_transaction(txn.txid)["ret"][0]  # not a contract fee


def test_a_balance_short_of_the_fee_is_refused_as_java_tron_refuses_it(chain: Chain):
    """Failed before: accepted and executed, the fee never taken."""
    owner, keys = two_of_three(chain, trx="0.999999")
    txn = signed(chain, chain.usdt(owner, random_address(), 5), keys[1:3], 2)
    assert answer(chain, txn) == ("BANDWITH_ERROR", "Account resource insufficient error.")
    chain.blocks(1)
    assert chain.info(txn.txid) == {} and balance(chain, owner) == 999_999
    exact, keys = two_of_three(chain, trx="1")  # the whole balance pays it
    paid = signed(chain, chain.usdt(exact, random_address(), 5), keys[1:3], 2)
    assert answer(chain, paid) == ("SUCCESS", "")
    chain.blocks(1)
    assert chain.info(paid.txid)["fee"] == FEE and balance(chain, exact) == 0


def test_the_fee_leaves_the_balance_before_the_contract_runs(chain: Chain):
    """A TRX transfer of what is left after the fee is paid; a sun more is refused by
    ``TransferActuator.validate``, which sees the balance less the fee."""
    owner, keys = two_of_three(chain, trx="3", operations=TRANSFER_ONLY)
    to = chain.control.activated()
    over = signed(chain, chain.trx(owner, to, 2_000_001), keys[1:3], 2)
    assert answer(chain, over) == (
        "CONTRACT_VALIDATE_ERROR",
        "Contract validate error : Validate TransferContract error, balance is not sufficient.")
    whole = signed(chain, chain.trx(owner, to, 2_000_000), keys[1:3], 2)
    assert answer(chain, whole) == ("SUCCESS", "")
    chain.blocks(1)
    assert chain.info(whole.txid)["fee"] == FEE and balance(chain, owner) == 0


def test_the_fee_is_a_chain_parameter_a_proposal_changes():
    with manual_chain() as chain:
        changed = requests.post(f"{chain.sandbox.root_url}/sandbox/chain/parameters",
                                json={"getMultiSignFee": 2_500_000}, timeout=10)
        assert changed.status_code == 200, changed.text
        chain.blocks(1)
        rows = chain.node_post("getchainparameters", {})["chainParameter"]
        assert {"key": "getMultiSignFee", "value": 2_500_000} in rows
        owner, keys = two_of_three(chain, trx="10")
        txn = signed(chain, chain.usdt(owner, random_address(), 5), keys[1:3], 2)
        assert answer(chain, txn) == ("SUCCESS", "")
        chain.blocks(1)
        assert chain.info(txn.txid)["fee"] == 2_500_000
        assert balance(chain, owner) == 7_500_000
