"""A keeper run (keeper.keep.Keeper) against the sandbox: the service and the chain over
real HTTP, the purchase journal on SQLite. Orders are counted at the sandbox."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_tronenergy.client import TronEnergyClient
from airflow_provider_tronenergy.keeper.decide import Action
from airflow_provider_tronenergy.keeper.keep import Keeper, KeeperBlind
from airflow_provider_tronenergy.keeper.policy import KeeperPolicy
from airflow_provider_tronenergy.keeper.reading import Seen
from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.purchase_journal import EntryState, PurchaseJournal
from support.chain import USDT
from support.control import Control
from support.sandbox import sandbox_fixture
from support.waiting import wait_until

sandbox = sandbox_fixture(scope="module")
HOUR = 36.0  # a rented hour at the sandbox's time scale (0.01)
POLICY = KeeperPolicy(floor=200_000, target=500_000, max_price_per_10k_trx=Decimal("0.5"),
                      max_daily_spend_trx=Decimal("100"),
                      renew_before_seconds=5)  # of a 36 s rental


class Lines:
    """The task log's lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, event: Any, *args: Any, **kw: Any) -> None:
        self.lines.append(str(event) % args if args else str(event))

    warning = info


@pytest.fixture
def control(sandbox) -> Iterator[Control]:
    control = Control(sandbox)
    control.balance("1000")
    yield control
    control.clear_faults()


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[PurchaseJournal]:
    journal = PurchaseJournal(f"sqlite:///{tmp_path / 'journal.db'}")
    yield journal
    journal.close()


def keeper(sandbox, journal: PurchaseJournal, policy: KeeperPolicy = POLICY,
           scope: str = "run-1", node_url: str | None = None) -> tuple[Keeper, Lines]:
    log = Lines()
    client = TronEnergyClient(sandbox.url, sandbox.api_key, sandbox.api_secret)
    node = TronNodeClient(node_url or sandbox.root_url, usdt_contract=USDT, max_retries=0)
    return Keeper("hot", policy, client, node, journal, scope=scope, log=log,
                  hour_seconds=HOUR), log


def test_a_wallet_below_its_floor_is_topped_up_once(sandbox, control, journal):
    # 100,000 available and no usage: a used figure recovers block by block (java-tron's
    # 24 h window), so the amount bought would depend on when the keeper reads it.
    wallet = control.wallet(trx="10", staked=100_000)
    run, log = keeper(sandbox, journal)
    [decision] = run.keep([wallet])
    assert (decision.action, decision.energy, decision.cost) == (
        Action.BUY, 400_000, Decimal("18"))
    assert [(o["kind"], o["energy_amount"]) for o in control.orders(wallet)] == [
        ("buy", 400_000)]
    [line] = [line for line in log.lines if line.startswith("keeper ")]
    assert line.startswith(f"keeper {wallet}: available 100,000, floor 200,000: buys "
                           "400,000 for 18 TRX; budget left 82 TRX; below the floor by 100,000")
    # A second wake right after: the order is on its way or on chain; nothing more.
    again, _ = keeper(sandbox, journal, scope="run-2")
    [second] = again.keep([wallet])
    assert second.action is Action.HOLD and second.available + second.incoming >= 500_000
    assert len(control.orders(wallet)) == 1
    [entry] = journal.with_prefix(f"keeper:hot:{wallet}:")
    assert (entry.identity, entry.state) == (f"keeper:hot:{wallet}:1", EntryState.PLACED)


