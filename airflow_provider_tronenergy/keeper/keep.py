"""One keeper run, top to bottom: read, decide, buy what was decided, one line per wallet.

:class:`Keeper` is a plain object the keeper operator builds and calls (and a bench or a
script can call without Airflow). A wallet's purchase is a
:class:`~airflow_provider_tronenergy.purchase.run.Purchase` like every other: journaled
before it is sent, under the keeper's identity for the wallet's shortfall
(``keeper.book``), its cost quoted and capped before it is placed.

A run woken by its watcher starts from what the watcher read of the woken wallets (the
wake's figures, while at most ``wake_max_age`` chain seconds old: ``keeper.reading``);
the service's price is read once per run, and each purchase is quoted from it.

What cannot be read stops the run before anything is bought (the service's price, the
chain's head): a keeper never buys blind. A wallet whose purchase the service refuses,
or whose outcome is unknown, is reported and the others go on; nothing is retried in the
run (the next wake, or the scheduled safety net, tries again: no storm of retries).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, NoReturn

from airflow_provider_tronenergy.client import Price, TronEnergyClient, TronEnergyError
from airflow_provider_tronenergy.errors import NotRetryable, Retryable
from airflow_provider_tronenergy.keeper.book import KeeperBook
from airflow_provider_tronenergy.keeper.decide import Action, Decision, WalletView, decide
from airflow_provider_tronenergy.keeper.policy import KeeperPolicy
from airflow_provider_tronenergy.keeper.reading import (
    UNKNOWN_NOTE,
    Node,
    Seen,
    market_of,
    read_wallets,
)
from airflow_provider_tronenergy.keeper.registry import KeeperRegistry
from airflow_provider_tronenergy.money.quote import text
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.estimates import first_transfer_energy
from airflow_provider_tronenergy.purchase import Buy, Purchase, Settings, UnknownOutcome
from airflow_provider_tronenergy.purchase.run import Log
from airflow_provider_tronenergy.purchase_journal import EntryState, PurchaseJournal

NODE_NEEDED = "the keeper needs a TRON node to read its wallets' energy and the chain's clock"
"""What a keeper's missing ``tron_node_conn_id`` is refused with (``ConnectionMissing``)."""


class KeeperBlind(Retryable, RuntimeError):
    """The service's price or the chain could not be read: the run buys nothing blind."""


def day_start(now: float) -> float:
    """Midnight (UTC) of the day of ``now``: the daily budget's day, by the chain's clock."""
    day = datetime.fromtimestamp(now, timezone.utc).replace(hour=0, minute=0, second=0,
                                                             microsecond=0)
    return day.timestamp()


def _unknown(unknown: UnknownOutcome) -> NoReturn:
    """A keeper never asks about an unknown outcome mid-run: it stops that wallet."""
    raise unknown


