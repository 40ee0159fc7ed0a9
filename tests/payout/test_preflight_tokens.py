"""A payout sheet that names tokens, prepared against the sandbox chain
(airflow_provider_tronenergy.payout.token_preflight, energy_plan): each token resolved once
and its amounts checked in its decimals, its balance read, each row's energy estimated on its
own contract (and sent: the chain charges each transfer what the plan says), the TRX payouts'
fees and new accounts read from the chain, a short token refused naming only its rows."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.payout import sent, sheet, token_preflight
from airflow_provider_tronenergy.payout.approvals import plan_markdown
from airflow_provider_tronenergy.payout.energy_plan import plan_energy
from airflow_provider_tronenergy.payout.onchain import ChainRefused
from airflow_provider_tronenergy.payout.params import ChainParams
from airflow_provider_tronenergy.payout.ready import batch_ready
from airflow_provider_tronenergy.payout.rows import PayoutInputError
from support.chain import FEE_LIMIT, Chain, manual_chain
from support.plans import batch_of, sandbox_client
from support.sandbox import create_token, node_connection_json, set_token_units
from tronenergy_protocol.address import random_address

HOLDER, FIRST = 64_285, 130_285
"""A USDT transfer to a holder, and a first one, at USDT's energy factor 34,000."""


@pytest.fixture
def chain(monkeypatch: pytest.MonkeyPatch) -> Iterator[Chain]:
    with manual_chain() as chain:
        monkeypatch.setenv("AIRFLOW_CONN_TRON_NODE_DEFAULT",
                           node_connection_json(chain.sandbox))
        yield chain


def checks_of(rows: list[dict[str, str]], holders: set[str]) -> list[dict[str, Any]]:
    """What the service's check-address says of the sheet's (token) recipients."""
    return [{"address": a, "transfer_energy": 65_000 if a in holders else 131_000,
             "need_activate": False} for a in sheet.recipients(rows)]


def preflight(rows: list[dict[str, str]], checks: list[dict[str, Any]],
              sender: str) -> dict[str, Any]:
    return token_preflight.check_batch(rows, checks, sender, ChainParams.checked())


def send(chain: Chain, key: PrivateKey, sender: str, row: dict[str, Any],
         contract: str) -> str:
    """The row's transfer as tronpy builds it: what the chain charges for it."""
    if row.get("token") == "TRX":
        return chain.sent(chain.trx(sender, row["recipient"],
                                    int(Decimal(row["amount"]) * 10 ** 6)), key)
    if row.get("token") not in (None, "USDT"):
        units = int(Decimal(row["amount"]).scaleb(18))
        builder = chain.tron.get_contract(contract).functions.transfer(
            row["recipient"], units).with_owner(sender).fee_limit(FEE_LIMIT)
        return chain.sent(builder, key)
    return chain.sent(chain.usdt(sender, row["recipient"],
                                 int(Decimal(row["amount"]) * 10 ** 6)), key)


def test_a_sheet_of_usdt_an_18_decimal_token_and_trx_is_planned_as_the_chain_charges(
        chain: Chain, tmp_path: Path) -> None:
    key, sender = chain.account(trx="300", usdt="100", staked=2_000_000)
    e18 = create_token(chain.sandbox, symbol="E18", decimals=18, energy_factor=10_000)
    set_token_units(chain.sandbox, e18, sender, 10 ** 33)
    usdt_holder = chain.control.wallet(trx="1", usdt="1")
    usdt_new = chain.control.wallet(trx="1")
    e18_holder, e18_new = chain.control.wallet(trx="1"), chain.control.wallet(trx="1")
    set_token_units(chain.sandbox, e18, e18_holder, 1)
    trx_new = random_address()
    csv = tmp_path / "payouts.csv"
    csv.write_text(
        "recipient,amount,token\n"
        f"{usdt_holder},1.5,\n{usdt_new},2,USDT\n"
        f"{e18_holder},0.000000000000000001,{e18}\n"
        f"{e18_new},123456789012345.123456789012345678,{e18}\n"
        f"{e18_new},1,{e18}\n"
        f"{trx_new},12.5,trx\n")
    rows = sheet.load_payouts(str(csv))
    assert [r.get("token") for r in rows] == [None, "USDT", e18, e18, e18, "TRX"]
    assert rows[3]["amount"] == "123456789012345.123456789012345678"  # never rounded
    checks = checks_of(rows, {usdt_holder})
    assert trx_new not in {c["address"] for c in checks}  # no activation: it pays its own

    chain_answer = preflight(rows, checks, sender)
    assert chain_answer["row_tokens"] == ["USDT", "USDT", e18, e18, e18, "TRX"]
    figures = chain_answer["tokens"][e18]
    assert (figures["symbol"], figures["decimals"], figures["energy_factor"]) == ("E18", 18,
                                                                                 10_000)
    assert figures["needed"] == "123456789012346.123456789012345679"
    assert chain_answer["trx"]["accounts_created"] == 1
    assert Decimal(chain_answer["trx"]["amount"]) == Decimal("12.5")

    plan = plan_energy(sandbox_client(chain.sandbox), rows, checks,
                       batch_of({"sender_address": sender, "rent_time": "1",
                                 "max_spend_trx": "100", "batch_id": "tokens-1"}), chain_answer)
    energies = [r["energy"] for r in plan["recipients"]]
    assert energies[:2] == [HOLDER, FIRST] and energies[5] == 0
    assert energies[4] < energies[3]  # the second transfer finds the recipient a holder
    assert plan["by_token"][e18]["energy"] == sum(energies[2:5])
    assert plan["by_token"]["TRX"] == {"transfers": 1, "amount": "12.5", "energy": 0}
    assert plan["total_energy"] == sum(energies)
    assert plan["energy_to_buy"] == 0  # 2,000,000 staked cover it: nothing rented

    shown = plan_markdown(plan, Decimal(0))  # what a person approves: each token's own
    assert f"| `{e18_new}` | 1 E18 (`{e18}`) |" in shown and f"| `{trx_new}` | 12.5 TRX |" in shown
    assert f"| Hot wallet E18 (`{e18}`) | 1000000000000000 (batch pays " in shown

    ready = batch_ready(plan, [], [])
    to_send = sent.rows_of(ready)
    assert [r.get("token") for r in to_send] == [None, "USDT", e18, e18, e18, "TRX"]
    txids = [send(chain, key, sender, row, e18) for row in to_send]
    chain.blocks(1)
    charged = [int(chain.info(t)["receipt"].get("energy_usage_total", 0)) for t in txids]
    assert charged == energies  # each contract's energy, to the unit


