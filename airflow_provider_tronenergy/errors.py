"""The root of every exception the provider raises, and of the rooms that share one.

``except TronEnergyProviderError`` catches whatever the provider raised and nothing
else. Each room keeps its own family under it, so a caller picks the room it means:
the service's errors are not the node's, and a journal that refuses is not a store
that cannot open. A class keeps the built-in base its callers already catch
(``ValueError`` for a bad value, ``RuntimeError`` for a state that refuses).

Three branches say what a task does with an error, so the domain rooms need none of
Airflow's exceptions: :class:`NotRetryable` (fail at once), :class:`Retryable` (retry),
:class:`NothingToDo` (skip); ``airflow_errors`` is the one place they become Airflow's.
The whole tree is drawn from the classes in docs/architecture.md ("Errors";
``tests/support/error_tree.py`` draws it, ``tests/test_errors.py`` holds it).

``BodyError`` and ``DeadlineExceeded`` stay inside the HTTP plumbing: each client turns
them into its own (a ``TransportError`` or a ``NodeError``) before a caller sees them.
The root and ``ProtocolError`` are defined once, below everything, in the shared
distribution (``tronenergy_protocol.errors``: the protocol and the sandbox raise under
them without Airflow) and re-exported here: users import every error from this module.
This module imports nothing of the package, so any room can import it.
"""

from __future__ import annotations

from typing import ClassVar

from tronenergy_protocol.errors import ProtocolError, TronEnergyProviderError

__all__ = [
    "CallbackError",
    "ConnectionMissing",
    "NotRetryable",
    "NothingToDo",
    "ProtocolError",
    "Retryable",
    "TronEnergyProviderError",
]


class NotRetryable(TronEnergyProviderError):
    """A retry would meet the same: bad input, a refusal, a state only a person changes.

    A task fails at once (``airflow_errors``: ``AirflowFailException``); the message says
    what was, and was not, done.
    """

    retryable: ClassVar[bool] = False


class Retryable(TronEnergyProviderError):
    """Nothing was done that a retry would repeat, and a later try may pass (a store or a
    service unreachable for now): a task is retried (``AirflowException``)."""

    retryable: ClassVar[bool] = True


class NothingToDo(TronEnergyProviderError):
    """There is nothing for the task to do (no payouts, a person rejected): it is skipped
    (``AirflowSkipException``), and so are the tasks after it."""


class CallbackError(TronEnergyProviderError):
    """A callback refused, a receiver overloaded or misconfigured."""


class ConnectionMissing(NotRetryable, LookupError):
    """A ``*_conn_id`` that names no Airflow connection (or is not set where one is needed).

    Raised by the hooks (``hooks.lookup``, the one place Airflow's "not found" is
    answered) before anything is bought, signed or credited; the message names the
    setting, the id, what needs it and the fix. A typo never turns a check off.
    """
