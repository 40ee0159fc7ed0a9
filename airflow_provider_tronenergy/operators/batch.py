"""The address batch operators' base: one address or many, each checked before any call.

One service call per address, fanned out over :mod:`~airflow_provider_tronenergy.fanout`'s
bounded pool (a 429 pauses every worker); every invalid input is named in one failure,
before the first request, and an address given twice is processed once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    BaseOperator,
)

from airflow_provider_tronenergy.airflow_errors import as_airflow
from airflow_provider_tronenergy.client import TronEnergyClient, ValidationError
from airflow_provider_tronenergy.client import validation as checks
from airflow_provider_tronenergy.fanout import (
    DEFAULT_MAX_CONCURRENCY,
    ItemFailure,
    failure_report,
    run_batch,
)
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.templated import as_int

T = TypeVar("T")


class Problems:
    """Every invalid input of a task, collected so that one failure names them all."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def read(self, reader: Callable[[], T], fallback: T) -> T:
        """``reader()``, or ``fallback`` after noting its ``ValidationError``."""
        try:
            return reader()
        except ValidationError as exc:
            self.lines.append(str(exc))
            return fallback


@dataclass(frozen=True)
class AddressBatch:
    """The distinct addresses, in first-occurrence order, and how they were given."""

    addresses: list[str]
    single: bool
    duplicates: list[tuple[int, str, int]]  # (index, address, index of its first occurrence)


def read_addresses(given: Any, problems: Problems) -> AddressBatch:
    """Check every address (base58check) and drop repeats, keeping the first of each.

    A repeat would be sent twice at once: two activations of one address, one of
    them refused, and a result that contradicts the order the service holds.
    """
    if isinstance(given, str):
        items: list[Any] = [given]
        single = True
    elif isinstance(given, (bytes, Mapping)) or not isinstance(given, Iterable):
        problems.lines.append("addresses: must be one TRON address or a list of them, not "
                              f"{type(given).__name__}")
        return AddressBatch([], False, [])
    else:
        items, single = list(given), False
    first: dict[str, int] = {}
    duplicates: list[tuple[int, str, int]] = []
    for index, item in enumerate(items):
        name = "addresses" if single else f"addresses[{index}]"
        address = item.strip() if isinstance(item, str) else item
        try:
            checks.address(address, f"{name} {_short(item)}")
        except ValidationError as exc:
            problems.lines.append(str(exc))
            continue
        if address in first:
            duplicates.append((index, address, first[address]))
        else:
            first[address] = index
    return AddressBatch(list(first), single, duplicates)


def _short(item: Any) -> str:
    shown = repr(item)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def invalid_input_report(task_id: str, problems: Sequence[str], limit: int = 50) -> str:
    lines = [f"{task_id}: {len(problems)} invalid input(s); nothing was sent:"]
    lines += [f"  {problem}" for problem in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"  ... and {len(problems) - limit} more")
    return "\n".join(lines)


class TronEnergyAddressBatchOperator(BaseOperator):
    """One address or many, one service call each: the shape the batch operators share.

    Every address and parameter is checked before the first request (an invalid
    one fails the task with ``AirflowFailException``, naming each, with nothing
    sent), and an address given more than once is processed and reported once.

    :param addresses: one TRON address, or a list of them (templated).
    :param tronenergy_conn_id: connection of type ``tronenergy``.
    :param max_concurrency: calls in flight at once (at least 1).
    """

    template_fields: Sequence[str] = ("addresses", "tronenergy_conn_id")

    def __init__(self, *, addresses: str | Sequence[str],
                 tronenergy_conn_id: str = TronEnergyHook.default_conn_name,
                 max_concurrency: int | str = DEFAULT_MAX_CONCURRENCY, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.addresses = addresses
        self.tronenergy_conn_id = tronenergy_conn_id
        self.max_concurrency = max_concurrency
        self._concurrency = DEFAULT_MAX_CONCURRENCY

    def client(self) -> TronEnergyClient:
        """The service's client; an id that names no connection fails the task, not retried."""
        with as_airflow():
            return TronEnergyHook(self.tronenergy_conn_id).get_conn()

    def prepare(self, problems: Problems | None = None) -> tuple[list[str], bool]:
        """The distinct addresses and whether one was given; fails on any invalid input.

        ``problems`` carries what the subclass found wrong in its own parameters,
        so that a single failure names everything at once.
        """
        problems = Problems() if problems is None else problems
        self._concurrency = problems.read(lambda: _concurrency(self.max_concurrency),
                                          DEFAULT_MAX_CONCURRENCY)
        batch = read_addresses(self.addresses, problems)
        if problems.lines:
            raise AirflowFailException(invalid_input_report(self.task_id, problems.lines))
        if batch.duplicates:
            self.log.info(
                "%d repeated address(es); each address is processed and reported once: "
                "%s", len(batch.duplicates),
                ", ".join(f"[{i}] {a} (first at [{f}])" for i, a, f in batch.duplicates[:20]))
        return batch.addresses, batch.single

    def per_address(
        self, addresses: Sequence[str], work: Callable[[str], dict[str, Any]], verb: str
    ) -> tuple[list[dict[str, Any]], list[ItemFailure]]:
        return run_batch(addresses, work, max_concurrency=self._concurrency, log=self.log,
                         verb=verb)

    @staticmethod
    def finish(results: list[dict[str, Any]], failures: Sequence[ItemFailure], single: bool,
               verb: str) -> dict[str, Any] | list[dict[str, Any]]:
        """Fail naming every failed address (the rest were processed); else the results."""
        if failures:
            raise AirflowException(failure_report(verb, len(results), failures))
        return results[0] if single else results


def _concurrency(value: Any) -> int:
    number = as_int(value, "max_concurrency")
    if number < 1:
        raise ValidationError("max_concurrency", "must be at least 1")
    return number
