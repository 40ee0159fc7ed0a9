"""The one place the provider's errors become Airflow's: a task's verdict, read in one spot.

The domain rooms (purchase, money, keeper, journal, deposits, payout) raise the
provider's errors only (:mod:`~airflow_provider_tronenergy.errors`); the Airflow-facing
rooms (operators, sensors, triggers, and the example DAGs' tasks) wrap their calls in
:func:`as_airflow`, so that "bad input is never retried" is this module's rule:

* :class:`~airflow_provider_tronenergy.errors.NotRetryable` (bad input, a refusal, a
  state only a person changes) -> ``AirflowFailException``: the task fails without retry;
* :class:`~airflow_provider_tronenergy.errors.Retryable` -> ``AirflowException``: the
  task's retries apply;
* :class:`~airflow_provider_tronenergy.errors.NothingToDo` -> ``AirflowSkipException``;
* anything else goes on as it is (a service's or a node's error is retried by Airflow,
  as every exception that is not a fail or a skip).

The message is the error's, unchanged; the provider's error is not chained (its
message is the whole story, and a chained cause could carry a request's details).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    AirflowSkipException,
)

from airflow_provider_tronenergy.errors import NothingToDo, NotRetryable, Retryable


def to_airflow(exc: BaseException) -> BaseException:
    """The exception Airflow should see for ``exc`` (``exc`` itself when it is not one of
    the provider's verdicts)."""
    if isinstance(exc, NotRetryable):
        return AirflowFailException(str(exc))
    if isinstance(exc, Retryable):
        return AirflowException(str(exc))
    if isinstance(exc, NothingToDo):
        return AirflowSkipException(str(exc))
    return exc


@contextmanager
def as_airflow() -> Iterator[None]:
    """Raise the provider's verdicts inside the block as Airflow's (see :func:`to_airflow`)."""
    try:
        yield
    except (NotRetryable, Retryable, NothingToDo) as exc:
        raise to_airflow(exc) from None
