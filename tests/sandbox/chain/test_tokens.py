"""TRC-20 tokens of the sandbox's own beside USDT, driven by tronpy unchanged (issue 47).

A token is created through the control API (``create_token``) with its decimals, the base
energy of a transfer to a holder and to a new holder, and its dynamic-energy factor; the
node answers for it as for USDT and charges ``base + base * factor // 10_000`` (java-tron's
``VM.play`` penalty, ``chain/tokens.py``). Amounts past 2^64 move exactly.
"""

from __future__ import annotations

import pytest
import requests
from eth_abi import decode, encode
from tronpy.exceptions import TvmError
from tronpy.keys import to_hex_address

from support.chain import Chain, manual_chain
from support.sandbox import create_token, set_token_units, token_units
from tronenergy_protocol.address import random_address
from tronenergy_sandbox.chain.multicall import AGGREGATE, MULTICALL
from tronenergy_sandbox.world import World

HOLDER, NEW_HOLDER, FACTOR = 20_000, 50_000, 12_345
FEE_LIMIT = 100_000_000
TOKEN, HOLDER_ADDRESS = random_address(), random_address()


@pytest.fixture(scope="module")
def chain():
    with manual_chain() as chain:
        yield chain


def _charged(base: int, factor: int) -> int:
    return base + base * factor // 10_000


def _run(chain: Chain, builder, key) -> dict:
    """Build online, sign, broadcast, produce the next block; the receipt."""
    txid = chain.sent(chain.expiring(builder), key)
    chain.blocks(1)
    info = chain.info(txid)
    assert info["id"] == txid
    return info


def _evm(address: str) -> str:
    return "0x" + to_hex_address(address)[2:]


def _estimate(chain: Chain, contract: str, owner: str, to: str, units: int) -> dict:
    parameter = encode(["address", "uint256"], [_evm(to), units]).hex()
    return chain.node_post("estimateenergy", {
        "owner_address": owner, "contract_address": contract, "visible": True,
        "function_selector": "transfer(address,uint256)", "parameter": parameter})


def test_an_18_decimal_token_moves_exactly_through_tronpys_own_contract_transfer(chain):
    token = create_token(chain.sandbox, symbol="E18", name="Eighteen", decimals=18,
                         holder_energy=HOLDER, new_holder_energy=NEW_HOLDER,
                         energy_factor=FACTOR)
    key, owner = chain.account(trx="100")
    held = 10**21 + 1  # past SQLite's 64-bit INTEGER and a double's 53 bits
    set_token_units(chain.sandbox, token, owner, held)
    contract = chain.tron.get_contract(token)  # its ABI from wallet/getcontract
    assert (contract.functions.decimals(), contract.functions.symbol(),
            contract.functions.name()) == (18, "E18", "Eighteen")
    newcomer, sent = random_address(), 10**19 + 7
    builder = contract.functions.transfer(newcomer, sent).with_owner(owner).fee_limit(FEE_LIMIT)
    info = _run(chain, builder, key)
    assert info["receipt"]["result"] == "SUCCESS"
    assert info["receipt"]["energy_usage_total"] == _charged(NEW_HOLDER, FACTOR)
    assert info["contract_address"] == token
    (log,) = info["log"]
    assert log["address"] == token and int(log["data"], 16) == sent
    assert contract.functions.balanceOf(newcomer) == sent
    assert contract.functions.balanceOf(owner) == held - sent
    assert token_units(chain.sandbox, token, owner) == held - sent
    assert contract.functions.totalSupply() == held
    again = _run(chain, contract.functions.transfer(newcomer, 1).with_owner(owner)
                 .fee_limit(FEE_LIMIT), key)
    assert again["receipt"]["energy_usage_total"] == _charged(HOLDER, FACTOR)  # a holder now
    block = chain.tron.get_block(again["blockNumber"])
    (packed,) = block["transactions"]
    assert packed["raw_data"]["contract"][0]["parameter"]["value"]["contract_address"] == token
    (listed,) = [t for t in chain.transactions(owner=owner) if t["txid"] == info["id"]]
    assert (listed["token"], listed["amount"]) == (token, "10.000000000000000007")


def test_a_0_decimal_token_and_a_transfer_past_the_balance_reverting(chain):
    token = create_token(chain.sandbox, symbol="WHOLE", decimals=0, energy_factor=0)
    key, owner = chain.account(trx="100")
    _, holder = chain.account(trx="1")
    set_token_units(chain.sandbox, token, owner, 5)
    set_token_units(chain.sandbox, token, holder, 1)
    contract = chain.tron.get_contract(token)
    assert contract.functions.decimals() == 0
    info = _run(chain, contract.functions.transfer(holder, 5).with_owner(owner)
                .fee_limit(FEE_LIMIT), key)
    assert info["receipt"]["energy_usage_total"] == 14_631  # the default base, factor 0
    reverted = _run(chain, contract.functions.transfer(holder, 1).with_owner(owner)
                    .fee_limit(FEE_LIMIT), key)
    assert reverted["receipt"]["result"] == "REVERT" and "log" not in reverted
    assert (contract.functions.balanceOf(owner), contract.functions.balanceOf(holder)) == (0, 6)


