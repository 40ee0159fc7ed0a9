"""Links to the block explorer: what a task pushes, and what the Airflow UI then shows.

The dag.test() runs go through Airflow's own path: the worker asks the operator's links
for their URLs as the task ends and stores them as XComs; the API server's extra-links
route (tests/support/links.py) reads them back through the serialized DAG. The payout
operator's links are tested with its other dag.test() runs (test_payout.py).
"""

from __future__ import annotations

import secrets

import operators_batch as batch_dags
import operators_batch_buy as batch_buy_dags
import operators_purchase as dags
import pytest

from airflow_provider_tronenergy.links.explorer import explorer_trail, link_for, token_link_for
from support.links import pushed_trail, ui_extra_links
from support.sandbox import default_connection
from tronenergy_protocol.address import random_address
from tronenergy_protocol.explorer import ExplorerError, explorer_of

TXID = "c0ffee" + "00" * 29
NILE = "https://nile.tronscan.org"


# -- which page a trail links to --------------------------------------------------------------

def trail(kind: str = "payout", **fields: object) -> dict[str, object]:
    return {"explorer": NILE, "kind": kind, "count": 1, "txid": "", "address": "", **fields}


def test_one_transaction_links_to_its_page_many_to_their_shared_address():
    sender = random_address()
    one = explorer_trail(explorer_of(NILE), "payout", count=1, txids=[TXID],
                         addresses=[sender])
    assert link_for(one, "payout") == f"{NILE}/#/transaction/{TXID}"
    many = explorer_trail(explorer_of(NILE), "payout", count=3, txids=[TXID, TXID, TXID],
                          addresses=[sender] * 3)
    assert many == {"explorer": NILE, "kind": "payout", "count": 3, "txid": "",
                    "address": sender}
    assert link_for(many, "payout") == f"{NILE}/#/address/{sender}"
    # An order whose delegation is not made yet: its receiver's page will show it.
    pending = explorer_trail(explorer_of(None), "delegation", count=1, txids=[""],
                             addresses=[sender])
    assert link_for(pending, "delegation") == f"https://tronscan.org/#/address/{sender}"


def test_many_transactions_to_many_addresses_have_no_single_page():
    addresses = [random_address(), random_address()]
    spread = explorer_trail(explorer_of(None), "activation", count=2, txids=[TXID, TXID],
                            addresses=addresses)
    assert spread["address"] == "" and link_for(spread, "activation") == ""


def test_a_batch_of_ten_thousand_keeps_one_address_not_ten_thousand_ids():
    sender = random_address()
    big = explorer_trail(explorer_of(None), "payout", count=10_000, txids=[TXID] * 10_000,
                         addresses=[sender] * 10_000)
    assert len(repr(big)) < 200


def test_a_batch_of_one_token_links_its_page_trx_or_several_tokens_none():
    sender, e18 = random_address(), random_address()
    one = explorer_trail(explorer_of(NILE), "payout", count=2, txids=[TXID, TXID],
                         addresses=[sender] * 2, contracts=[e18, e18])
    assert token_link_for(one, "payout") == f"{NILE}/#/token20/{e18}"
    assert token_link_for(one, "delegation") == ""
    for contracts in ([None, None], [e18, None], [e18, random_address()], []):
        mixed = explorer_trail(explorer_of(NILE), "payout", count=2, txids=[TXID, TXID],
                               addresses=[sender] * 2, contracts=contracts)
        assert "token" not in mixed and token_link_for(mixed, "payout") == ""
    assert token_link_for(trail(token="<script>"), "payout") == ""  # XCom is writable
    with pytest.raises(ExplorerError):
        token_link_for(trail(explorer="javascript:alert(1)//", token=e18), "payout")


@pytest.mark.parametrize(("pushed", "kind"), [
    (None, "payout"),  # the task pushed nothing: it made no transaction
    ("https://tronscan.org/#/transaction/x", "payout"),
    (trail("delegation", txid=TXID), "payout"),  # another kind's trail
    (trail(count=0, txid=TXID), "payout"),
    (trail(count=True, txid=TXID), "payout"),
    (trail(count="1", txid=TXID), "payout"),
    (trail(txid="not-a-txid"), "payout"),
    (trail(count=2, address="T" + "1" * 33), "payout"),
])
def test_no_transaction_no_link(pushed, kind):
    assert link_for(pushed, kind) == ""


