"""A connection id looked up, or refused: the one place Airflow's "not found" is answered.

A ``*_conn_id`` that names no connection is never read as "no such thing wanted": it is a
:class:`~..errors.ConnectionMissing` (not retried) naming the setting, the id, what needs
it and the fix, raised before anything is bought, signed or credited. Where a person may
choose to go without (a payout batch prepared without a node), the choice is Python
``None``, written out; the caller says how with ``otherwise``. Only a default id nobody
wrote (the callback receiver's ``tronenergy_default``) may name nothing: :func:`found`.

It imports nothing of Airflow at module level and nothing of the package but ``errors``, so
the callback receiver reads its connection through it and still runs without Airflow.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TypeVar

from airflow_provider_tronenergy.errors import ConnectionMissing

Connection = TypeVar("Connection")
"""Whatever ``get`` hands out: the Task SDK's ``Connection`` for a hook, the metadata
database's for the callback receiver in the API server."""


def existing(get: Callable[[str], Connection], conn_id: str | None, *, setting: str,
             needs: str, otherwise: str = "") -> Connection:
    """The connection ``conn_id`` names, read through ``get`` (a hook's ``get_connection``);
    None, blank text or an id that names nothing is refused.

    :param setting: the parameter the id came from (``tron_node_conn_id``), for the message.
    :param needs: what needs the connection and why ("payouts need a TRON node to ...").
    :param otherwise: where the person may go without: how ("pass tron_node_conn_id=None
        to plan without on-chain checks"), added to the fix.
    """
    from airflow.providers.common.compat.sdk import AirflowNotFoundException

    name = _named(conn_id, setting=setting, needs=needs, otherwise=otherwise)
    try:
        return get(name)
    except AirflowNotFoundException:
        raise _names_nothing(name, setting=setting, needs=needs,
                             otherwise=otherwise) from None


def found(get: Callable[[str], Connection], conn_id: str) -> Connection | None:
    """The connection a default id names, or None when it names none: for an id nobody
    wrote (the callback receiver's ``tronenergy_default``), whose absence means "not set
    up here" and is answered by the caller's own refusal. An id a person wrote goes
    through :func:`existing`."""
    from airflow.providers.common.compat.sdk import AirflowNotFoundException

    try:
        return get(conn_id)
    except AirflowNotFoundException:
        return None


async def aexisting(aget: Callable[[str], Awaitable[Connection]], conn_id: str | None, *,
                    setting: str, needs: str, otherwise: str = "") -> Connection:
    """:func:`existing` for a trigger: the connection read through ``aget`` (an async
    lookup, ``get_async_connection``), refused the same way."""
    from airflow.providers.common.compat.sdk import AirflowNotFoundException

    name = _named(conn_id, setting=setting, needs=needs, otherwise=otherwise)
    try:
        return await aget(name)
    except AirflowNotFoundException:
        raise _names_nothing(name, setting=setting, needs=needs,
                             otherwise=otherwise) from None


def _named(conn_id: str | None, *, setting: str, needs: str, otherwise: str) -> str:
    """``conn_id``, or refused when None or blank."""
    if conn_id is None or not conn_id.strip():
        said = "None" if conn_id is None else "empty"
        raise ConnectionMissing(
            f"{setting} is {said}; {needs}: name a connection{_alternative(otherwise)}")
    return conn_id


def _names_nothing(conn_id: str, *, setting: str, needs: str,
                   otherwise: str) -> ConnectionMissing:
    variable = f"AIRFLOW_CONN_{conn_id.upper()}"
    if variable in os.environ:  # Airflow 3.1 drops a connection it cannot read as unknown
        return ConnectionMissing(
            f"{setting} {conn_id!r}: ${variable} is set, but Airflow could not read a "
            f"connection from it (its Extra must be a JSON object); {needs}: fix it")
    return ConnectionMissing(f"{setting} {conn_id!r} names no connection; {needs}: "
                             f"create it{_alternative(otherwise)}")


def _alternative(otherwise: str) -> str:
    return f", or {otherwise}" if otherwise else ""
