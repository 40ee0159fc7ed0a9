"""node.transfers: the one rule an incoming transfer is read by, from receipts shaped as
java-tron prints them (``GetTransactionInfoByIdServlet``: logs through
``Util.convertLogAddressToTronAddress`` with ``visible``; Tron.proto's ``contractResult``)."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from airflow_provider_tronenergy.node.transfers import (
    TRANSFER_TOPIC,
    TransferReceipt,
    other_transfers,
    token_transfers,
    trx_transfer,
)
from tronenergy_protocol.address import (
    b58encode,
    decode_address,
    random_address,
)

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
WHERE = {"block_number": 70_000_123, "block_timestamp_ms": 1_764_000_000_000}


def word(address: str) -> str:
    return decode_address(address)[1:].rjust(32, b"\0").hex()


def hex20(address: str) -> str:
    return decode_address(address)[1:].hex()


def log(contract: str, sender: str, to: str, units: int, *, shown: str = "t") -> dict[str, Any]:
    """A Transfer log; ``shown``: ``t`` (visible, a T-address), ``hex`` (20 bytes), ``hex41``
    or ``b58-20`` (releases before convertLogAddressToTronAddress: base58check of 20 bytes)."""
    import hashlib

    raw = decode_address(contract)[1:]
    address = {"t": contract, "hex": raw.hex(), "hex41": "41" + raw.hex(),
               "b58-20": b58encode(raw + hashlib.sha256(hashlib.sha256(raw).digest())
                                   .digest()[:4])}[shown]
    return {"address": address, "topics": [TRANSFER_TOPIC, word(sender), word(to)],
            "data": f"{units:064x}"}


def receipt(*logs: dict[str, Any], outcome: str = "SUCCESS", **extra: Any) -> dict[str, Any]:
    tx = secrets.token_hex(32)
    return {"id": tx, "blockNumber": WHERE["block_number"],
            "blockTimeStamp": WHERE["block_timestamp_ms"], "contractResult": [""],
            "receipt": {"energy_usage_total": 29_650, "energy_usage": 29_650,
                        "net_usage": 345, "result": outcome}, "log": list(logs), **extra}


def read(payload: dict[str, Any], contract: str = USDT) -> list[tuple[int, str, str, int]]:
    return [(t.index, t.from_address, t.to_address, t.units)
            for t in token_transfers(payload["id"], payload, contract=contract, **WHERE)]


@pytest.mark.parametrize("shown", ["t", "hex", "hex41", "b58-20"])
def test_a_logs_contract_in_every_shape_a_node_prints(shown):
    """Visible answers print the log's address as a T-address (java-tron's
    ``Util.convertLogAddressToTronAddress``); the code before read only the 20-byte base58
    form, so a real node's visible receipt was refused (this test failed for ``t``)."""
    sender, to = random_address(), random_address()
    assert read(receipt(log(USDT, sender, to, 1_500_000, shown=shown))) == [
        (0, sender, to, 1_500_000)]


def test_several_transfers_in_one_transaction_each_keyed_by_its_log():
    a, b, sender = random_address(), random_address(), random_address()
    lookalike = random_address()
    payload = receipt(log(USDT, sender, a, 1), log(lookalike, sender, a, 5),
                      {"address": hex20(USDT), "topics": ["8c5be1e5" + "0" * 56], "data": ""},
                      log(USDT, sender, b, 7), log(USDT, sender, a, 2))
    assert read(payload) == [(0, sender, a, 1), (3, sender, b, 7), (4, sender, a, 2)]
    transfers = token_transfers(payload["id"], payload, contract=USDT, **WHERE)
    assert {t.key for t in transfers} == {(payload["id"], 0), (payload["id"], 3),
                                          (payload["id"], 4)}
    assert all(t.contract == USDT and t.block_number == WHERE["block_number"]
               for t in transfers)


def test_a_look_alike_contract_is_not_the_token():
    """Another contract's Transfer log, whatever its symbol, is not a transfer of USDT; it is
    shown among the other contracts' transfers."""
    fake, to = random_address(), random_address()
    payload = receipt(log(fake, random_address(), to, 1_000_000_000))
    assert read(payload) == []
    [other] = other_transfers(payload["id"], payload, contract=USDT, **WHERE)
    assert (other.contract, other.to_address, other.units) == (fake, to, 1_000_000_000)


@pytest.mark.parametrize("failure", [{"result": "FAILED"}, {"receipt_result": "REVERT"},
                                     {"receipt_result": "OUT_OF_ENERGY"}])
def test_a_failed_receipt_moves_nothing(failure):
    payload = receipt(log(USDT, random_address(), random_address(), 9),
                      outcome=failure.get("receipt_result", "SUCCESS"),
                      **({"result": "FAILED"} if "result" in failure else {}))
    assert read(payload) == []
    assert other_transfers(payload["id"], payload, contract=USDT, **WHERE) == []


