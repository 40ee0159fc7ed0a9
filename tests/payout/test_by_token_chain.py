"""TRX burned by kind, from the sandbox chain's own receipts of TRX transfers over real
HTTP: a transfer creating its recipient shows the chain's new-account fee as account
creation and the creation fee burned for its bytes as bandwidth; a holder's none."""

from __future__ import annotations

from decimal import Decimal

import pytest
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.models import TransactionInfo
from airflow_provider_tronenergy.payout.by_token import fee_split
from airflow_provider_tronenergy.payout.receipts import outcome_of
from support.chain import USDT, Chain, manual_chain, signed_by, trx_transfer
from tronenergy_protocol.address import random_address


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
    tx = trx_transfer(node, owner, to, 1_000_000)
    assert node.broadcast(signed_by(tx, key)).accepted
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


def test_the_energy_page_shows_the_chains_account_creation_for_a_trx_payout(chain, node,
                                                                            tmp_path):
    """The same receipt journaled: the page's TRX line has the chain's new-account fee as
    account creation and its kinds add up to the fee, as the batch's split has them."""
    from datetime import datetime, timezone

    from airflow_provider_tronenergy.payout.journal import PayoutJournal
    from airflow_provider_tronenergy.ui.period import Period
    from airflow_provider_tronenergy.ui.tokens import token_use
    from support.journaled import journaled

    key, owner = chain.account(trx="10")
    new = outcome_of(send(chain, node, key, owner, random_address())).to_dict()
    journal = PayoutJournal(f"sqlite:///{tmp_path / 'journal.db'}")
    try:
        journaled(journal, [("TRX", 1_000_000, new, 1)])
        [line] = token_use(journal, Period.parse(None, None,
                                                 today=datetime.now(timezone.utc).date()))
    finally:
        journal.close()
    sun = {kind: int(Decimal(trx) * 10 ** 6) for kind, trx in line["trx_burned_by_kind"].items()}
    assert sun == fee_split(new, "TRX", 1)
    assert sun["account_creation"] == node.get_trx_fees().create_new_account_fee_in_system_contract
    assert sum(sun.values()) == new["trx_burned_sun"] == int(Decimal(line["trx_burned"]) * 10 ** 6)