@dataclass
class Keeper:
    """A keeper's run over its wallets (``name``: whose purchases these are)."""

    name: str
    policy: KeeperPolicy
    client: TronEnergyClient
    node: Node
    journal: PurchaseJournal
    scope: str
    log: Log
    hour_seconds: float = 3600.0
    registry: KeeperRegistry | None = None
    """Where the keeper's watcher reads the wallets, floors and wake times (None: no watcher)."""
    wake_max_age: float = 60.0
    """Chain seconds a wake's reading of a wallet is used for, instead of reading it again."""

    def __post_init__(self) -> None:
        # A rent time the service refuses stops the keeper here, before it reads or buys:
        # not inside a wallet's purchase, after the wallets before it bought.
        self.policy.check_rent_time(self.client.rules)

    def keep(self, wallets: Sequence[str], approved: Mapping[str, Decimal] | None = None,
             seen: Mapping[str, Seen] | None = None) -> list[Decision]:
        """Decide for every wallet and buy what was decided; ``approved``: the most a person
        allowed per wallet for a purchase above ``approval_above_trx``; ``seen``: what the
        wakes of this run read (``keeper.reading.seen_in``)."""
        book = KeeperBook(self.journal, self.name)
        try:
            price = self.client.get_price(self.policy.rent_time)
            market = market_of(price)
            now, readings = read_wallets(self.node, self.client, book, wallets,
                                         rent_time=self.policy.rent_time,
                                         hour_seconds=self.hour_seconds, scope=self.scope,
                                         seen=seen, max_age=self.wake_max_age)
            policies = {address: self._policy_for(address) for address in wallets}
        except NodeError as exc:
            raise KeeperBlind(f"keeper: the chain could not be read ({exc}); nothing was "
                              "bought") from None
        except TronEnergyError as exc:
            raise KeeperBlind(f"keeper: the service could not be read ({exc}); nothing was "
                              "bought") from None
        spent = book.spent(day_start(now), sending_price=self.policy.max_price_per_10k_trx)
        decisions = []
        for address in wallets:
            reading, policy = readings[address], policies[address]
            if reading.view is None:
                decision = Decision(address, Action.HOLD, 0, Decimal(0), 0, 0, policy.floor,
                                    max(Decimal(0), self.policy.max_daily_spend_trx - spent),
                                    reading.blocked)
            else:
                if reading.seen_age is not None:
                    self.log.info("keeper %s: the wake's reading of the chain, %.0f s old",
                                  address, reading.seen_age)
                decision = decide(policy, reading.view, market, spent)
                if self._may_buy(decision, approved or {}):
                    decision = self._buy(book, decision, price)
                    if decision.action is Action.BUY:
                        spent += decision.cost
            self.log.info(decision.line())
            decisions.append(decision)
        if self.registry is not None:
            self.registry.register(self.name, [
                (address, policies[address].floor, self._wake_at(readings[address].view))
                for address in wallets])
        return decisions

    def _policy_for(self, address: str) -> KeeperPolicy:
        """The policy in energy for ``address``: a count of transfers at the energy the chain
        charges one from it to a first-time recipient now (one node estimate)."""
        if not self.policy.per_transfer:
            return self.policy
        energy = first_transfer_energy(self.node, address)
        if energy is None:
            raise KeeperBlind(f"keeper: the node cannot estimate a USDT transfer from "
                              f"{address} (does it hold USDT?), so the floor in transfers "
                              "has no size; nothing was bought")
        self.log.info("keeper %s: a transfer to a first-time recipient costs %s energy now "
                      "(the node's estimate): floor %s, target %s", address, f"{energy:,}",
                      f"{self.policy.floor * energy:,}", f"{self.policy.target * energy:,}")
        return self.policy.in_energy(energy)

    def _wake_at(self, view: WalletView | None) -> float | None:
        """When the watcher should wake the keeper for the wallet's rentals ending."""
        ends = [r.ends_at for r in view.rentals] if view is not None else []
        return min(ends) - self.policy.renew_before_seconds if ends else None

    @staticmethod
    def _may_buy(decision: Decision, approved: Mapping[str, Decimal]) -> bool:
        if decision.action is Action.BUY:
            return True
        allowed = approved.get(decision.address)
        return (decision.action is Action.ASK and allowed is not None
                and decision.cost <= allowed)

    def _buy(self, book: KeeperBook, decision: Decision, price: Price) -> Decision:
        """One purchase for the wallet's shortfall; what happened, as the decision says it."""
        identity = book.next_identity(decision.address)
        mode = Buy(rent_time=self.policy.rent_time, target_address=decision.address,
                   energy_amount=decision.energy)
        settings = Settings(max_order=decision.cost, on_ambiguous="fail",
                            reuse_min_validity=0.0)
        purchase = Purchase(mode, mode.call(self.client.endpoints), self.client, self.journal,
                            settings, identity=identity, explicit=True, scope=self.scope,
                            log=self.log, ask=_unknown, price=price)
        try:
            result = purchase.run()
        except (NotRetryable, Retryable, UnknownOutcome) as exc:
            self._mark_unknown(identity, str(exc))
            return replace(decision, action=Action.REFUSED,
                           reason=f"{decision.reason}; nothing bought: {exc}")
        if result.get("reused"):
            return replace(decision, action=Action.HOLD, energy=0, cost=Decimal(0),
                           reason=f"{decision.reason}; another run bought it already "
                                  f"(order {result.get('order_id')})")
        cost = Decimal(str(result["cost"]))
        return replace(decision, action=Action.BUY, cost=cost,
                       budget_left=max(Decimal(0), decision.budget_left - cost),
                       reason=f"{decision.reason}; order {result['order_id']}")

    def _mark_unknown(self, identity: str, why: str) -> None:
        """This run's attempt left ``sending`` (its outcome unknown): say so in the journal,
        so the next wake does not take it for a purchase another run is placing."""
        entry = self.journal.latest(identity)
        if entry is not None and entry.state is EntryState.SENDING and entry.scope == self.scope:
            self.journal.annotate(entry, f"{UNKNOWN_NOTE}: {why}")


def summary(decisions: Sequence[Decision]) -> dict[str, Any]:
    """A run's outcome for XCom: every decision, and what was bought in all."""
    bought = [d for d in decisions if d.action is Action.BUY]
    return {"decisions": [d.to_dict() for d in decisions],
            "bought": len(bought), "energy": sum(d.energy for d in bought),
            "cost": text(sum((d.cost for d in bought), Decimal(0)))}