def test_two_wakes_at_once_for_one_shortfall_buy_once(sandbox, control, journal):
    wallet = control.wallet(trx="10")
    results: list[Any] = []

    def wake(scope: str) -> None:
        run, _ = keeper(sandbox, journal, scope=scope)
        results.append(run.keep([wallet])[0])

    threads = [threading.Thread(target=wake, args=(f"run-{i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(control.orders(wallet)) == 1
    assert sum(d.action is Action.BUY for d in results) == 1


def test_over_the_price_cap_nothing_is_bought(sandbox, control, journal):
    wallet = control.wallet(trx="10")
    cheap = KeeperPolicy(floor=200_000, target=500_000, max_price_per_10k_trx=Decimal("0.4"),
                         max_daily_spend_trx=Decimal("100"))
    run, _ = keeper(sandbox, journal, cheap)
    [decision] = run.keep([wallet])
    assert decision.action is Action.CAPPED and control.orders(wallet) == []


def test_the_days_budget_holds_across_wallets_and_runs(sandbox, control, journal):
    wallets = [control.wallet(trx="10") for _ in range(2)]
    tight = KeeperPolicy(floor=200_000, target=500_000, max_price_per_10k_trx=Decimal("0.5"),
                         max_daily_spend_trx=Decimal("10"))
    run, _ = keeper(sandbox, journal, tight)
    first, second = run.keep(wallets)
    assert (first.action, first.energy, first.cost) == (Action.BUY, 222_222,
                                                        Decimal("9.99999"))
    assert second.action is Action.OVER_BUDGET and control.orders(wallets[1]) == []
    later, _ = keeper(sandbox, journal, tight, scope="run-2")
    assert later.keep(wallets[1:])[0].action is Action.OVER_BUDGET  # spent read back
    assert sum(Decimal(o["cost"]) for w in wallets for o in control.orders(w)) <= 10


def test_an_unreachable_node_buys_nothing_blind(sandbox, control, journal):
    wallet = control.wallet(trx="10")
    run, _ = keeper(sandbox, journal, node_url="http://127.0.0.1:9")
    with pytest.raises(KeeperBlind, match="the chain could not be read"):
        run.keep([wallet])
    assert control.orders(wallet) == [] and journal.list() == []


def test_a_refusing_service_is_asked_once_per_run(sandbox, control, journal):
    wallet = control.wallet(trx="10")
    control.fault(kind="rate_limit", path="/energy/buy", count=50)
    run, _ = keeper(sandbox, journal)
    [decision] = run.keep([wallet])
    assert decision.action is Action.REFUSED and "nothing was bought" in decision.reason
    [fault] = [f for f in control.faults() if f["path"] == "/energy/buy"]
    assert fault["fired"] == 1, fault  # one request in the run: no retries in it
    assert [e.state for e in journal.list()] == [EntryState.REFUSED]
    again, _ = keeper(sandbox, journal, scope="run-2")  # the next wake: one more request
    assert again.keep([wallet])[0].action is Action.REFUSED
    [fault] = [f for f in control.faults() if f["path"] == "/energy/buy"]
    assert fault["fired"] == 2 and control.orders(wallet) == []


def test_an_unknown_outcome_stops_the_wallet_until_a_person_resolves_it(sandbox, control,
                                                                         journal):
    wallet = control.wallet(trx="10")
    control.fault(kind="error", status=503, path="/energy/buy", count=1)  # not proof
    run, _ = keeper(sandbox, journal)
    [decision] = run.keep([wallet])
    assert decision.action is Action.REFUSED and "--not-placed" in decision.reason
    for scope in ("run-2", "run-3"):
        later, _ = keeper(sandbox, journal, scope=scope)
        [held] = later.keep([wallet])
        assert held.action is Action.HOLD and "unknown outcome" in held.reason
    assert [e.state for e in journal.list()] == [EntryState.SENDING]


def test_above_the_threshold_it_buys_only_what_a_person_approved(sandbox, control, journal):
    wallet = control.wallet(trx="10")
    asking = KeeperPolicy(floor=200_000, target=500_000, max_price_per_10k_trx=Decimal("0.5"),
                          max_daily_spend_trx=Decimal("100"), approval_above_trx=Decimal("20"))
    run, _ = keeper(sandbox, journal, asking)
    [asked] = run.keep([wallet])
    assert (asked.action, asked.cost) == (Action.ASK, Decimal("22.5"))
    assert control.orders(wallet) == []
    # Approved below what it now costs: still nothing; at the cost shown: bought.
    assert run.keep([wallet], approved={wallet: Decimal("22.4")})[0].action is Action.ASK
    [bought] = run.keep([wallet], approved={wallet: Decimal("22.5")})
    assert (bought.action, bought.energy) == (Action.BUY, 500_000)
    assert len(control.orders(wallet)) == 1


def test_an_order_done_at_the_service_but_not_yet_on_chain_is_energy_on_the_way(
        sandbox, control, journal):
    """The service said success; the chain has no block with its delegation yet (mainnet: a
    block or two). A wake then, as a restarted watcher's is, must not buy again."""
    wallet = control.wallet(trx="10")
    control.withhold_delegations(1)
    run, _ = keeper(sandbox, journal)
    [first] = run.keep([wallet])
    assert first.action is Action.BUY and first.energy == 500_000
    control.settle()
    again, _ = keeper(sandbox, journal, scope="run-2")
    [second] = again.keep([wallet])
    assert (second.action, second.incoming) == (Action.HOLD, 500_000), second
    assert len(control.orders(wallet)) == 1


@pytest.mark.parametrize("name", ["", "a:b", "with space", "x" * 81])
def test_a_keeper_name_that_cannot_name_purchases_is_refused(journal, name):
    from airflow_provider_tronenergy.keeper.book import KeeperBook
    from airflow_provider_tronenergy.keeper.policy import KeeperPolicyError

    with pytest.raises(KeeperPolicyError, match="keeper name"):
        KeeperBook(journal, name)


def test_a_floor_in_transfers_is_sized_by_the_chains_charge_now(sandbox, control, journal):
    """2 transfers / 4 transfers: at the node's estimate for a first-time recipient
    (130,285 at USDT's default energy factor on the sandbox chain)."""
    wallet = control.wallet(trx="10", usdt="100", staked=100_000)
    counted = KeeperPolicy.from_values({"floor": "2 transfers", "target": "4 transfers",
                                        "max_price_per_10k_trx": "0.5",
                                        "max_daily_spend_trx": "100",
                                        "renew_before_seconds": "5"})
    run, log = keeper(sandbox, journal, counted)
    [decision] = run.keep([wallet])
    assert (decision.action, decision.floor, decision.energy) == (
        Action.BUY, 260_570, 521_140 - 100_000)
    assert any("costs 130,285 energy now (the node's estimate): floor 260,570, target "
               "521,140" in line for line in log.lines)


def test_a_floor_in_transfers_without_an_estimate_buys_nothing(sandbox, control, journal):
    wallet = control.wallet(trx="10")  # no USDT: the node cannot simulate its transfer
    counted = KeeperPolicy(floor=2, target=4, max_price_per_10k_trx=Decimal("0.5"),
                           max_daily_spend_trx=Decimal("100"), per_transfer=True)
    run, _ = keeper(sandbox, journal, counted)
    with pytest.raises(KeeperBlind, match="cannot estimate a USDT transfer"):
        run.keep([wallet])
    assert control.orders(wallet) == []


class Counting:
    """A client or a node whose calls are counted by name, each passed on."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls = inner, Counter[str]()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return attr(*args, **kwargs)

        return call


def counted(run: Keeper) -> tuple[Counting, Counting, float]:
    """The run's service and node, counted; and the chain's time now."""
    run.client, run.node = Counting(run.client), Counting(run.node)  # type: ignore[assignment]
    now = run.node.inner.get_now_block().timestamp_ms / 1000  # type: ignore[attr-defined]
    return run.client, run.node, now  # type: ignore[return-value]


def test_a_wakes_fresh_reading_is_used_not_read_again(sandbox, control, journal):
    """The watcher read 150,000 available (the chain has 100,000 by now): the run decides
    on the wake's figures and reads no wallet; the price is read once for the purchase."""
    wallet = control.wallet(trx="10", staked=100_000)
    run, log = keeper(sandbox, journal)
    service, node, now = counted(run)
    [decision] = run.keep([wallet], seen={wallet: Seen(wallet, 150_000, 0, read_at=now)})
    assert (decision.action, decision.energy) == (Action.BUY, 350_000)
    assert node.calls["get_resources"] == 0 and node.calls["get_now_block"] == 1
    assert service.calls["get_price"] == 1  # the market's reading, quoted from: not twice
    assert any(line.startswith(f"keeper {wallet}: the wake's reading of the chain")
               for line in log.lines)


def test_a_wakes_reading_older_than_the_bound_is_read_again(sandbox, control, journal):
    wallet = control.wallet(trx="10", staked=100_000)
    run, _ = keeper(sandbox, journal)
    _, node, now = counted(run)
    stale = Seen(wallet, 150_000, 0, read_at=now - run.wake_max_age - 1)
    [decision] = run.keep([wallet], seen={wallet: stale})
    assert (decision.action, decision.energy) == (Action.BUY, 400_000)  # the chain's 100,000
    assert node.calls["get_resources"] == 1


def test_a_wake_read_as_an_own_order_landed_is_read_again(sandbox, control, journal):
    """A reading taken right after an order of the keeper's ended may not show its
    delegation; used, it would count that energy nowhere and buy again. Read again."""
    wallet = control.wallet(trx="10", staked=100_000)
    run, _ = keeper(sandbox, journal)
    [first] = run.keep([wallet])
    assert (first.action, first.energy) == (Action.BUY, 400_000)
    control.settle()
    [order] = control.orders(wallet)
    wait_until(lambda: run.node.get_transaction_info(order["tx_hash"]) is not None,
               message="the delegation in a block")
    again, _ = keeper(sandbox, journal, scope="run-2")
    _, node, now = counted(again)
    [second] = again.keep([wallet], seen={wallet: Seen(wallet, 100_000, 0, read_at=now)})
    assert second.action is Action.HOLD, second
    assert node.calls["get_resources"] == 1 and len(control.orders(wallet)) == 1
