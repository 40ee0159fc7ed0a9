"""The money guards every paying task passes before it spends: a ceiling and the balance.

One rule for purchases, activations and payout plans: refuse before any call that
spends when the cost is over ``max_cost_trx`` or over the available balance, with
a message that says what would have been bought and that nothing was. Refusals are
:class:`SpendRefused`, not retryable: a retry cannot change a quote or a balance.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, Protocol

from airflow_provider_tronenergy.client import UnexpectedResponseError
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.templated import as_decimal, is_unset


class SpendRefused(NotRetryable, RuntimeError):
    """A spend over ``max_cost_trx`` or the balance, or priced by an answer that cannot be
    trusted: refused before any call that spends; the message says what was not done."""


class _AccountReader(Protocol):
    def get_account(self) -> Any: ...


@contextmanager
def trusted_answers(what: str, nothing: str = "nothing bought") -> Iterator[None]:
    """Fail for good when a quote or a balance read before spending cannot be trusted.

    A figure out of range (``client.ranges``) is the service's answer, not a passing
    fault: a retry would read the same, so the task fails without one.
    """
    try:
        yield
    except UnexpectedResponseError as exc:
        raise SpendRefused(
            f"{what}: the service's answer cannot be trusted ({exc}); {nothing}") from None


def max_cost(value: Any) -> Decimal | None:
    """A ``max_cost_trx`` parameter: exact TRX, or None (no ceiling) when it is unset."""
    return None if is_unset(value) else as_decimal(value, "max_cost_trx")


def guard_cost(client: _AccountReader, total: Decimal, *, what: str, ceiling: Decimal | None,
               check_balance: bool, nothing: str = "nothing bought") -> Decimal | None:
    """Raise unless ``total`` TRX for ``what`` is within ``ceiling`` and the balance.

    The balance is read only when something is to be paid (``total > 0``); it is
    returned (None when not read), so a plan can show the person who approves it.
    """
    if ceiling is not None and total > ceiling:
        raise SpendRefused(
            f"{what} would cost {total} TRX, over max_cost_trx {ceiling} TRX; {nothing}")
    if check_balance and total > 0:
        with trusted_answers(what, nothing):
            available = client.get_account().available_balance
        if available < total:
            raise SpendRefused(
                f"available balance {available} TRX is short by {total - available} TRX "
                f"for {what}; {nothing}")
        return Decimal(available)
    return None
