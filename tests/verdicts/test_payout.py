"""The payout room's errors as a payout task's verdict: one function, every case."""

from __future__ import annotations

import pytest
from airflow.providers.common.compat.sdk import AirflowException, AirflowFailException

from airflow_provider_tronenergy.node.errors import NodeError, UnreliableNode
from airflow_provider_tronenergy.payout.funds import FundsInFlight, PayoutRefused
from airflow_provider_tronenergy.payout.lease import LeaseLost, WalletBusy
from airflow_provider_tronenergy.payout.rows import PayoutInputError
from airflow_provider_tronenergy.payout.send import PayoutConflict
from airflow_provider_tronenergy.signer import SignerError, SignerThrottled
from airflow_provider_tronenergy.verdicts.payout import as_task, task_verdict


@pytest.mark.parametrize("error", [PayoutInputError("row 0: must be positive"),
                                   PayoutConflict("id:p1 was journaled as 5 units"),
                                   PayoutRefused("tokens: 3 USDT short"),
                                   SignerError("no such key")])
def test_bad_input_and_what_a_person_must_fix_are_never_retried(error):
    verdict = task_verdict(error)
    assert type(verdict) is AirflowFailException and str(error) in str(verdict)


@pytest.mark.parametrize("error", [UnreliableNode("the head is ahead of the clock"),
                                   FundsInFlight("payable once 3 transfers land"),
                                   WalletBusy("another task holds the lease"),
                                   LeaseLost("the lease lapsed"),
                                   SignerThrottled("slow down")])
def test_what_time_may_fix_fails_the_try(error):
    verdict = task_verdict(error)
    assert type(verdict) is AirflowException and str(error) in str(verdict)


def test_other_provider_errors_are_raised_as_they_are_and_retried():
    error = NodeError("no answer")
    assert task_verdict(error) is error
    with pytest.raises(NodeError):
        as_task(lambda: (_ for _ in ()).throw(error))


def test_an_airflow_exception_passes_through_untouched():
    with pytest.raises(AirflowFailException, match="already a verdict"):
        as_task(lambda: (_ for _ in ()).throw(AirflowFailException("already a verdict")))