def test_a_pushed_explorer_is_checked_again_before_it_becomes_a_link():
    """Any task can write an XCom: a script URL never reaches the UI as a link."""
    with pytest.raises(ExplorerError):
        link_for(trail(explorer="javascript:alert(1)//", txid=TXID), "payout")


# -- in Airflow: purchases, activations, a batch of orders ------------------------------------

def test_a_delivered_purchase_links_its_delegation_on_mainnet_tronscan(run_dag, control):
    target = control.activated()
    out = run_dag(dags.te_buy, target=target, energy="65000", rent_time="1")
    state, _, result = out["buy"]
    assert state == "success" and len(result["tx_hash"]) == 64
    [order] = control.orders(target)
    assert order["tx_hash"] == result["tx_hash"]  # the sandbox's own record of the order
    links = ui_extra_links("te_buy", out["__run_id__"], "buy")
    assert links == {"TronScan: delegation":
                     f"https://tronscan.org/#/transaction/{order['tx_hash']}"}


def test_the_link_follows_the_connections_explorer_through_a_deferred_wait(
        run_dag, control, sandbox, monkeypatch):
    default_connection(monkeypatch, sandbox, explorer_url=NILE + "/")
    target = control.activated()
    out = run_dag(dags.te_buy_deferred, target=target)
    state, _, result = out["buy"]
    assert state == "success"
    assert ui_extra_links("te_buy_deferred", out["__run_id__"], "buy") == {
        "TronScan: delegation": f"{NILE}/#/transaction/{result['tx_hash']}"}
    assert pushed_trail("te_buy_deferred", out["__run_id__"], "buy") == {
        "explorer": NILE, "kind": "delegation", "count": 1, "txid": result["tx_hash"],
        "address": target}


def test_a_dry_run_buys_nothing_and_shows_no_link(run_dag, control):
    target = control.activated()
    out = run_dag(dags.te_buy, target=target, energy="65000", rent_time="1", dry_run="True")
    assert out["buy"][0] == "success" and out["buy"][2]["dry_run"] is True
    assert ui_extra_links("te_buy", out["__run_id__"], "buy") == {"TronScan: delegation": None}
    assert pushed_trail("te_buy", out["__run_id__"], "buy") is None


@pytest.mark.parametrize("bad", ["nile.tronscan.org", "https://me:pw-31c9@scan.example"])
def test_a_bad_explorer_url_fails_the_task_before_anything_is_bought(
        run_dag, control, sandbox, monkeypatch, capfd, bad):
    default_connection(monkeypatch, sandbox, explorer_url=bad)
    target = control.activated()
    out = run_dag(dags.te_buy, target=target, energy="65000", rent_time="1")
    assert out["buy"][0] == "failed"
    assert control.orders(target) == []
    logged = capfd.readouterr().out
    assert "connection 'tronenergy_default': extra explorer_url must" in logged
    assert "pw-31c9" not in logged


def test_one_activation_links_its_transaction_several_link_none(run_dag, control):
    fresh = random_address()
    out = run_dag(batch_dags.te_activate, addresses=[fresh])
    state, _, [result] = out["activate"]
    assert state == "success" and result["activated"] is True
    assert ui_extra_links("te_activate", out["__run_id__"], "activate") == {
        "TronScan: activation": f"https://tronscan.org/#/transaction/{result['tx_hash']}"}
    # Two addresses: two transactions with no page in common (each is in the return value).
    out = run_dag(batch_dags.te_activate, addresses=[random_address(), random_address()])
    assert out["activate"][0] == "success"
    assert ui_extra_links("te_activate", out["__run_id__"], "activate") == {
        "TronScan: activation": None}
    assert pushed_trail("te_activate", out["__run_id__"], "activate")["count"] == 2


def test_a_batch_of_orders_to_one_wallet_links_the_wallet(run_dag, control):
    wallet = control.activated()
    key = f"test-links-{secrets.token_hex(4)}"
    orders = [{"target_address": wallet, "energy_amount": 131_000, "purchase_key": f"{key}:b0"},
              {"target_address": wallet, "count": 2, "purchase_key": f"{key}:c0"}]
    out = run_dag(batch_buy_dags.dag, orders=orders)
    assert out["buy"][0] == "success" and len(control.orders(wallet)) == 2
    assert ui_extra_links("te_batch_buy", out["__run_id__"], "buy") == {
        "TronScan: delegation": f"https://tronscan.org/#/address/{wallet}"}
