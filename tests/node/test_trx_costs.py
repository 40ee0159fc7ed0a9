"""java-tron's charging of a TRX transfer (BandwidthProcessor, TransferActuator) as the
pre-flight predicts it, the chain's figures read strictly, and a receipt's figures checked;
no network (the sandbox tests in test_trx_transfers.py compare with a chain's charges)."""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.node.models import BlockBody, TransactionInfo
from airflow_provider_tronenergy.node.trx_costs import (
    Bandwidth,
    TrxFees,
    plan_trx_transfers,
    trx_transfer_cost,
)
from airflow_provider_tronenergy.node.trx_receipts import BlockEntry, trx_figures_problem

FEES = TrxFees(transaction_fee=1_000, create_account_fee=100_000,
               create_new_account_fee_in_system_contract=1_000_000,
               create_new_account_bandwidth_rate=1, multi_sign_fee=1_000_000)


def cost(size=268, *, exists=True, staked=0, free=0, fees=FEES, signatures=1):
    return trx_transfer_cost(size, recipient_exists=exists, bandwidth=Bandwidth(staked, free),
                             fees=fees, signatures=signatures)


def test_a_holder_is_paid_from_stake_then_free_then_burned_each_whole():
    paid, left = cost(staked=268, free=600)
    assert (paid.staked_bandwidth, paid.fee_sun, left) == (268, 0, Bandwidth(0, 600))
    paid, left = cost(staked=267, free=268)  # the pools are never added up
    assert (paid.free_bandwidth, paid.fee_sun, left) == (268, 0, Bandwidth(267, 0))
    paid, left = cost(staked=267, free=267)
    assert (paid.net_usage, paid.bandwidth_fee_sun, paid.fee_sun) == (0, 268_000, 268_000)
    assert left == Bandwidth(267, 267) and paid.spent_sun(5) == 268_005


def test_a_new_account_takes_rate_times_the_bytes_of_stake_or_burns_the_creation_fee():
    paid, left = cost(exists=False, staked=268, free=600)
    assert (paid.staked_bandwidth, paid.bandwidth_fee_sun, paid.account_fee_sun) == (
        268, 0, 1_000_000)
    assert left == Bandwidth(0, 600) and paid.fee_sun == 1_000_000
    paid, left = cost(exists=False, staked=267, free=600)  # free bytes never create an account
    assert (paid.net_usage, paid.bandwidth_fee_sun, paid.fee_sun) == (0, 100_000, 1_100_000)
    assert left == Bandwidth(267, 600)
    doubled = TrxFees(**{**FEES.__dict__, "create_new_account_bandwidth_rate": 2})
    paid, _ = cost(exists=False, staked=535, fees=doubled)
    assert paid.bandwidth_fee_sun == 100_000
    paid, left = cost(exists=False, staked=536, fees=doubled)
    assert (paid.staked_bandwidth, left.staked_left) == (536, 0)
    free_rate = TrxFees(**{**FEES.__dict__, "create_new_account_bandwidth_rate": 0})
    assert cost(exists=False, staked=0, fees=free_rate)[0].bandwidth_fee_sun == 0
    assert cost(exists=False, staked=-1, fees=free_rate)[0].bandwidth_fee_sun == 100_000


def test_several_signatures_pay_the_multi_sign_fee_on_top():
    paid, _ = cost(exists=False, signatures=2)
    assert (paid.multi_sign_fee_sun, paid.fee_sun) == (1_000_000, 2_100_000)
    with pytest.raises(ValueError, match="at least one signature"):
        cost(signatures=0)
    with pytest.raises(ValueError, match="at least one byte"):
        cost(size=0)


def test_a_plan_creates_each_new_recipient_once_and_spends_the_bandwidth_in_order():
    old, new = "T-holder", "T-newcomer"
    plan = plan_trx_transfers([(new, 5, 268), (new, 6, 268), (old, 7, 268), (old, 8, 268)],
                              existing={old}, bandwidth=Bandwidth(300, 600), fees=FEES,
                              signatures=2)
    assert plan.figures() == {
        "transfers": 4, "amount_sun": 26, "accounts_created": 1,
        "account_fee_sun": 1_000_000, "bandwidth_fee_sun": 268_000,  # the last one burns
        "multi_sign_fee_sun": 4_000_000, "staked_bandwidth": 268, "free_bandwidth": 536,
        "fee_sun": 5_268_000, "trx_needed_sun": 5_268_026}
    assert plan.left == Bandwidth(32, 64)
    assert [c.creates_account for c in plan.costs] == [True, False, False, False]


def _parameters(**values):
    base = {"getEnergyFee": 100, "getTransactionFee": 1_000, "getCreateAccountFee": 100_000,
            "getCreateNewAccountFeeInSystemContract": 1_000_000, "getFreeNetLimit": 600,
            "getMultiSignFee": 1_000_000, "getCreateNewAccountBandwidthRate": 1, **values}
    return {"chainParameter": [{"key": k, "value": v} if v is not None else {"key": k}
                               for k, v in base.items() if v != "absent"]}