def test_a_contract_without_decimals_or_symbol_reverts_those_calls(chain):
    """What the provider refuses a token for: no ``decimals()``, no ``symbol()``, or
    decimals past 36 (a uint8 allows up to 255)."""
    token = create_token(chain.sandbox, symbol="NODEC", decimals=None)
    contract = chain.tron.get_contract(token)
    with pytest.raises(TvmError, match="REVERT opcode executed"):
        contract.functions.decimals()
    assert contract.functions.symbol() == "NODEC"
    mute = chain.tron.get_contract(create_token(chain.sandbox, symbol=None, decimals=6))
    with pytest.raises(TvmError, match="REVERT opcode executed"):
        mute.functions.symbol()
    assert mute.functions.decimals() == 6
    wide = chain.tron.get_contract(create_token(chain.sandbox, symbol="WIDE", decimals=77))
    assert wide.functions.decimals() == 77


def test_estimates_for_a_holder_a_new_holder_and_a_changed_factor(chain):
    token = create_token(chain.sandbox, symbol="EST", decimals=6, holder_energy=HOLDER,
                         new_holder_energy=NEW_HOLDER, energy_factor=FACTOR)
    _, owner = chain.account(trx="1")
    _, holder = chain.account(trx="1")
    set_token_units(chain.sandbox, token, owner, 10)
    set_token_units(chain.sandbox, token, holder, 1)
    newcomer = random_address()
    assert _estimate(chain, token, owner, holder, 1)["energy_required"] == \
        _charged(HOLDER, FACTOR)
    assert _estimate(chain, token, owner, newcomer, 1)["energy_required"] == \
        _charged(NEW_HOLDER, FACTOR)
    too_much = _estimate(chain, token, owner, holder, 11)
    assert too_much["result"]["code"] == "CONTRACT_EXE_ERROR"
    info = chain.node_post("getcontractinfo", {"value": token, "visible": True})
    assert info["contract_state"]["energy_factor"] == FACTOR
    chain.control.post(f"/chain/tokens/{token}", {"energy_factor": 34_000})
    assert _estimate(chain, token, owner, holder, 1)["energy_required"] == \
        _charged(HOLDER, 34_000)
    # the USDT estimate is untouched by another token's factor
    _, usdt_owner = chain.account(usdt="1")
    assert chain.estimate(usdt_owner, holder) == 130_285


def test_the_solidity_api_reads_a_token_as_of_the_solidified_block(chain):
    token = create_token(chain.sandbox, symbol="SOL", decimals=2)
    holder = random_address()
    set_token_units(chain.sandbox, token, holder, 700)

    def balance(path: str) -> int:
        answer = requests.post(f"{chain.sandbox.root_url}/{path}/triggerconstantcontract", json={
            "owner_address": holder, "contract_address": token, "visible": True,
            "function_selector": "balanceOf(address)",
            "parameter": encode(["address"], [_evm(holder)]).hex()},
            timeout=10).json()
        return int(answer["constant_result"][0], 16)

    assert (balance("wallet"), balance("walletsolidity")) == (700, 0)
    chain.blocks(20)
    assert balance("walletsolidity") == 700


def test_the_control_api_refuses_what_no_chain_has(chain):
    root = f"{chain.sandbox.root_url}/sandbox/chain/tokens"
    for body in ({"symbol": "X", "decimals": 256}, {"symbol": "X"}, {"decimals": 6},
                 {"symbol": "X", "decimals": 6, "energy_factor": 100_001},
                 {"symbol": "X", "decimals": 6, "holder_energy": 0},
                 {"symbol": "X", "decimals": 6, "contract": chain.sandbox.state.world
                  .usdt_contract}):
        assert requests.post(root, json=body, timeout=10).status_code == 400, body
    token = create_token(chain.sandbox, symbol="BIG", decimals=36)
    too_big = {"address": random_address(), "units": str(2**256)}
    assert requests.post(f"{root}/{token}/holdings", json=too_big, timeout=10).status_code == 400
    listed = chain.control.call("GET", "/chain/tokens")
    assert listed[0]["symbol"] == "USDT" and listed[0]["decimals"] == 6
    assert any(t["contract"] == token and t["decimals"] == 36 for t in listed)


