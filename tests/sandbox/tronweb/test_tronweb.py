"""TronWeb 6 (npm, unchanged) as a second client of the sandbox's chain (issue 37).

One ``node checks.js`` process runs every check against a sandbox started here and
prints JSON; each test reads its part. TronWeb speaks java-tron's default form (hex
``41...`` addresses, no ``visible``), reads accounts from ``/walletsolidity``, fetches
USDT's ABI by GET and builds a TRX transfer itself from ``/wallet/getblock``: what a
JavaScript developer's first calls are.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tronpy.keys import PrivateKey, to_hex_address

from support.chain import USDT, Chain
from support.sandbox import create_token, running_sandbox, set_token_units
from tronenergy_protocol.address import random_address

CHECKS = Path(__file__).parent / "checks.js"


@pytest.fixture(scope="module")
def chain() -> Iterator[Chain]:
    # A block every 150 ms: the transfer check pauses production within 19 blocks (2.85 s)
    # of seeing its receipt, even on a loaded machine.
    with running_sandbox(time_scale=0.05) as server:
        yield Chain(server)


@pytest.fixture(scope="module")
def run(tronweb_node: str, chain: Chain) -> dict[str, Any]:
    """Every check's result, from one node process."""
    key, owner = chain.account(trx="100", usdt="10")
    _, holder = chain.account(trx="1", usdt="1")
    wallet_key, wallet = chain.account(trx="150", usdt="10")
    payout = PrivateKey.random()
    token = create_token(chain.sandbox, symbol="E18", decimals=18, energy_factor=5_000)
    set_token_units(chain.sandbox, token, owner, 3 * 10**22)
    _solidified(chain, chain.head())  # TronWeb reads accounts from the solidity API
    spec = {"url": chain.sandbox.root_url, "usdt": USDT, "owner_key": key.hex(),
            "other_key": PrivateKey.random().hex(), "holder": holder,
            "wallet_key": wallet_key.hex(), "payout_key": payout.hex(), "token": token,
            "token_to": random_address(), "trx_to": random_address()}
    done = subprocess.run([tronweb_node, str(CHECKS)], input=json.dumps(spec),  # keys: stdin
                          capture_output=True, text=True, timeout=120, check=False,
                          cwd=CHECKS.parent)
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(done.stdout)
    assert "fatal" not in results, results["fatal"]
    return {**results, "owner": owner, "holder": holder, "wallet": wallet, "token": token,
            "payout": payout.public_key.to_hex_address()}


def _solidified(chain: Chain, block: int) -> None:
    """Wait until ``block`` is solidified (19 blocks of 150 ms)."""
    for _ in range(1000):
        if int(chain.control.call("GET", "/chain")["solidified"]) >= block:
            return
        time.sleep(0.03)
    raise AssertionError(f"block {block} never solidified")


def _ok(run: dict[str, Any], name: str) -> dict[str, Any]:
    result: dict[str, Any] = run[name]
    assert "error" not in result, result["error"]
    return result


def test_an_account_its_trx_and_resources(run):
    account = _ok(run, "account")
    assert account["address"] == to_hex_address(run["owner"])  # java-tron's default: hex
    assert account["balance"] == account["unconfirmed_balance"] == 100_000_000
    assert account["free_net_limit"] == 600


def test_a_usdt_balance_through_the_contracts_abi(run):
    assert _ok(run, "usdt_balance") == {"owner": "10000000", "decimals": 6}


def test_estimating_a_usdt_transfer(run):
    estimate = _ok(run, "estimate")
    assert estimate["energy_required"] == estimate["energy_used"] == 64_285  # to a holder


def test_a_usdt_transfer_built_signed_broadcast_and_its_receipt_log(run):
    sent = _ok(run, "usdt_transfer")
    assert sent["result"] is True
    assert sent["receipt"]["result"] == "SUCCESS"
    assert sent["receipt"]["energy_usage_total"] == 64_285
    assert sent["contract_address"] == to_hex_address(USDT)
    assert sent["log_address"] == to_hex_address(USDT)[2:]  # a log names 20 bytes
    assert (sent["log_from"], sent["log_to"]) == (run["owner"], run["holder"])
    assert sent["log_units"] == 1_500_000 and sent["holder_after"] == "2500000"


def test_a_trx_transfer_built_by_tronweb_itself(run):
    sent = _ok(run, "trx_transfer")
    assert sent["result"] is True and sent["contract_ret"] == "SUCCESS"
    assert sent["to_address"] == to_hex_address(run["holder"])
    assert sent["confirmed_block"] == sent["block"]  # the solidity API, once solidified
    # Paused right after the transfer's block: the solidity API's balance is the
    # solidified state's (before the transfer unless its block was solidified already).
    assert sent["head_balance"] == sent["confirmed_balance"] == 3_000_000
    before = sent["solid_block"] < sent["block"]
    assert sent["solid_balance"] == (1_000_000 if before else 3_000_000)
    assert before, "the chain ran 19 blocks before the pause: nothing shown (rerun)"


def test_a_rebroadcast_is_a_duplicate(run):
    assert _ok(run, "duplicate") == {"code": "DUP_TRANSACTION_ERROR", "result": False}


def test_an_expired_transaction_is_refused(run):
    assert _ok(run, "expired") == {"code": "TRANSACTION_EXPIRATION_ERROR", "result": False}


def test_a_wrong_signer_is_refused(run):
    assert _ok(run, "wrong_signer") == {"code": "SIGERROR", "result": False}


def test_a_permission_update_built_by_tronweb_bounds_a_payout_key(run):
    """TronWeb encodes the AccountPermissionUpdateContract itself: the sandbox computes the
    same txID (the owner's signature recovers), executes it for 100 TRX, and then refuses
    the payout key's TRX transfer as java-tron does while taking its USDT transfer."""
    done = _ok(run, "permission_update")
    assert done["result"] is True and done["fee"] == 100_000_000
    assert done["balance"] == 50_000_000
    assert done["active"] == [{
        "type": "Active", "id": 2, "permission_name": "payouts", "threshold": 1,
        "operations": (1 << 31).to_bytes(32, "little").hex(),
        "keys": [{"address": run["payout"], "weight": 1}]}]
    assert done["usdt_result"] == "SUCCESS"
    assert (done["trx_code"], done["trx_message"]) == (
        "SIGERROR", "Validate signature error: Permission denied")


def test_a_token_of_the_sandboxs_own_and_a_trx_send_creating_an_account(run):
    """TronWeb's ``contract().at(token).transfer(...).send()`` and ``trx.send``, unchanged:
    18 decimals past 2^64 move exactly, charged a new holder's 29,631 energy plus the
    factor's 50 %; the new account costs java-tron's 1 TRX fee in the contract
    (``TransferActuator``) plus 0.1 TRX burned for want of staked bandwidth
    (``BandwidthProcessor.consumeForCreateNewAccount``)."""
    sent = _ok(run, "token_transfer")
    assert sent["decimals"] == 18 and sent["result"] == "SUCCESS"
    assert sent["energy"] == 29_631 + 29_631 * 5_000 // 10_000
    assert sent["log_address"] == to_hex_address(run["token"])[2:]
    assert (int(sent["to_after"]), int(sent["owner_after"])) == (
        10**22 + 1, 3 * 10**22 - 10**22 - 1)
    trx = _ok(run, "trx_send")
    assert trx["result"] is True and trx["fee"] == 1_100_000
    assert trx["receipt"] == {"net_fee": 100_000} and trx["to_balance"] == 1_000_000