def test_a_short_token_is_refused_naming_only_its_rows(chain: Chain) -> None:
    _, sender = chain.account(trx="300", usdt="100", staked=2_000_000)
    e18 = create_token(chain.sandbox, symbol="E18", decimals=18)
    set_token_units(chain.sandbox, e18, sender, 10 ** 18)  # 1 E18; the sheet pays 3
    rows = sheet.load_payouts(payouts=[
        {"recipient": random_address(), "amount": "1"},
        {"recipient": random_address(), "amount": "1.5", "token": e18},
        {"recipient": random_address(), "amount": "1.5", "token": e18},
        {"recipient": random_address(), "amount": "1", "token": "TRX"}])
    with pytest.raises(ChainRefused) as refused:
        preflight(rows, checks_of(rows, set()), sender)
    message = str(refused.value)
    assert f"E18 ({e18}) short by 2: the wallet holds 1, its 2 row(s) pay out 3 (rows 1, 2)" \
        in message
    assert "USDT short" not in message and "TRX short" not in message
    assert "nothing was bought or activated" in message


def test_amounts_finer_than_a_tokens_decimals_and_unknown_tokens_are_refused(
        chain: Chain) -> None:
    _, sender = chain.account(trx="300", usdt="100")
    two = create_token(chain.sandbox, symbol="TWO", decimals=2)
    nodec = create_token(chain.sandbox, symbol="NODEC", decimals=None)
    rows = sheet.load_payouts(payouts=[
        {"recipient": random_address(), "amount": "1"},
        {"recipient": random_address(), "amount": "1.001", "token": two},
        {"recipient": random_address(), "amount": "1", "token": nodec},
        {"recipient": random_address(), "amount": "1", "token": "NOSUCH"},
        {"recipient": sender, "amount": "1", "token": "TRX"}])
    with pytest.raises(PayoutInputError) as refused:
        preflight(rows, checks_of(rows, set()), sender)
    message = str(refused.value)
    assert "row 1: amount 1.001 of TWO" in message and "has more than 2 decimals" in message
    assert f"row 2: token contract {nodec} answers no decimals()" in message
    assert "row 3: unknown token 'NOSUCH'" in message and "row 0" not in message
    assert f"row 4: a TRX payout to the sender {sender} itself" in message


def test_a_trx_payout_to_an_address_without_an_account_costs_the_chains_fee(
        chain: Chain) -> None:
    key, sender = chain.account(trx="100")
    new = random_address()
    rows = sheet.load_payouts(payouts=[{"recipient": new, "amount": "3", "token": "TRX"}])
    answer = preflight(rows, [], sender)
    assert answer["trx"]["accounts_created"] == 1 and answer["tokens"] == {}
    txid = chain.sent(chain.trx(sender, new, 3_000_000), key)
    chain.blocks(1)
    info = chain.info(txid)
    assert Decimal(answer["trx"]["fee"]) * 10 ** 6 == int(info.get("fee", 0)) > 0
    assert Decimal(answer["trx"]["account_fee"]) > 0
