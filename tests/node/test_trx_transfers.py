"""TRX transfers through the node room against the sandbox chain over real HTTP: built and
signed offline (txID known before broadcast), costed from the chain's figures by java-tron's
rules, and proven against their block. The cost predicted before sending equals, to the sun,
what the chain charged: to holders and to new accounts, with and without staked bandwidth,
signed by one key and by two."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from tronpy.keys import PrivateKey
from tronpy.proto.transaction import calculate_txid_from_raw_data

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.models import TransactionInfo
from airflow_provider_tronenergy.node.transactions import (
    RefBlock,
    UnsignedTransfer,
    trx_transfer_bandwidth,
    trx_transfer_contract,
)
from airflow_provider_tronenergy.node.trx_costs import (
    Bandwidth,
    TrxFees,
    TrxTransferCost,
    plan_trx_transfers,
    trx_transfer_cost,
)
from support.chain import USDT, Chain, manual_chain, signed_by, trx_transfer
from support.permissions import TRANSFER_ONLY, active, permit
from tronenergy_protocol.address import random_address


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


@pytest.fixture(scope="module")
def node(chain):
    with TronNodeClient(chain.sandbox.root_url, usdt_contract=USDT) as client:
        yield client


def build(node: TronNodeClient, owner: str, to: str, amount_sun: int,
          permission_id: int = 0) -> UnsignedTransfer:
    return trx_transfer(node, owner, to, amount_sun, permission_id)


def sign(tx: UnsignedTransfer, *keys: PrivateKey) -> dict:
    return signed_by(tx, *keys)


@dataclass(frozen=True)
class Sent:
    tx: UnsignedTransfer
    predicted: TrxTransferCost
    info: TransactionInfo
    spent_sun: int


def send(chain: Chain, node: TronNodeClient, owner: str, to: str, amount_sun: int,
         *keys: PrivateKey, permission_id: int = 0) -> Sent:
    """Read the figures, predict, sign, broadcast, produce the block; what the chain did."""
    tx = build(node, owner, to, amount_sun, permission_id)
    predicted, _ = trx_transfer_cost(
        tx.bandwidth(len(keys)), recipient_exists=node.get_account(to).activated,
        bandwidth=Bandwidth.of(node.get_resources(owner)), fees=node.get_trx_fees(),
        signatures=len(keys))
    before = node.get_account(owner).trx_sun
    answer = node.broadcast(sign(tx, *keys))
    assert answer.accepted, answer.describe()
    chain.blocks(1)
    info = node.get_transaction_info(tx.txid)
    assert info is not None and info.succeeded
    return Sent(tx, predicted, info, before - node.get_account(owner).trx_sun)


def charged(sent: Sent) -> tuple[int, int, int]:
    return sent.info.fee, sent.info.net_fee, sent.info.net_usage


def assert_predicted(sent: Sent, amount_sun: int) -> None:
    cost = sent.predicted
    assert charged(sent) == (cost.fee_sun, cost.bandwidth_fee_sun, cost.net_usage)
    assert sent.spent_sun == cost.spent_sun(amount_sun)


def test_a_transfer_built_offline_is_the_one_the_chain_executes(chain, node):
    key, owner = chain.account(trx="10")
    _, holder = chain.account(trx="1")
    tx = build(node, owner, holder, 1_234_567)
    signed = sign(tx, key)
    assert signed["txID"] == tx.txid  # known before broadcast: the journal records it first
    assert node.broadcast(signed).accepted
    again = node.broadcast(signed)  # the same bytes again: the chain takes a txID once
    assert again.accepted and again.code == "DUP_TRANSACTION_ERROR"
    chain.blocks(1)
    printed = chain.tron.provider.make_request("wallet/gettransactionbyid", {"value": tx.txid})
    assert calculate_txid_from_raw_data(printed["raw_data"]) == tx.txid  # tronpy's own hash
    assert printed["raw_data"]["contract"][0]["type"] == "TransferContract"
    assert "fee_limit" not in printed["raw_data"]
    assert chain.wallet(holder)["trx_sun"] == 2_234_567
    info = node.get_transaction_info(tx.txid)
    proof = node.prove_trx_payment(tx.txid, block_number=info.block_number, owner=owner,
                                   to=holder, amount_sun=1_234_567, signatures=1)
    assert proof is not None and proof.proven, proof
    assert proof.entry.transfer.units == 1_234_567 and proof.entry.ret_fee_sun == 0


def test_the_chains_figures_are_read_not_assumed(chain, node):
    assert node.get_trx_fees() == TrxFees(
        transaction_fee=1_000, create_account_fee=100_000,
        create_new_account_fee_in_system_contract=1_000_000,
        create_new_account_bandwidth_rate=1, multi_sign_fee=1_000_000)
    chain.control.post("/chain/parameters", {"getCreateNewAccountFeeInSystemContract": 700_000,
                                             "getCreateNewAccountBandwidthRate": 3})
    try:
        chain.blocks(1)
        fees = node.get_trx_fees()
        assert (fees.create_new_account_fee_in_system_contract,
                fees.create_new_account_bandwidth_rate) == (700_000, 3)
        # A new account takes 3 x its bytes of staked bandwidth, or burns the creation fee.
        key, owner = chain.account(trx="10")
        size = build(node, owner, random_address(), 1_000_000).bandwidth()
        chain.control.post(f"/addresses/{owner}/bandwidth", {"staked": 3 * size - 1})
        burned = send(chain, node, owner, random_address(), 1_000_000, key)
        assert burned.predicted.bandwidth_fee_sun == 100_000
        assert_predicted(burned, 1_000_000)
        chain.control.post(f"/addresses/{owner}/bandwidth", {"staked": 3 * size + 500,
                                                             "used": 0})
        staked = send(chain, node, owner, random_address(), 1_000_000, key)
        assert staked.predicted.staked_bandwidth == 3 * size
        assert_predicted(staked, 1_000_000)
    finally:
        chain.control.post("/chain/parameters", {
            "getCreateNewAccountFeeInSystemContract": 1_000_000,
            "getCreateNewAccountBandwidthRate": 1})
        chain.blocks(1)
    assert not node.get_account(random_address()).activated  # getaccount's {}: no account


def test_a_free_allowance_cut_by_a_proposal_is_read_from_the_chain(chain, node):
    key, owner = chain.account(trx="10")
    _, holder = chain.account(trx="1")
    chain.control.post("/chain/parameters", {"getFreeNetLimit": 0})
    try:
        chain.blocks(1)
        assert Bandwidth.of(node.get_resources(owner)) == Bandwidth(0, 0)
        burned = send(chain, node, owner, holder, 1_000_000, key)
        assert burned.predicted.bandwidth_fee_sun == burned.tx.bandwidth() * 1_000
        assert_predicted(burned, 1_000_000)
    finally:
        chain.control.post("/chain/parameters", {"getFreeNetLimit": 600})
        chain.blocks(1)
    assert Bandwidth.of(node.get_resources(owner)).free_left == 600


def test_the_predicted_cost_is_the_chains_charge_to_the_sun(chain, node):
    key, owner = chain.account(trx="20")
    _, holder = chain.account(trx="1")
    fresh = [random_address() for _ in range(3)]
    fees = node.get_trx_fees()
    size = build(node, owner, holder, 1_000_000).bandwidth()
    # No staked bandwidth: 600 free bytes pay two transfers whole, then bytes are burned;
    # an account's creation never uses the free bytes.
    rows = [(holder, 1_000_000), (fresh[0], 2_000_000), (holder, 1_000_000),
            (holder, 1_000_000), (fresh[1], 1_500_000), (fresh[0], 1_000_000)]
    plan = plan_trx_transfers([(to, amount, size) for to, amount in rows], existing={holder},
                              bandwidth=Bandwidth.of(node.get_resources(owner)), fees=fees)
    sent = [send(chain, node, owner, to, amount, key) for to, amount in rows]
    for one, (to, amount) in zip(sent, rows, strict=True):
        assert one.tx.bandwidth() == size == trx_transfer_bandwidth(owner=owner, to=to,
                                                                    amount_sun=amount)
        assert_predicted(one, amount)
    kinds = [(s.predicted.creates_account, s.predicted.free_bandwidth > 0,
              s.predicted.bandwidth_fee_sun) for s in sent]
    assert kinds == [(False, True, 0), (True, False, 100_000), (False, True, 0),
                     (False, False, size * 1_000), (True, False, 100_000),
                     (False, False, size * 1_000)]
    assert [c.fee_sun for c in plan.costs] == [s.info.fee for s in sent]
    assert plan.trx_needed_sun == sum(s.spent_sun for s in sent)
    assert plan.accounts_created == 2
    # With staked bandwidth: a new account and a holder, both paid from the stake.
    chain.control.post(f"/addresses/{owner}/bandwidth", {"staked": 2 * size})
    new = send(chain, node, owner, fresh[2], 1_000_000, key)
    held = send(chain, node, owner, holder, 1_000_000, key)
    for one in (new, held):
        assert one.predicted.staked_bandwidth == size and one.predicted.bandwidth_fee_sun == 0
        assert_predicted(one, 1_000_000)
    assert new.info.fee == fees.create_new_account_fee_in_system_contract and held.info.fee == 0
    everything = [*rows, (fresh[2], 1_000_000), (holder, 1_000_000)]
    for one, (to, amount) in zip([*sent, new, held], everything, strict=True):
        proof = node.prove_trx_payment(one.tx.txid, block_number=one.info.block_number,
                                       owner=owner, to=to, amount_sun=amount, signatures=1)
        assert proof is not None and proof.proven, proof.problem


def test_two_signers_under_an_active_permission_pay_the_multi_sign_fee(chain, node):
    key, owner = chain.account(trx="10")
    first, second = PrivateKey.random(), PrivateKey.random()
    response = permit(chain.control, owner, [key],
                      [active([(first, 1), (second, 1)], threshold=2,
                              operations=TRANSFER_ONLY)])
    assert response.status_code == 200, response.text
    assert node.get_permissions(owner).refusal(2, [first.public_key.to_base58check_address(),
                                                   second.public_key.to_base58check_address()],
                                               "TransferContract") is None
    for to in (random_address(), chain.account(trx="1")[1]):
        one = send(chain, node, owner, to, 1_000_000, first, second, permission_id=2)
        assert one.predicted.multi_sign_fee_sun == 1_000_000
        assert one.tx.bandwidth(2) == one.tx.bandwidth(1) + 67 == trx_transfer_bandwidth(
            owner=owner, to=to, amount_sun=1_000_000, permission_id=2, signatures=2)
        assert_predicted(one, 1_000_000)
        proof = node.prove_trx_payment(one.tx.txid, block_number=one.info.block_number,
                                       owner=owner, to=to, amount_sun=1_000_000, signatures=2)
        assert proof is not None and proof.proven, proof.problem
        wrong = node.prove_trx_payment(one.tx.txid, block_number=one.info.block_number,
                                       owner=owner, to=to, amount_sun=1_000_000, signatures=1)
        assert wrong is not None and "multi-sign fee" in str(wrong.problem)


def test_a_receipt_proves_only_the_transfer_its_block_holds(chain, node):
    key, owner = chain.account(trx="10", usdt="5")
    _, holder = chain.account(trx="1", usdt="1")
    one = send(chain, node, owner, holder, 2_000_000, key)
    block = one.info.block_number
    asked = {"block_number": block, "owner": owner, "to": holder, "amount_sun": 2_000_000}

    def problem(**changes: object) -> str | None:
        proof = node.prove_trx_payment(one.tx.txid, **{**asked, **changes})
        assert proof is not None
        return proof.problem

    assert problem() is None
    assert problem(amount_sun=2_000_001) == "it moves 2,000,000 sun, not 2,000,001"
    assert problem(to=owner).startswith(f"it moves TRX from {owner} to {holder}")
    assert problem(owner=holder).startswith("it moves TRX from")
    chain.blocks(1)
    assert problem(block_number=block + 1) == f"it names block {block}, not block {block + 1}"
    assert node.prove_trx_payment(one.tx.txid, **{**asked, "block_number": block + 50}) is None
    usdt = chain.sent(chain.expiring(chain.usdt(owner, holder, 1)), key)
    chain.blocks(1)
    info = node.get_transaction_info(usdt)
    proof = node.prove_trx_payment(usdt, block_number=info.block_number, owner=owner,
                                   to=holder, amount_sun=1)
    assert proof is not None and proof.problem == (
        f"block {info.block_number} holds it as TriggerSmartContract, not a TransferContract")
    assert node.prove_trx_payment("ab" * 32, **asked) is None  # no receipt yet


def test_a_transfers_bandwidth_is_known_before_its_block_is_read():
    owner, to = random_address(), random_address()
    ref = RefBlock(77_000_000, f"{77_000_000:016x}" + "ef" * 24, 1_760_000_000_000)
    for amount in (1, 127, 128, 2_000_000, 2**63 - 1):
        for permission_id, signatures in ((0, 1), (2, 1), (2, 3)):
            built = trx_transfer_contract(owner=owner, to=to, amount_sun=amount, ref=ref,
                                          expiration_ms=ref.timestamp_ms + 86_400_000,
                                          timestamp_ms=ref.timestamp_ms,
                                          permission_id=permission_id)
            assert built.bandwidth(signatures) == trx_transfer_bandwidth(
                owner=owner, to=to, amount_sun=amount, permission_id=permission_id,
                signatures=signatures)
    assert trx_transfer_bandwidth(owner=owner, to=to, amount_sun=2**63 - 1) == \
        trx_transfer_bandwidth(owner=owner, to=to, amount_sun=1) + 8  # varints: 10 bytes, 1


@pytest.mark.parametrize(("changes", "error"), [
    ({"amount_sun": 0}, "amount_sun must be a positive integer"),
    ({"amount_sun": True}, "amount_sun must be a positive integer"),
    ({"amount_sun": 2**63}, "amount_sun must be a positive integer"),
    ({"to": "SELF"}, "cannot go to its own sender"),
    ({"to": "TNotAnAddress"}, "not a valid TRON address"),
    ({"permission_id": 1}, "permission_id must be 0"),
    ({"expiration_ms": 1_000}, "an expiration after it"),
])
def test_a_transfer_the_chain_would_refuse_is_not_built(changes, error):
    owner = random_address()
    args = {"owner": owner, "to": random_address(), "amount_sun": 1, "permission_id": 0,
            "ref": RefBlock(5, f"{5:016x}" + "ab" * 24, 2_000), "expiration_ms": 62_000,
            "timestamp_ms": 2_000, **changes}
    if args["to"] == "SELF":
        args["to"] = owner
    with pytest.raises(ValueError, match=error):
        trx_transfer_contract(**args)
