"""TRX burned by kind, from the sandbox chain's own receipts of TRX transfers over real
HTTP: a transfer creating its recipient shows the chain's new-account fee as account
creation and the creation fee burned for its bytes as bandwidth; a holder's none."""

from __future__ import annotations

import pytest
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.models import TransactionInfo
from airflow_provider_tronenergy.node.transactions import RefBlock, trx_transfer_contract
from airflow_provider_tronenergy.payout.by_token import fee_split
from airflow_provider_tronenergy.payout.receipts import outcome_of
from support.chain import Chain, manual_chain
from tronenergy_protocol.address import random_address

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


@pytest.fixture(scope="module")
def node(chain):
    with TronNodeClient(chain.sandbox.root_url, usdt_contract=USDT) as client:
        yield client


def send(chain: Chain, node: TronNodeClient, key: PrivateKey, owner: str,
         to: str) -> TransactionInfo:
    """One TRX transfer signed offline, broadcast and put in a block: its receipt."""
    head = node.get_now_block()
    tx = trx_transfer_contract(owner=owner, to=to, amount_sun=1_000_000,
                               ref=RefBlock(head.number, head.block_id, head.timestamp_ms),
                               expiration_ms=head.timestamp_ms + 60_000,
                               timestamp_ms=head.timestamp_ms)
    signed = tx.signed(bytes.fromhex(key.sign_msg_hash(bytes.fromhex(tx.txid)).hex()))
    assert node.broadcast(signed).accepted
    chain.blocks(1)
    info = node.get_transaction_info(tx.txid)
    assert info is not None and info.succeeded
    return info


def test_a_trx_payouts_account_creation_is_the_chains_charge_to_the_sun(chain, node):
    key, owner = chain.account(trx="10")
    _, holder = chain.account(trx="1")
    fees = node.get_trx_fees()
    new = outcome_of(send(chain, node, key, owner, random_address())).to_dict()
    held = outcome_of(send(chain, node, key, owner, holder)).to_dict()
    split = fee_split(new, "TRX", 1)
    assert split["account_creation"] == fees.create_new_account_fee_in_system_contract > 0
    assert split["bandwidth"] == fees.create_account_fee  # no staked bytes: burned instead
    assert (split["energy"], split["other"], split["unsplit"]) == (0, 0, 0)
    assert sum(split.values()) == new["trx_burned_sun"]
    assert sum(fee_split(held, "TRX", 1).values()) == held["trx_burned_sun"] == 0  # free bytes
