"""What a keeper reads before it decides: the chain's figures, its own orders, the price.

Sizes come from the chain, never from constants: a wallet's ``EnergyLimit`` and
``EnergyUsed`` (``wallet/getaccountresource``) and the head block's time (the chain's
clock) through the TRON node; the keeper's own orders from the journal and the service
(on the way, until their delegation is in a block; or running until when); the price
and the order bounds from the service.
Its orders are read before the chain, so an order delegated in between is counted twice
(the keeper holds; the next wake sees the truth), never missed (it would buy again).

A run woken by its watcher starts from what the watcher read (:class:`Seen`, the wake's
payload): a wallet's ``EnergyLimit`` and ``EnergyUsed`` at the chain's time of the
reading. The run uses it instead of reading the wallet again while it is at most
``max_age`` seconds old by the chain's clock, and only when none of the keeper's orders
for the wallet ended within :data:`SETTLE` seconds before it was read: an order whose
delegation may have landed after the reading would be counted nowhere (and bought again),
so then the chain is read, as by a scheduled run.

A figure that cannot be read stops the wallet's decision: the keeper never buys blind.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

from airflow_provider_tronenergy.client import Order, OrderStatus, Price
from airflow_provider_tronenergy.keeper.book import KeeperBook, energy_of
from airflow_provider_tronenergy.keeper.decide import Market, Rental, WalletView
from airflow_provider_tronenergy.node.protocol import Node as Node  # noqa: PLC0414 (re-exported)
from airflow_provider_tronenergy.purchase_journal import EntryState

ON_THE_WAY = (OrderStatus.PENDING, OrderStatus.PROCESSING)
SETTLE = 120.0
"""Seconds after an order is done within which the keeper checks its delegation is in a
block (a few blocks on mainnet; a delegation the service never made is not waited for)."""
UNKNOWN_NOTE = "keeper: outcome unknown"
"""The note a keeper run leaves on its attempt whose answer was lost (``keeper.keep``)."""
STALE_SENDING = 120.0
"""Seconds after which a purchase still ``sending`` is no longer "being placed right now"
but an unknown outcome (its worker died mid-request): a person resolves it."""


class Service(Protocol):
    """The reads a keeper makes of the energy service (the sync client has them)."""

    def get_price(self, rent_time: Decimal) -> Price: ...

    def get_order(self, order_id: str) -> Order: ...


@dataclass(frozen=True)
class Reading:
    """One wallet's view, or why the keeper will not decide for it now."""

    view: WalletView | None
    blocked: str = ""
    seen_age: float | None = None
    """How old (chain seconds) the wake's figures it used were; None: read by this run."""


@dataclass(frozen=True)
class Seen:
    """What a keeper's watcher read of a wallet, carried by its wake to the run."""

    wallet: str
    limit: int
    used: int
    read_at: float
    """The chain's clock (head block time, seconds) when the watcher read it."""


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def seen_in(payloads: Iterable[Any], keeper: str) -> dict[str, Seen]:
    """The newest reading per wallet among the wake payloads of ``keeper``; a payload of
    another keeper, or one that is not a whole reading, gives nothing (the chain is read)."""
    found: dict[str, Seen] = {}
    for payload in payloads:
        if not isinstance(payload, Mapping) or payload.get("keeper") != keeper:
            continue
        wallet, read_at = payload.get("wallet"), payload.get("read_at")
        limit, used = _count(payload.get("limit")), _count(payload.get("used"))
        if (not isinstance(wallet, str) or limit is None or used is None
                or not isinstance(read_at, (int, float)) or isinstance(read_at, bool)
                or not math.isfinite(read_at)):
            continue
        seen = Seen(wallet, limit, used, float(read_at))
        if wallet not in found or found[wallet].read_at < seen.read_at:
            found[wallet] = seen
    return found


