"""The money guards every paying task passes before it spends: its limits and the balance.

Two limits, one meaning each, the same on every operator:

- ``max_order_trx``: what one order, purchase or activation may cost (its quote);
- ``max_spend_trx``: what one task may spend for its key in all its tries and runs,
  refills and top-ups counted, as the purchase journal holds it (:class:`Spent`): the
  placed purchases at their cost, those whose outcome is unknown at their quote.

And the available balance. Each is refused before any call that spends, with a message
naming the limit, its figure, what was already spent and that nothing was bought.
Refusals are :class:`SpendRefused`, not retryable: a retry cannot change a quote, a
balance or what was spent.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final, Protocol

from airflow_provider_tronenergy.client import UnexpectedResponseError
from airflow_provider_tronenergy.client.errors import ValidationError
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.templated import as_decimal, chosen_none, is_unset

MAX_ORDER: Final = "max_order_trx"
MAX_SPEND: Final = "max_spend_trx"


class SpendRefused(NotRetryable, RuntimeError):
    """A spend over ``max_order_trx``, ``max_spend_trx`` or the balance, or priced by an
    answer that cannot be trusted: refused before any call that spends; the message says
    what was not done."""


class _AccountReader(Protocol):
    def get_account(self) -> Any: ...


@dataclass(frozen=True)
class Spent:
    """What a key has spent so far, as the purchase journal holds it.

    ``total``: TRX of its placed purchases (their cost) and of those whose outcome is
    unknown (their quote: an unknown outcome counts as spent). ``orders``: how many.
    ``unpriced``: purchases that bought or may have bought at a cost nobody recorded
    (sent unquoted, resolved by hand): a limit cannot be checked past them.
    """

    total: Decimal = Decimal(0)
    orders: int = 0
    unpriced: tuple[str, ...] = ()


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


def max_order(value: Any) -> Decimal | None:
    """A ``max_order_trx`` parameter: exact TRX, or None (no limit on one order) when unset."""
    return None if is_unset(value) else as_decimal(value, MAX_ORDER)


def max_spend(value: Any) -> Decimal | None:
    """A ``max_spend_trx`` parameter: exact TRX, or None where the person wrote None (or a
    template rendered a None param as ``"None"``). Empty text is refused, not read as
    "no limit": a template naming a param that is not there must not lift the cap."""
    chosen = chosen_none(value)
    if chosen is None:
        return None
    if not chosen:
        raise ValidationError(MAX_SPEND, "is empty: give a figure in TRX, or None for no "
                                         "limit on what the task spends")
    return as_decimal(chosen, MAX_SPEND)


def guard_order(cost: Decimal, *, limit: Decimal | None, what: str,
                nothing: str = "nothing bought") -> None:
    """Raise when one order (``what``) would cost more than ``max_order_trx``."""
    if limit is not None and cost > limit:
        raise SpendRefused(
            f"{MAX_ORDER} {limit} TRX: {what} would cost {cost} TRX; {nothing}")


def guard_spend(spent: Spent, cost: Decimal, *, limit: Decimal, key: str, what: str,
                nothing: str = "nothing bought") -> None:
    """Raise when ``cost`` on top of what ``key`` already spent passes ``max_spend_trx``
    (or when what it spent cannot be known)."""
    head = f"{MAX_SPEND} {limit} TRX"
    if spent.unpriced:
        raise SpendRefused(
            f"{head}: {len(spent.unpriced)} earlier purchase(s) under {key} bought or may "
            f"have bought at a cost the journal does not hold ({', '.join(spent.unpriced)}), "
            f"so what was spent cannot be checked; {nothing}")
    if spent.total + cost > limit:
        orders = f"{spent.orders} order{'' if spent.orders == 1 else 's'}"
        raise SpendRefused(
            f"{head}: {spent.total} TRX already spent under {key} ({orders}), {what} would "
            f"cost {cost} TRX; {nothing}")


def guard_cost(client: _AccountReader, total: Decimal, *, what: str, ceiling: Decimal | None,
               check_balance: bool, nothing: str = "nothing bought",
               limit_name: str = MAX_ORDER) -> Decimal | None:
    """Raise unless ``total`` TRX for ``what`` is within ``ceiling`` (the limit
    ``limit_name``) and the balance.

    The balance is read only when something is to be paid (``total > 0``); it is
    returned (None when not read), so a plan can show the person who approves it.
    """
    if ceiling is not None and total > ceiling:
        raise SpendRefused(
            f"{limit_name} {ceiling} TRX: {what} would cost {total} TRX; {nothing}")
    if check_balance and total > 0:
        with trusted_answers(what, nothing):
            available = client.get_account().available_balance
        if available < total:
            raise SpendRefused(
                f"available balance {available} TRX is short by {total - available} TRX "
                f"for {what}; {nothing}")
        return Decimal(available)
    return None