def test_the_chains_figures_are_read_strictly():
    assert TrxFees.from_node(_parameters()) == FEES
    assert TrxFees.from_node(_parameters(getCreateNewAccountBandwidthRate=None)) \
        .create_new_account_bandwidth_rate == 0  # proto3 JSON leaves a zero out
    with pytest.raises(ValueError, match=r"getCreateNewAccountBandwidthRate.*not at all"):
        TrxFees.from_node(_parameters(getCreateNewAccountBandwidthRate="absent"))
    with pytest.raises(ValueError, match="getCreateNewAccountBandwidthRate"):
        TrxFees.from_node(_parameters(getCreateNewAccountBandwidthRate=-1))
    with pytest.raises(ValueError, match="getCreateNewAccountFeeInSystemContract"):
        TrxFees.from_node(_parameters(getCreateNewAccountFeeInSystemContract=10**15))


def _info(fee=0, net_fee=0, net_usage=0, energy=0):
    receipt = {k: v for k, v in {"net_fee": net_fee, "net_usage": net_usage,
                                 "energy_usage_total": energy}.items() if v}
    return TransactionInfo.from_node("ab" * 32, {"id": "ab" * 32, "fee": fee, "blockNumber": 7,
                                                 "receipt": receipt}, solidified=False)


def _entry(ret_fee=0):
    return BlockEntry("TransferContract", "SUCCESS", ret_fee, None)


@pytest.mark.parametrize(("info", "entry", "signatures", "problem"), [
    (_info(net_usage=268), _entry(), 1, None),
    (_info(fee=268_000, net_fee=268_000), _entry(), 1, None),
    (_info(fee=1_100_000, net_fee=100_000), _entry(1_000_000), 1, None),
    (_info(fee=1_000_000, net_usage=268), _entry(1_000_000), 1, None),
    (_info(fee=2_100_000, net_fee=100_000), _entry(1_000_000), 2, None),
    (_info(fee=2_100_000, net_fee=100_000), _entry(1_000_000), None, None),
    (_info(fee=1_100_000, net_fee=100_000), _entry(1_000_000), 2, "multi-sign fee"),
    (_info(fee=1_268_000, net_fee=268_000), _entry(1_000_000), 1, "created its recipient"),
    (_info(fee=500, net_fee=500), _entry(), 1, "not whole bytes"),
    (_info(fee=900_000), _entry(900_000), 1, "a TRX transfer pays 0, or 1,000,000"),
    (_info(energy=5), _entry(), 1, "uses no energy"),
])
def test_a_receipts_figures_must_be_the_chains(info, entry, signatures, problem):
    found = trx_figures_problem(info, entry, FEES, signatures)
    assert (found is None) if problem is None else (problem in str(found)), found


def test_a_block_is_read_with_each_transactions_contract_and_result():
    from airflow_provider_tronenergy.node.trx_receipts import BlockTrx

    block_id = f"{9:016x}" + "cd" * 24
    owner, to = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
    transfer = {"type": "TransferContract", "parameter": {"value": {
        "owner_address": owner, "to_address": to, "amount": 5}}}
    payload = {"blockID": block_id, "block_header": {"raw_data": {"number": 9,
                                                                  "timestamp": 27_000}},
               "transactions": [
                   {"txID": "01" * 32, "ret": [{"contractRet": "SUCCESS", "fee": 1_000_000}],
                    "raw_data": {"contract": [transfer]}},
                   {"txID": "02" * 32, "ret": [{"contractRet": "REVERT"}],
                    "raw_data": {"contract": [{"type": "TriggerSmartContract"}]}},
                   {"txID": "03" * 32, "ret": [{}], "raw_data": {"contract": [transfer]}}]}
    read = BlockTrx.from_node(9, payload)
    assert read.body == BlockBody.from_node(9, payload)
    first = read.entries["01" * 32]
    assert (first.ret_fee_sun, first.transfer.units, first.transfer.to_address) == (
        1_000_000, 5, to)
    assert read.entries["02" * 32] == BlockEntry("TriggerSmartContract", "REVERT", 0, None)
    assert read.entries["03" * 32] == BlockEntry("TransferContract", None, 0, None)
    with pytest.raises(ValueError, match="block 9 for block 8"):
        BlockTrx.from_node(8, payload)
    for parameter in (["not", "an", "object"], {"value": "5 sun"}, {}):
        odd = {"txID": "04" * 32, "ret": [{"contractRet": "SUCCESS"}],
               "raw_data": {"contract": [{"type": "TransferContract", "parameter": parameter}]}}
        with pytest.raises(ValueError, match="TransferContract without a value"):
            BlockTrx.from_node(9, {**payload, "transactions": [odd]})
