"""The chain's parameters over real HTTP: java-tron's reads, read by tronpy as well, and the
sandbox's controls, whose changes apply from the next block on (a manual clock makes the
blocks: nothing moves until the test advances it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
from tronpy import Tron
from tronpy.providers import HTTPProvider

from support.orders import ManualClock
from support.sandbox import running_sandbox
from tronenergy_protocol.address import decode_address, random_address
from tronenergy_sandbox import SandboxServer

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
BLOCK = 3.0  # seconds between blocks at time_scale 1


@pytest.fixture
def chain() -> Iterator[SandboxServer]:
    with running_sandbox(time_scale=1.0, clock=ManualClock()) as server:
        yield server


def _post(server: SandboxServer, path: str, body: object = None) -> requests.Response:
    return requests.post(server.root_url + path, json=body, timeout=10)


def _fees(server: SandboxServer) -> dict[str, int]:
    answer = _post(server, "/wallet/getchainparameters", {"visible": True}).json()
    return {row["key"]: row.get("value", 0) for row in answer["chainParameter"]}


def _factor(server: SandboxServer) -> int:
    info = _post(server, "/wallet/getcontractinfo", {"value": USDT, "visible": True}).json()
    return int(info["contract_state"].get("energy_factor", 0))


def _head(server: SandboxServer) -> int:
    answer = requests.get(server.root_url + "/sandbox/chain/parameters", timeout=10).json()
    return int(answer["data"]["head_block"])


def _next_block(server: SandboxServer) -> None:
    """Move the manual clock until the next block is produced (a slot of 3 s at most)."""
    clock: ManualClock = server.state.world.clock
    head = _head(server)
    for _ in range(2):
        clock.advance(BLOCK)
        if _head(server) > head:
            return
    raise AssertionError(f"no block after head {head}")


def test_the_chains_parameters_in_java_trons_shape(chain):
    assert _fees(chain) == {"getEnergyFee": 100, "getTransactionFee": 1_000,
                            "getCreateAccountFee": 100_000,
                            "getCreateNewAccountFeeInSystemContract": 1_000_000,
                            "getFreeNetLimit": 600,
                            "getUpdateAccountPermissionFee": 100_000_000,
                            "getMultiSignFee": 1_000_000,
                            "getCreateNewAccountBandwidthRate": 1}
    tron = Tron(HTTPProvider(chain.root_url + "/"))
    keys = {row["key"] for row in tron.get_chain_parameters()}  # GET-free: tronpy POSTs
    assert "getEnergyFee" in keys
    got = requests.get(chain.root_url + "/wallet/getchainparameters", timeout=10).json()
    assert got == _post(chain, "/wallet/getchainparameters").json()


def test_usdts_contract_info_carries_its_energy_factor(chain):
    tron = Tron(HTTPProvider(chain.root_url + "/"))
    info = tron.get_contract_info(USDT)
    assert info["contract_state"]["energy_factor"] == 34_000
    assert info["smart_contract"]["contract_address"] == USDT
    hex_address = decode_address(USDT).hex()  # visible: false names it in hex
    by_hex = _post(chain, "/wallet/getcontractinfo", {"value": hex_address}).json()
    assert by_hex["contract_state"]["energy_factor"] == 34_000
    assert by_hex["smart_contract"]["contract_address"] == hex_address
    for other in (decode_address(random_address()).hex(), None):
        assert _post(chain, "/wallet/getcontractinfo", {"value": other}).json() == {}
    for base58 in (random_address(), "not an address"):  # hex expected: java-tron's error
        assert "INVALID hex String" in _post(chain, "/wallet/getcontractinfo",
                                             {"value": base58}).json()["Error"]


def test_a_fee_proposal_applies_from_the_next_block_on(chain):
    answer = _post(chain, "/sandbox/chain/parameters", {"getEnergyFee": 210,
                                                        "transaction_fee": 500})
    assert answer.status_code == 200, answer.text
    data = answer.json()["data"]
    assert data["from_block"] == data["head_block"] + 1
    assert data["in_force"]["getEnergyFee"] == 100  # the head block keeps its fees
    assert data["from_next_block"]["getEnergyFee"] == 210
    assert _fees(chain)["getEnergyFee"] == 100
    _next_block(chain)
    fees = _fees(chain)
    assert (fees["getEnergyFee"], fees["getTransactionFee"]) == (210, 500)
    assert fees["getCreateAccountFee"] == 100_000  # what was not named stays


def test_usdts_energy_factor_moves_from_the_next_block_on(chain):
    answer = _post(chain, "/sandbox/chain/contract", {"energy_factor": 10_000})
    assert answer.status_code == 200, answer.text
    usdt = answer.json()["data"]["usdt"]
    assert usdt["transfer_energy"] == {"holder": 29_236, "new_recipient": 59_236}
    assert usdt["energy_factor_in_force"] == 34_000 and _factor(chain) == 34_000
    _next_block(chain)
    assert _factor(chain) == 10_000
    assert _post(chain, "/sandbox/chain/contract", {"energy_factor": 0}).status_code == 200
    _next_block(chain)
    info = _post(chain, "/wallet/getcontractinfo", {"value": USDT, "visible": True}).json()
    assert "energy_factor" not in info["contract_state"]  # proto3 JSON leaves a zero out


@pytest.mark.parametrize(("path", "body", "words"), [
    ("/sandbox/chain/parameters", {"getEnergyFee": -1}, "getEnergyFee must be in"),
    ("/sandbox/chain/parameters", {"getEnergyFee": "210"}, "must be an integer"),
    ("/sandbox/chain/parameters", {"getEnergyFee": 2.5}, "must be an integer"),
    ("/sandbox/chain/parameters", {"getFreeNetLimit": 100_001}, "getFreeNetLimit must be in"),
    ("/sandbox/chain/parameters", {"getGasPrice": 1}, "unknown chain parameter"),
    ("/sandbox/chain/parameters", {}, "nothing to change"),
    ("/sandbox/chain/parameters", [1], "JSON object"),
    ("/sandbox/chain/contract", {"energy_factor": 100_001}, "energy_factor must be in"),
    ("/sandbox/chain/contract", {"base_energy": 0}, "base_energy must be in"),
    ("/sandbox/chain/contract", {"energy_factor": True}, "must be an integer"),
    ("/sandbox/chain/contract", {"threshold": 1}, "unknown contract parameter"),
])
def test_a_refused_change_is_a_clear_400_and_changes_nothing(chain, path, body, words):
    before = requests.get(chain.root_url + "/sandbox/chain/parameters", timeout=10).json()
    answer = _post(chain, path, body)
    assert answer.status_code == 400, answer.text
    assert words in answer.json()["message"]
    _next_block(chain)
    after = requests.get(chain.root_url + "/sandbox/chain/parameters", timeout=10).json()
    assert after["data"]["from_next_block"] == before["data"]["from_next_block"]
    assert after["data"]["usdt"] == before["data"]["usdt"]