def test_trx_to_a_new_account_charges_java_trons_fees_read_from_the_chain(chain):
    """A TRX transfer creating its recipient: ``TransferActuator.execute`` adds
    ``getCreateNewAccountFeeInSystemContract`` to the fee; the bandwidth comes from
    ``BandwidthProcessor.consumeForCreateNewAccount``: staked bandwidth if it covers the
    bytes, else ``getCreateAccountFee`` burned (never the free bandwidth). tronprotocol/
    java-tron at 1e35f79a165424bbae319799d9aca92948b8f5c2, ``actuator/.../TransferActuator.java``
    and ``chainbase/.../db/BandwidthProcessor.java``. The fees are the chain's own
    (``getchainparameters``), each changed from its default so none is assumed."""
    defaults = {"getCreateAccountFee": 100_000, "getCreateNewAccountFeeInSystemContract":
                1_000_000}
    chain.control.post("/chain/parameters", {"getCreateAccountFee": 150_000,
                                             "getCreateNewAccountFeeInSystemContract":
                                                 1_200_000})
    try:
        chain.blocks(1)
        _new_accounts_pay(chain)
    finally:
        chain.control.post("/chain/parameters", defaults)


def _new_accounts_pay(chain: Chain) -> None:
    fees = {p["key"]: p.get("value", 0) for p in chain.tron.get_chain_parameters()}
    system, burned = fees["getCreateNewAccountFeeInSystemContract"], fees["getCreateAccountFee"]
    assert (system, burned) == (1_200_000, 150_000)
    key, owner = chain.account(trx="10")  # no staked bandwidth: the account fee is burned
    info = _run(chain, chain.tron.trx.transfer(owner, random_address(), 1_000_000), key)
    assert info["fee"] == system + burned and info["receipt"] == {"net_fee": burned}
    assert chain.wallet(owner)["trx_sun"] == 10_000_000 - 1_000_000 - system - burned
    staked_key, staked = chain.account(trx="10")
    chain.control.post(f"/addresses/{staked}/bandwidth", {"staked": 1_000})
    info = _run(chain, chain.tron.trx.transfer(staked, random_address(), 1_000_000), staked_key)
    assert info["fee"] == system and "net_fee" not in info["receipt"]
    assert chain.wallet(staked)["trx_sun"] == 10_000_000 - 1_000_000 - system


def test_multicall_reads_a_tokens_balances_and_decimals(chain):
    token = create_token(chain.sandbox, symbol="MC", decimals=18)
    silent = create_token(chain.sandbox, symbol="MUTE", decimals=None)
    holder = random_address()
    set_token_units(chain.sandbox, token, holder, 2**70)

    def aggregate(calls: list[tuple[str, bytes]]) -> dict:
        parameter = encode(["(address,bytes)[]"], [[(_evm(a), d) for a, d in calls]]).hex()
        return chain.node_post("triggerconstantcontract", {
            "owner_address": holder, "contract_address": MULTICALL, "visible": True,
            "function_selector": AGGREGATE, "parameter": parameter})

    balance_of = bytes.fromhex("70a08231") + encode(["address"], [_evm(holder)])
    decimals = bytes.fromhex("313ce567")
    answer = aggregate([(token, balance_of), (token, decimals)])
    _, returned = decode(["uint256", "bytes[]"], bytes.fromhex(answer["constant_result"][0]))
    assert [int.from_bytes(r, "big") for r in returned] == [2**70, 18]
    assert "message" in aggregate([(silent, decimals)])["result"]  # its decimals() reverts


def test_transfers_placed_into_blocks_move_a_tokens_balance(chain):
    token = create_token(chain.sandbox, symbol="PLC", decimals=18)
    to = random_address()
    placed = chain.control.post("/chain/blocks/transfers", {"transfers": [
        {"to": to, "units": [str(10**20), "5"], "contract": token}]})
    (done,) = placed["transactions"]
    chain.blocks(2)
    assert token_units(chain.sandbox, token, to) == 10**20 + 5
    logs = chain.info(done["txid"])["log"]
    assert [(log["address"], int(log["data"], 16)) for log in logs] == [
        (token, 10**20), (token, 5)]
    (listed,) = chain.transactions(to=to)
    assert (listed["token"], listed["amount"]) == (token, "100.000000000000000005")


def test_tokens_and_holdings_survive_a_restart(tmp_path):
    path = str(tmp_path / "state.db")
    world = World(path)
    world.create_token(contract=TOKEN, name="Kept", symbol="KEPT", decimals=None,
                       holder_energy=1_000, new_holder_energy=2_000, energy_factor=7)
    world.set_units(TOKEN, HOLDER_ADDRESS, 2**200)
    world.close()
    again = World(path)
    try:
        assert again.token_json(TOKEN)["transfer_energy"] == {"holder": 1_000,
                                                              "new_holder": 2_001}
        assert again.token_decimals(TOKEN) is None
        assert again.units_of(TOKEN, HOLDER_ADDRESS) == 2**200
    finally:
        again.close()
