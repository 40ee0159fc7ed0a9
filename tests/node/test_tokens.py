"""A payout's token read from the chain: the sandbox's USDT over real HTTP, a contract that
answers no decimals() refused before anything is signed, names resolved through the node
connection's network and its tokens extra."""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.tokens import (
    TRX_TOKEN,
    Token,
    TokenBook,
    TokenRefused,
    decode_symbol,
    token_names,
)
from airflow_provider_tronenergy.payout.batch import PayoutBatch
from airflow_provider_tronenergy.payout.rows import PayoutInputError
from support.sandbox import sandbox_fixture
from tronenergy_protocol.address import random_address

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
OTHER = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
TO = "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"
sandbox = sandbox_fixture()


@pytest.fixture
def node(sandbox):
    with TronNodeClient(sandbox.root_url, tokens={"usdc": OTHER}) as client:
        yield client


def test_usdt_is_read_from_its_contract_by_name_or_address(node):
    book = TokenBook(node)
    usdt = book.token("USDT")
    assert (usdt.name, usdt.contract, usdt.decimals) == ("USDT", USDT, 6)
    assert book.token(USDT) == usdt and book.token("") == usdt and book.token(None) == usdt
    assert book.token("trx") == TRX_TOKEN and TRX_TOKEN.is_trx and not usdt.is_trx
    assert book.by_name() == {"USDT": usdt}


def test_a_contract_without_decimals_is_refused_naming_it(node):
    nothing = random_address()
    book = TokenBook(node)
    with pytest.raises(TokenRefused, match=f"{nothing} answers no decimals"):
        book.token(nothing)
    with pytest.raises(PayoutInputError) as refused:
        PayoutBatch.of([{"recipient": TO, "amount": "1", "token": nothing},
                        {"recipient": TO, "amount": "2"}], batch_id="b", tokens=book.token)
    assert "row 0" in str(refused.value) and nothing in str(refused.value)
    assert "nothing was signed" in str(refused.value)


def test_names_come_from_the_network_and_the_tokens_extra(node):
    assert node.token_contracts == {"USDT": USDT, "USDC": OTHER}
    book = TokenBook(node)
    assert book.contract_of("usdc") == OTHER
    with pytest.raises(TokenRefused, match=r"unknown token 'DAI'.*USDC, USDT"):
        book.contract_of("DAI")
    with pytest.raises(TokenRefused, match="must be text"):
        book.contract_of(5)


@pytest.mark.parametrize("extra, message", [
    ([OTHER], "must be an object"),
    ({"USDT": OTHER}, "USDT is not configurable"),
    ({"trx": OTHER}, "TRX is not configurable"),
    ({"US DC": OTHER}, "letters and digits"),
    ({"USDC": "T123"}, "base58 address"),
])
def test_a_bad_tokens_extra_is_refused(extra, message):
    with pytest.raises(ValueError, match=message):
        token_names(extra, USDT)


def test_symbols_as_string_or_bytes32():
    string = (f"{32:064x}{4:064x}" + b"USDC".hex().ljust(64, "0"))
    assert decode_symbol(string) == "USDC"
    assert decode_symbol(b"MKR".hex().ljust(64, "0")) == "MKR"
    assert decode_symbol("") is None and decode_symbol("zz") is None
    assert decode_symbol(f"{32:064x}{400:064x}") is None


def test_a_batch_mixes_tokens_each_row_in_its_decimals(node):
    batch = PayoutBatch.of([{"recipient": TO, "amount": "1.5", "token": "TRX"},
                            {"recipient": TO, "amount": "2", "token": USDT}],
                           batch_id="b", tokens=TokenBook(node).token)
    assert [(p.token, p.units) for p in batch.rows] == [("TRX", 1_500_000), ("USDT", 2_000_000)]
    assert batch.token_of(batch.rows[0]) == TRX_TOKEN
    assert isinstance(batch.token_of(batch.rows[1]), Token)