def market_of(price: Price) -> Market:
    """The service's price per 10,000 energy for a rent time, and its order bounds."""
    return Market(price.price_per_10k, price.min_energy, price.max_energy)


def read_wallet(node: Node, service: Service, book: KeeperBook, address: str, *,
                now: float, rent_time: Decimal, hour_seconds: float = 3600.0,
                scope: str = "", seen: Seen | None = None) -> Reading:
    """The wallet at the chain's ``now`` (head block time): chain figures and own orders.

    :param hour_seconds: seconds of chain time a rented hour lasts (3,600; less only on a
        time-compressed sandbox).
    :param scope: this run's journal scope: its own attempt in progress is not another's.
    :param seen: the wake's reading of the wallet, fresh enough to use (see the module).
    """
    window = float(rent_time) * hour_seconds + STALE_SENDING
    incoming, rentals, last_end = 0, [], -math.inf
    for entry in book.entries(address, since=time.time() - window):
        if entry.state is EntryState.SENDING:
            unknown = UNKNOWN_NOTE in (entry.note or "")
            if (not unknown and entry.scope != scope
                    and time.time() - entry.sent_at < STALE_SENDING):
                return Reading(None, f"purchase {entry.identity} is being placed by "
                                     f"another run ({entry.scope})")
            return Reading(None, f"purchase {entry.identity} has an unknown outcome: a "
                                 "person resolves it (tronenergy-purchases resolve, or the "
                                 "Energy page)")
        if entry.state is not EntryState.PLACED or not entry.order_id:
            continue
        order = service.get_order(entry.order_id)
        energy = order.energy_amount or energy_of(entry)
        if order.status in ON_THE_WAY:
            incoming += energy
        elif order.status is OrderStatus.SUCCESS:
            started = order.updated_at.timestamp() if order.updated_at else entry.sent_at
            last_end = max(last_end, started)
            if delegation_pending(node, order, started):
                incoming += energy
                continue
            ends_at = started + float(entry.rent_hours) * hour_seconds
            if ends_at > now:
                rentals.append(Rental(order.order_id, energy, ends_at))
    if seen is not None and last_end + SETTLE <= seen.read_at:
        limit, used, age = seen.limit, seen.used, max(0.0, now - seen.read_at)
    else:
        resources = node.get_resources(address)
        limit, used, age = resources.energy_limit, resources.energy_used, None
    return Reading(WalletView(address, limit=limit, used=used, now=now, incoming=incoming,
                              rentals=tuple(rentals)), seen_age=age)


def delegation_pending(node: Node, order: Order, done_at: float) -> bool:
    """An order the service calls done whose delegation is in no block yet (one or two
    blocks on mainnet): its energy is on the way. Asked only for an order done in the last
    :data:`SETTLE` seconds; an order without a delegation hash cannot be asked."""
    if not order.tx_hash or time.time() - done_at > SETTLE:
        return False
    return node.get_transaction_info(order.tx_hash) is None


def chain_now(node: Node) -> float:
    """The chain's clock: the head block's time, in seconds."""
    return node.get_now_block().timestamp_ms / 1000


def read_wallets(node: Node, service: Service, book: KeeperBook, wallets: Sequence[str], *,
                 rent_time: Decimal, hour_seconds: float = 3600.0, scope: str = "",
                 seen: Mapping[str, Seen] | None = None, max_age: float = 0.0
                 ) -> tuple[float, dict[str, Reading]]:
    """The chain's ``now`` and every wallet's reading (one head block for all of them);
    ``seen``: the wakes' readings, each used while at most ``max_age`` chain seconds old."""
    now = chain_now(node)
    fresh = {wallet: reading for wallet, reading in (seen or {}).items()
             if now - reading.read_at <= max_age}
    return now, {address: read_wallet(node, service, book, address, now=now,
                                      rent_time=rent_time, hour_seconds=hour_seconds,
                                      scope=scope, seen=fresh.get(address))
                 for address in wallets}