@pytest.mark.parametrize("damage", [
    lambda item: item.update(topics=item["topics"][:2]),  # no recipient
    lambda item: item.update(topics=[*item["topics"], "00" * 32]),  # a fourth topic
    lambda item: item.update(data=item["data"][:62]),  # short amount
    lambda item: item.update(data=" " + item["data"][1:]),  # int() would take the space
    lambda item: item.update(data="0x" + item["data"][2:]),  # int(..., 16) takes 0x
    lambda item: item["topics"].__setitem__(2, "ff" * 12 + item["topics"][2][24:]),
    lambda item: item["topics"].__setitem__(1, "00 " + item["topics"][1][3:]),
], ids=["two-topics", "four-topics", "short-data", "space", "0x", "dirty-address",
        "space-in-topic"])
def test_a_malformed_log_of_the_token_is_refused(damage):
    """The token's own contract emitting a Transfer that does not read as one means the
    answer is not what it seems: refused, never skipped (a skipped log could hide a
    deposit; a misread one could credit the wrong amount)."""
    item = log(USDT, random_address(), random_address(), 1_000_000)
    damage(item)
    with pytest.raises(ValueError, match="not a Transfer"):
        read(receipt(item))


def test_a_malformed_log_of_another_contract_is_only_skipped():
    item = log(random_address(), random_address(), random_address(), 5)
    item["data"] = "zz"
    payload = receipt(item)
    assert read(payload) == []
    assert other_transfers(payload["id"], payload, contract=USDT, **WHERE) == []


@pytest.mark.parametrize("address", ["41" + "zz" * 20, "zz" * 20, "T" + "1" * 33, 7])
def test_a_log_address_that_is_no_address_is_refused(address):
    item = log(USDT, random_address(), random_address(), 5)
    item["address"] = address
    with pytest.raises(ValueError, match="log's address"):
        read(receipt(item))


def test_a_zero_transfer_is_no_deposit():
    """Zero-value Transfers (address poisoning) move nothing and are left out."""
    to = random_address()
    payload = receipt(log(USDT, random_address(), to, 0), log(USDT, random_address(), to, 3))
    assert [(i, units) for i, _, _, units in read(payload)] == [(1, 3)]


def test_a_receipt_reads_its_transfers_and_the_others():
    to, fake = random_address(), random_address()
    payload = receipt(log(USDT, random_address(), to, 4), log(fake, random_address(), to, 8))
    got = TransferReceipt.from_node(payload["id"], payload, contract=USDT, solidified=True)
    assert got.info.solidified and not got.info.failed
    assert [t.units for t in got.transfers] == [4]
    assert [t.units for t in got.others] == [8]


def trx(amount: Any = 2_500_000, *, ret: Any = None, visible: bool = True,
        kind: str = "TransferContract") -> dict[str, Any]:
    owner, to = random_address(), random_address()
    shown = (lambda a: a) if visible else (lambda a: decode_address(a).hex())
    return {"ret": [{"contractRet": "SUCCESS"}] if ret is None else ret,
            "txID": secrets.token_hex(32),
            "raw_data": {"contract": [{"parameter": {"value": {
                "amount": amount, "owner_address": shown(owner), "to_address": shown(to)},
                "type_url": f"type.googleapis.com/protocol.{kind}"}, "type": kind}]},
            "_owner": owner, "_to": to}


@pytest.mark.parametrize("visible", [True, False])
def test_a_trx_transfer_in_either_address_shape(visible):
    tx = trx(visible=visible)
    got = trx_transfer(tx, **WHERE)
    assert got is not None
    assert (got.index, got.contract, got.from_address, got.to_address, got.units) == (
        0, None, tx["_owner"], tx["_to"], 2_500_000)


@pytest.mark.parametrize("ret", [[{}], [{"contractRet": "REVERT"}], []],
                         ids=["default", "revert", "none"])
def test_a_trx_transfer_without_success_proves_nothing(ret):
    """Tron.proto: ``DEFAULT = 0`` (left out when printed), ``SUCCESS = 1``; the code before
    took a missing ``contractRet`` as success (this test failed for ``default`` and ``none``)."""
    assert trx_transfer(trx(ret=ret), **WHERE) is None


def test_another_contract_type_is_not_a_trx_transfer():
    assert trx_transfer(trx(kind="TransferAssetContract"), **WHERE) is None


@pytest.mark.parametrize("amount", [0, -5, "5", 1.5, True])
def test_a_trx_amount_must_be_a_positive_integer(amount):
    with pytest.raises(ValueError, match="amount"):
        trx_transfer(trx(amount), **WHERE)
