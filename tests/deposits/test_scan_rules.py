"""The scan's rules without a chain: bad input refused before any read, the request budget's
spacing, and the one wait rule (head moved, node trouble, timeout, error)."""

from __future__ import annotations

import logging

import pytest

from airflow_provider_tronenergy.deposits.scan.budget import ScanBudget
from airflow_provider_tronenergy.deposits.scan.core import (
    DepositScan,
    ScanSettings,
    ScanSettingsError,
)
from airflow_provider_tronenergy.deposits.scan.tokens import TokenRefused
from airflow_provider_tronenergy.deposits.scan.wait import HeadWatch
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import NodeError
from tronenergy_protocol.address import random_address

log = logging.getLogger(__name__)


class Counting:
    """A node whose every read is counted (and fails): nothing may be read."""

    usdt_contract = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
    token_contracts = {"USDT": usdt_contract, "USDC": "TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8"}

    def __init__(self) -> None:
        self.reads = 0

    def __getattr__(self, name: str):
        def read(*args, **kwargs):
            self.reads += 1
            raise NodeError("unreachable")
        return read


@pytest.mark.parametrize("addresses", [
    ["TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u"],  # a checksum off by one letter
    ["0x" + "ab" * 20], [], "", None, [random_address(), 12]])
def test_addresses_not_base58check_are_refused_before_any_read(addresses):
    node = Counting()
    with pytest.raises(ScanSettingsError, match="address"):
        DepositScan(None, node, addresses)  # type: ignore[arg-type]
    assert node.reads == 0


@pytest.mark.parametrize(("values", "match"), [
    ({"start": "0"}, "start"), ({"start": "genesis"}, "start"),
    ({"max_concurrency": "0"}, "max_concurrency"), ({"blocks_per_range": 101}, "blocks_per_range"),
    ({"max_requests_per_second": "0"}, "max_requests_per_second"),
    ({"confirmations": "-1"}, "confirmations"), ({"max_blocks_per_run": 1.5}, "whole"),
    ({"pages": 3}, "unknown")])
def test_settings_out_of_range_are_refused(values, match):
    with pytest.raises(ScanSettingsError, match=match):
        ScanSettings.from_values(values)


def test_templated_settings_are_read_from_text():
    settings = ScanSettings.from_values({"start": "68000000", "max_concurrency": "4",
                                         "max_requests_per_second": "12.5",
                                         "confirmations": ""})
    assert (settings.start, settings.max_concurrency, settings.max_requests_per_second,
            settings.confirmations) == (68_000_000, 4, 12.5, None)
    assert ScanSettings.from_values({"start": "solid"}).start == "solid"


@pytest.mark.parametrize("token", ["", "  ", 12, "T" * 41])
def test_a_token_that_is_no_text_is_refused_before_any_read(token):
    node = Counting()
    with pytest.raises(ScanSettingsError, match="token"):
        DepositScan(None, node, [random_address()], token=token)  # type: ignore[arg-type]
    assert node.reads == 0


def test_a_token_name_the_connection_does_not_know_is_refused_before_any_read():
    node = Counting()
    with pytest.raises(TokenRefused, match=r"unknown token 'FAKE'.*USDC, USDT") as refused:
        DepositScan(None, node, [random_address()], token="FAKE")  # type: ignore[arg-type]
    assert isinstance(refused.value, NotRetryable) and node.reads == 0


def test_the_budget_spaces_request_starts():
    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)

    budget = ScanBudget(4, clock=lambda: now[0], sleep=sleep)
    for _ in range(5):
        budget.slot()
    assert slept == [0.25, 0.5, 0.75, 1.0] and budget.used == 5
    now[0] = 200.0
    budget.slot()
    assert len(slept) == 4  # a quiet spell earns no burst beyond one start now


def test_the_wait_ends_when_the_head_passes_the_checkpoint():
    watch = HeadWatch(100, poll_interval=3, end_time=None, log=log)
    assert watch.next_step(100) == 3
    assert watch.next_step(NodeError("no answer")) == 3  # says nothing: read again
    event = watch.next_step(101)
    assert isinstance(event, dict) and event["status"] == "moved" and event["head"] == 101


def test_the_wait_ends_with_an_error_that_will_not_pass_and_at_its_deadline():
    watch = HeadWatch(100, poll_interval=3, end_time=None, log=log)
    event = watch.next_step(ValueError("connection 'x': host must be the node's URL"))
    assert isinstance(event, dict) and event["status"] == "error"
    late = HeadWatch(100, poll_interval=3, end_time=1.0, log=log)
    event = late.next_step(99)
    assert isinstance(event, dict) and event["status"] == "timeout"


def test_a_real_client_is_never_called_on_bad_input():
    client = TronNodeClient("http://127.0.0.1:9", max_retries=0)
    with pytest.raises(ScanSettingsError):
        DepositScan(None, client, ["not-an-address"])  # type: ignore[arg-type]
