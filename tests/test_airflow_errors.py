"""The one translation of the provider's errors into Airflow's: which fail, retry or skip."""

from __future__ import annotations

import importlib
import pkgutil
import warnings

import pytest
from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    AirflowSkipException,
)

import airflow_provider_tronenergy as package
from airflow_provider_tronenergy.airflow_errors import as_airflow, to_airflow
from airflow_provider_tronenergy.client import ServerError, ValidationError
from airflow_provider_tronenergy.errors import (
    NothingToDo,
    NotRetryable,
    Retryable,
    TronEnergyProviderError,
)
from airflow_provider_tronenergy.keeper.keep import KeeperBlind
from airflow_provider_tronenergy.keeper.policy import KeeperPolicyError
from airflow_provider_tronenergy.money.guard import SpendRefused
from airflow_provider_tronenergy.payout.energy_plan import PlanRefused
from airflow_provider_tronenergy.payout.onchain import ChainRefused, ChainUnread
from airflow_provider_tronenergy.payout.rows import PayoutInputError
from airflow_provider_tronenergy.payout.sheet import NoPayouts
from airflow_provider_tronenergy.purchase import PurchaseRetry, PurchaseStopped


def _verdicts() -> list[type[TronEnergyProviderError]]:
    """Every class under the three verdicts, every module imported."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not info.name.endswith("__main__"):
                importlib.import_module(info.name)
    found: list[type[TronEnergyProviderError]] = []
    todo: list[type] = [NotRetryable, Retryable, NothingToDo]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(set(found), key=lambda cls: f"{cls.__module__}.{cls.__qualname__}")


def _instance(cls: type[BaseException], message: str) -> BaseException:
    """An instance carrying ``message``, whatever the class's own constructor asks for."""
    exc = cls.__new__(cls, message)
    BaseException.__init__(exc, message)
    return exc


EXPECTED = {NotRetryable: AirflowFailException, Retryable: AirflowException,
            NothingToDo: AirflowSkipException}


@pytest.mark.parametrize("cls", _verdicts(), ids=lambda cls: cls.__qualname__)
def test_each_provider_verdict_becomes_its_airflow_exception(cls):
    branch = next(base for base in EXPECTED if issubclass(cls, base))
    exc = _instance(cls, "why, and that nothing was bought")
    airflow = to_airflow(exc)
    assert type(airflow) is EXPECTED[branch]  # not a subclass: a retry is not a fail
    assert str(airflow) == "why, and that nothing was bought"


@pytest.mark.parametrize(("error", "airflow"), [
    (PurchaseStopped("buy: refused"), AirflowFailException),
    (SpendRefused("max_spend_trx 100 TRX: 99 TRX already spent"), AirflowFailException),
    (KeeperPolicyError("floor above target"), AirflowFailException),
    (PurchaseRetry("the journal is unavailable"), AirflowException),
    (KeeperBlind("the chain could not be read"), AirflowException),
    (NothingToDo("no payouts"), AirflowSkipException),
    (PayoutInputError("bad payout rows (nothing was bought)"), AirflowFailException),
    (PlanRefused("under the service's min_energy"), AirflowFailException),
    (ChainRefused("the hot wallet cannot send this batch"), AirflowFailException),
    (ChainUnread("cannot read the wallet's energy on chain"), AirflowException),
    (NoPayouts("no payouts_file and no payouts"), AirflowSkipException),
])
def test_the_rooms_verdicts(error, airflow):
    """Bad input and refusals never retried, a store or a read down retried, nothing: skip."""
    with pytest.raises(airflow) as raised, as_airflow():
        raise error
    assert type(raised.value) is airflow
    assert str(raised.value) == str(error)
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


@pytest.mark.parametrize("error", [ServerError("busy"), ValidationError("x", "bad"),
                                   RuntimeError("a bug"), AirflowFailException("already")])
def test_anything_else_goes_on_as_it_is(error):
    """A service's error is retried by Airflow as before; an Airflow verdict stays one."""
    assert to_airflow(error) is error
    with pytest.raises(type(error)) as raised, as_airflow():
        raise error
    assert raised.value is error


def test_the_branches_say_whether_a_retry_may_pass():
    assert NotRetryable.retryable is False and Retryable.retryable is True
    assert not issubclass(NotRetryable, Retryable) and not issubclass(Retryable, NotRetryable)
    assert len(_verdicts()) > 6  # the walk found the rooms' classes, not only the branches
