"""The wallet's lease on SQLite and PostgreSQL: one holder per sender, expiry, release, and
a claim refused once the lease is no longer its holder's (nothing written)."""

from __future__ import annotations

import threading
import time

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy.payout.journal import Claim, PayoutJournal
from airflow_provider_tronenergy.payout.lease import (
    Held,
    Lease,
    LeaseLost,
    WalletBusy,
    hold,
)

SENDER = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
OTHER = "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"


def claim(identity: str, sender: str = SENDER) -> Claim:
    return Claim(identity=identity, after=None, batch_id="b", row=0, sender=sender,
                 recipient=OTHER, token="USDT", units=1_000_000)


def acquired(journal: PayoutJournal, holder: str, length_s: float = 60,
             sender: str = SENDER) -> Lease:
    lease = journal.leases.acquire(sender, holder, length_s)
    assert isinstance(lease, Lease), lease
    return lease


def test_one_holder_per_sender_until_it_releases(make):
    first, second = make(), make()
    lease = acquired(first, "w1")
    held = second.leases.acquire(SENDER, "w2", 60)
    assert isinstance(held, Held) and held.holder == "w1"
    assert held.expires_at_ms > held.now_ms
    assert isinstance(second.leases.acquire(OTHER, "w2", 60), Lease)  # another wallet: free
    assert first.leases.release(lease)
    assert second.leases.holder(SENDER) is None
    assert acquired(second, "w2").holder == "w2"


def test_of_many_workers_acquiring_at_once_one_holds(make):
    journals = [make() for _ in range(6)]
    for journal in journals:
        journal.ensure_schema()
    barrier = threading.Barrier(len(journals))
    got: dict[str, object] = {}

    def run(name: str, journal: PayoutJournal) -> None:
        barrier.wait()
        got[name] = journal.leases.acquire(SENDER, name, 60)

    threads = [threading.Thread(target=run, args=(f"w{n}", j)) for n, j in enumerate(journals)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    [winner] = [name for name, result in got.items() if isinstance(result, Lease)]
    assert all(r.holder == winner for r in got.values() if isinstance(r, Held))
    assert journals[0].leases.holder(SENDER) == winner


def test_a_killed_workers_lease_lapses_by_itself(make):
    killed, next_ = make(), make()
    acquired(killed, "killed", length_s=0.2)  # never renewed, never released
    time.sleep(0.4)
    assert next_.leases.holder(SENDER) is None
    taken = acquired(next_, "w2")
    assert not killed.leases.release(Lease(SENDER, "killed", "gone", 200, 0))  # not its row
    assert next_.leases.holder(SENDER) == "w2" and taken.holder == "w2"


def test_a_release_removes_only_its_own_acquisition(make):
    first, second = make(), make()
    old = acquired(first, "w1", length_s=0.2)
    time.sleep(0.4)
    acquired(second, "w2")
    assert not first.leases.release(old)  # late: the wallet is w2's now
    assert second.leases.holder(SENDER) == "w2"


def test_a_claim_under_a_lease_taken_by_another_writes_nothing(make):
    slow, fast = make(), make()
    stalled = acquired(slow, "slow", length_s=0.2)
    time.sleep(0.4)  # its pre-flight outlived its lease
    lease = acquired(fast, "fast")
    with pytest.raises(LeaseLost, match="nothing was signed"):
        slow.claim([claim("id:p1"), claim("id:p2")], "slow", lease=stalled)
    assert slow.latest(["id:p1", "id:p2"]) == {}
    won, lost = fast.claim([claim("id:p1")], "fast", lease=lease)
    assert [a.claimed_by for a in won] == ["fast"] and lost == []


def test_a_lapsed_lease_is_refused_at_claim_even_if_nobody_took_it(make):
    journal = make()
    stalled = acquired(journal, "slow", length_s=0.2)
    time.sleep(0.4)
    with pytest.raises(LeaseLost):
        journal.claim([claim("id:p1")], "slow", lease=stalled)
    assert journal.latest(["id:p1"]) == {}


def test_a_claim_renews_its_lease(make):
    journal = make()
    lease = acquired(journal, "w1", length_s=60)
    t = journal.lease_table.c
    with journal.db.engine.connect() as conn:
        before = conn.execute(sa.select(t.expires_at_ms)).scalar_one()
    time.sleep(0.05)
    journal.claim([claim("id:p1")], "w1", lease=lease)
    with journal.db.engine.connect() as conn:
        assert conn.execute(sa.select(t.expires_at_ms)).scalar_one() > before


def test_hold_waits_for_the_holder_then_says_busy_and_releases_on_error(make):
    first, second = make(), make()
    with (hold(first.leases, SENDER, "w1", length_s=60, wait_s=0),
          pytest.raises(WalletBusy, match="w1 holds its pre-flight and signing"),
          hold(second.leases, SENDER, "w2", length_s=60, wait_s=0.3, poll_s=0.1)):
        pass
    with (pytest.raises(RuntimeError, match="boom"),
          hold(second.leases, SENDER, "w2", length_s=60, wait_s=0)):
        raise RuntimeError("boom")
    assert first.leases.holder(SENDER) is None  # released on the way out


def test_hold_takes_the_wallet_once_the_holder_releases_it(make):
    first, second = make(), make()
    lease = acquired(first, "w1")
    threading.Timer(0.3, first.leases.release, args=(lease,)).start()
    with hold(second.leases, SENDER, "w2", length_s=60, wait_s=30, poll_s=0.05) as mine:
        assert mine.holder == "w2" and second.leases.holder(SENDER) == "w2"


def test_a_holder_at_work_renews_its_lease(make):
    """Renewed every third of its length: a pre-flight longer than the lease keeps it."""
    journal, other = make(), make()
    with hold(journal.leases, SENDER, "w1", length_s=3, wait_s=0) as lease:
        time.sleep(4.5)
        assert isinstance(other.leases.acquire(SENDER, "w2", 3), Held)
        journal.claim([claim("id:p1")], "w1", lease=lease)  # still this holder's


@pytest.mark.parametrize("length_s, wait_s", [(2, 10), (3601, 10), (60, -1)])
def test_bad_lease_settings_are_refused(make, length_s, wait_s):
    with (pytest.raises(ValueError, match="wallet_"),
          hold(make().leases, SENDER, "w1", length_s=length_s, wait_s=wait_s)):
        pass


def test_a_pass_whose_lease_another_worker_took_signs_and_sends_nothing(world):
    """On the sandbox chain: PayoutSender hands its lease to the claim."""
    from airflow_provider_tronenergy.payout.send import PayoutSender, SendSettings
    from support.chain import USDT

    def sender(scope: str, lease: Lease) -> PayoutSender:
        return PayoutSender(world.journal, world.node, world.signer,
                            SendSettings(contract=USDT), scope=scope, lease=lease,
                            energy_fee_sun=world.node.get_chain_parameters().energy_fee)

    rows = world.rows(world.recipients(2))
    stalled = acquired(world.journal, "slow", length_s=0.2, sender=world.address)
    time.sleep(0.4)
    taken = acquired(world.journal, "fast", sender=world.address)
    with pytest.raises(LeaseLost):
        sender("slow", stalled).send(rows, sender=world.address, token="USDT", batch_id="b1")
    assert world.journal.batch("b1") == [] and world.on_chain() == []
    done = sender("fast", taken).send(rows, sender=world.address, token="USDT",
                                      batch_id="b1")
    assert (done.signed, done.accepted) == (2, 2)
    assert world.journal.leases.holder(world.address) == "fast"
