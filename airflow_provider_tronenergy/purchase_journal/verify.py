"""Before a person's order id is recorded: is that order really this purchase's?

An order id typed from the console can be a real order for another address or
another amount; recorded, the next attempt would report it reused and the
payouts would lack their energy. So the order is read from the service and
compared with the journaled purchase: its target address and its energy (an
order that does not state them does not match), its rent time, recipient and
creation time where the service states them; and no other attempt may already
hold it. A difference refuses the answer, both sides shown,
nothing recorded; a person who really means it forces it with a reason, which
the journal keeps with their name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from airflow_provider_tronenergy.client import (
    NotFoundError,
    Order,
    TronEnergyClient,
    TronEnergyError,
)
from airflow_provider_tronenergy.money.quote import hours
from airflow_provider_tronenergy.purchase_journal.store import (
    Entry,
    JournalError,
    PurchaseJournal,
    held_by,
    iso,
    order_id_rule,
    to_resolve,
)
from tronenergy_protocol.energy import (
    ENERGY_FIRST_TRANSFER,
    ENERGY_PER_TRANSFER,
)

# An order created this long before the purchase was sent is not its order (clock skew
# between the workers and the service is allowed for).
CREATED_BEFORE_SENT_SECONDS: Final = 600

OrderRead = Callable[[str], Order | str]
"""Reads an order from the service: the order, or why it could not be read."""


@dataclass(frozen=True)
class Difference:
    """One field on which the order and the journaled purchase disagree."""

    what: str
    journaled: str
    order: str


@dataclass(frozen=True)
class OrderCheck:
    """An order id compared with the journaled purchase it is offered for."""

    entry: Entry
    order_id: str
    order: Order | None  # None: it could not be read (see problems)
    differences: tuple[Difference, ...]
    problems: tuple[str, ...]  # the order could not be read, or another attempt holds it

    @property
    def ok(self) -> bool:
        return not self.differences and not self.problems

    def agreed(self) -> str:
        """What the order and the purchase agree on, for the person who resolved it."""
        order = self.order
        if order is None or not self.ok:
            return ""
        energy = f"{order.energy_amount:,}" if order.energy_amount is not None else "?"
        rent = f", {hours(order.rent_time)}" if order.rent_time is not None else ""
        return (f"order {self.order_id} is for {order.target_address}, {energy} energy{rent}, "
                "as journaled, and no other attempt holds it")

    def explain(self) -> str:
        """Every difference with both sides, then every problem, one per line."""
        lines = [f"  {d.what}: journaled {d.journaled}; order {d.order}"
                 for d in self.differences]
        return "\n".join([*lines, *(f"  {problem}" for problem in self.problems)])


class OrderMismatch(JournalError):
    """The order given for an unknown outcome is not, as far as the service says, its order."""

    def __init__(self, check: OrderCheck) -> None:
        self.check = check
        super().__init__(
            f"order {check.order_id} is not the order of purchase {check.entry.identity!r} "
            f"({check.entry.description}):\n{check.explain()}\nNothing was recorded.")


def read_order(client: TronEnergyClient, order_id: str) -> Order | str:
    """The order as the service holds it, or why it could not be read."""
    try:
        return client.get_order(order_id)
    except NotFoundError:
        return f"the service does not know order {order_id}"
    except TronEnergyError as exc:
        return f"order {order_id} could not be read from the service ({exc})"


def journaled_energies(entry: Entry) -> frozenset[int]:
    """The energy the journaled purchase buys; several when only the kind is known."""
    request = entry.request
    if isinstance(request.get("energy_amount"), int):
        return frozenset({request["energy_amount"]})
    if entry.quoted_energy is not None:  # what the price endpoint quoted before sending
        return frozenset({entry.quoted_energy})
    if isinstance(request.get("count"), int):  # unquoted buy-count: the chain's figure
        return frozenset({request["count"] * ENERGY_PER_TRANSFER})
    if "to_address" in request:  # unquoted auto-buy or smart-buy: one transfer
        return frozenset({ENERGY_PER_TRANSFER, ENERGY_FIRST_TRANSFER})
    return frozenset()


def compare(entry: Entry, order: Order) -> tuple[Difference, ...]:
    """Where ``order`` is not the journaled purchase (a field the order leaves out of its
    record counts as a difference for the target and the energy, not for the rest)."""
    differences = []
    if order.target_address != entry.target_address:
        differences.append(Difference("target address", entry.target_address,
                                      order.target_address or "not stated"))
    energies = journaled_energies(entry)
    if order.energy_amount is None or order.energy_amount not in energies:
        differences.append(Difference(
            "energy", " or ".join(f"{e:,}" for e in sorted(energies)) or "not journaled",
            f"{order.energy_amount:,}" if order.energy_amount is not None else "not stated"))
    if order.rent_time is not None and order.rent_time != entry.rent_hours:
        differences.append(Difference("rent time", hours(entry.rent_hours),
                                      hours(order.rent_time)))
    to_address = entry.request.get("to_address")
    if to_address and order.to_address is not None and order.to_address != to_address:
        differences.append(Difference("to address", to_address, order.to_address))
    if order.created_at is not None and \
            order.created_at.timestamp() < entry.sent_at - CREATED_BEFORE_SENT_SECONDS:
        differences.append(Difference("time", f"sent {iso(entry.sent_at)}",
                                      f"created {iso(order.created_at.timestamp())}, before"))
    return tuple(differences)


def check_order(journal: PurchaseJournal, entry: Entry, order_id: str,
                order: Order | str) -> OrderCheck:
    """``order`` (as :func:`read_order` gave it) checked against ``entry`` and the journal."""
    problems = [order] if isinstance(order, str) else []
    problems += [f"order {order_id} is already {held_by(other)}"
                 for other in journal.holders(order_id) if other.id != entry.id]
    if isinstance(order, str):
        return OrderCheck(entry, order_id, None, (), tuple(problems))
    return OrderCheck(entry, order_id, order, compare(entry, order), tuple(problems))


def resolve_placed(journal: PurchaseJournal, identity: str, order_id: str, read: OrderRead, *,
                   by: str | None, note: str | None = None, force: str | None = None,
                   login: str | None = None) -> tuple[Entry, OrderCheck]:
    """Record that an unknown outcome was placed as ``order_id``, once the order checks out.

    ``read`` fetches the order (called only once the id and the entry are sound). A
    mismatch raises :class:`OrderMismatch`, nothing recorded, unless ``force`` gives the
    reason: then it is recorded with that reason, ``login`` and the differences.
    """
    order_id = order_id_rule(order_id)
    if force is not None and not force.strip():
        raise JournalError("forcing an order needs a reason (--reason)")
    entry = to_resolve(journal.latest(identity), identity)
    check = check_order(journal, entry, order_id, read(order_id))
    if not check.ok and force is None:
        raise OrderMismatch(check)
    if force is not None:
        who = login or by or "unknown"
        seen = "; ".join(line.strip() for line in check.explain().splitlines()) or \
            "the order matched"
        note = "; ".join(filter(None, [f"FORCED by {who}: {force.strip()} ({seen})", note]))
    resolved = journal.resolve(identity, order_id=order_id, by=by, note=note,
                               attempt=entry.attempt, shared=force is not None)
    return resolved, check

