"""The pre-flight on the sandbox chain: what the chain charges now, with few requests.

Rows carry their preparation's estimates. ``clear_to_sign`` asks the node once per kind
of row (one representative per distinct figure) and once for a transfer to a fresh
address, never once per row; it asks about each holder only when a sweep since
preparation could make the batch cost more than the sender may spend.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_tronenergy.payout.funds import FeeLimitPolicy, PayoutRefused
from airflow_provider_tronenergy.payout.preflight import Cleared, clear_to_sign
from airflow_provider_tronenergy.payout.rows import Payout, payouts
from support.chain import Chain, manual_chain
from support.payouts import Payouts

HOLDER, FIRST = 64_285, 130_285
"""A transfer to a USDT holder, and a first one, at USDT's energy factor 34,000."""


class Counting:
    """The node client, counting what is asked of it."""

    def __init__(self, node: Any) -> None:
        self.node, self.calls = node, Counter[str]()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.node, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return method(*args, **kwargs)

        return counted


@pytest.fixture
def chain() -> Iterator[Chain]:
    with manual_chain() as chain:
        yield chain


def wallet(chain: Chain, tmp_path: Path, staked: int, trx: str = "1000") -> Payouts:
    """A sender holding USDT, ``trx`` and ``staked`` energy."""
    return Payouts(chain, tmp_path, staked=staked, trx=trx)


def batch(world: Payouts, holders: int, firsts: int) -> list[Payout]:
    """Rows as the preparation left them: each with the node's estimate then."""
    control = world.chain.control
    recipients = ([control.wallet(trx="1", usdt="1") for _ in range(holders)]
                  + [control.wallet(trx="1") for _ in range(firsts)])
    return payouts([{"recipient": r, "amount": "1", "energy": HOLDER if i < holders else FIRST}
                    for i, r in enumerate(recipients)], batch_id="b1")


def clear(world: Payouts, node: Any, rows: list[Payout], **kwargs: Any) -> Cleared:
    options: dict[str, Any] = {"max_burn_trx": Decimal(0), "policy": FeeLimitPolicy(),
                               **kwargs}
    return clear_to_sign(node, world.address, rows, signer_address=world.address,
                         token="USDT", decimals=6, **options)


def test_a_batch_is_estimated_per_kind_not_per_row(chain, tmp_path):
    world = wallet(chain, tmp_path, staked=10_000_000)
    rows = batch(world, holders=6, firsts=4)
    node = Counting(world.node)
    cleared = clear(world, node, rows)
    # a fresh address, a holder, a first-time recipient: 3 estimates for 10 rows
    assert node.calls["estimate_transfer_energy"] == 3
    assert node.calls["get_usdt_balance"] == 1  # the sender's; no recipient read
    assert cleared.recipients_read == 0
    assert [p.energy for p in cleared.rows] == [HOLDER] * 6 + [FIRST] * 4
    assert cleared.funds.energy_needed == 6 * HOLDER + 4 * FIRST
    world.close()


def test_a_raised_factor_raises_every_row_of_its_kind(chain, tmp_path):
    world = wallet(chain, tmp_path, staked=10_000_000)
    rows = batch(world, holders=3, firsts=2)
    chain.control.post("/chain/contract", {"energy_factor": 50_000})
    chain.blocks(1)
    holder_now = chain.estimate(world.address, rows[0].recipient)
    first_now = chain.estimate(world.address, rows[4].recipient)
    assert holder_now is not None and first_now is not None and holder_now > HOLDER
    cleared = clear(world, world.node, rows)
    assert [p.energy for p in cleared.rows] == [holder_now] * 3 + [first_now] * 2
    assert cleared.now.first_transfer == first_now
    world.close()


def test_holders_are_read_only_when_a_sweep_could_make_the_batch_unpayable(chain, tmp_path):
    """Energy for 3 holders and 1 first transfer, no burn allowed: if any holder were
    emptied the batch would burn, so the 3 holders are estimated again (side by side); the
    emptied one counts as a first transfer and the batch is refused. With the energy for
    every holder turning first-time, or max_burn_trx paying the difference, nothing is read."""
    exact = 3 * HOLDER + FIRST
    world = wallet(chain, tmp_path, staked=exact)
    rows = batch(world, holders=3, firsts=1)
    chain.control.post(f"/addresses/{rows[1].recipient}/balances", {"usdt": "0"})  # swept
    node = Counting(world.node)
    with pytest.raises(PayoutRefused, match=f"energy: the batch needs {exact - HOLDER + FIRST:,}"):
        clear(world, node, rows)
    assert node.calls["estimate_transfer_energy"] == 3 + 3  # the kinds, then each holder
    never = Counting(world.node)
    clear(world, never, rows, read_recipients="never")  # told not to read: old figures
    assert never.calls["estimate_transfer_energy"] == 3
    burn = Counting(world.node)
    allowed = clear(world, burn, rows, max_burn_trx=Decimal("20"))  # 3 x 66,000 x 100 sun
    assert burn.calls["estimate_transfer_energy"] == 3 and allowed.recipients_read == 0
    world.close()
    (tmp_path / "rich").mkdir()
    rich = wallet(chain, tmp_path / "rich", staked=4 * FIRST)
    rows = batch(rich, holders=3, firsts=1)
    chain.control.post(f"/addresses/{rows[0].recipient}/balances", {"usdt": "0"})
    node = Counting(rich.node)
    cleared = clear(rich, node, rows)
    # the swept holder was the kind's first representative: another holder was asked
    assert node.calls["estimate_transfer_energy"] == 4 and cleared.recipients_read == 0
    always = clear(rich, Counting(rich.node), rows, read_recipients="always")
    assert always.emptied == {rows[0].recipient}
    assert always.funds.energy_needed == 2 * HOLDER + 2 * FIRST
    rich.close()


def test_a_representative_emptied_since_is_replaced_by_another_of_its_kind(chain, tmp_path):
    """The first holder row's recipient was swept: asking it alone would count every holder
    as a first transfer; another holder is asked, and the swept one alone counts as first."""
    world = wallet(chain, tmp_path, staked=10_000_000)
    rows = batch(world, holders=4, firsts=0)
    chain.control.post(f"/addresses/{rows[0].recipient}/balances", {"usdt": "0"})
    node = Counting(world.node)
    cleared = clear(world, node, rows)
    assert node.calls["estimate_transfer_energy"] == 3  # a fresh address, two holders
    assert [p.energy for p in cleared.rows] == [FIRST, HOLDER, HOLDER, HOLDER]
    assert cleared.now.emptied == {rows[0].recipient}
    world.close()


def test_a_signing_pass_refuses_a_cap_below_a_transfers_need(chain, tmp_path):
    """PayoutSender.send itself, without the operator's pre-flight: max_fee_limit_trx 10
    for first transfers needing 130,285 energy (13.0285 TRX). Before, both were signed
    and ended OUT_OF_ENERGY on chain; now nothing is signed."""
    world = wallet(chain, tmp_path, staked=10_000_000)
    rows = batch(world, holders=0, firsts=2)
    sender = world.sender(fee_policy=FeeLimitPolicy(max_trx=Decimal(10)))
    with pytest.raises(PayoutRefused, match="fee_limit: 2 transfer"):
        sender.send(rows, sender=world.address, token="USDT", batch_id="b1")
    chain.blocks(2)
    assert world.journal.recent() == [] and world.on_chain() == []
    world.close()


def test_a_signing_pass_sizes_each_row_at_what_its_kind_costs_now(chain, tmp_path):
    world = wallet(chain, tmp_path, staked=10_000_000)
    rows = batch(world, holders=2, firsts=0)
    chain.control.post("/chain/contract", {"energy_factor": 50_000})
    chain.blocks(1)
    now = chain.estimate(world.address, rows[0].recipient)
    assert now is not None and now > HOLDER
    node = Counting(world.node)
    world.sender(node=node).send(rows, sender=world.address, token="USDT", batch_id="b1")
    assert node.calls["estimate_transfer_energy"] == 2  # a fresh address, one holder
    chain.blocks(2)
    assert world.successes_per_recipient() == Counter(p.recipient for p in rows)
    assert all(t["receipt"]["receipt"].get("energy_fee", 0) == 0 for t in world.on_chain())
    world.close()


class Table:
    """A node estimating from a table; any other recipient (a fresh address) costs ``first``."""

    def __init__(self, energies: dict[str, int | None], first: int) -> None:
        self.energies, self.first, self.asked = energies, first, Counter[str]()

    def estimate_transfer_energy(self, owner: str, to: str, units: int) -> int | None:
        self.asked[to] += 1
        return self.energies.get(to, self.first)


def test_figures_beyond_the_asked_kinds_rise_by_the_largest_rise_seen():
    from airflow_provider_tronenergy.payout.estimates import MAX_KINDS, energy_now
    from tronenergy_protocol.address import random_address

    figures = [100] * 5 + [200] * 4 + [300] * 3 + [400] * 2 + [500]
    rows = payouts([{"recipient": random_address(), "amount": "1", "energy": e}
                    for e in figures], batch_id="b1")
    first_of = {e: next(p.recipient for p in rows if p.energy == e) for e in set(figures)}
    node = Table({first_of[100]: 150, first_of[200]: 220, first_of[300]: 290,
                  first_of[400]: None}, first=200_000)
    now = energy_now(node, "T" * 34, rows)
    assert sum(node.asked.values()) == 1 + MAX_KINDS  # never the rarest figure's recipient
    assert first_of[500] not in node.asked
    # 300 fell: a row keeps at least its own figure; 400 has no estimate and 500 was not
    # asked: each rises by the largest rise seen (150 / 100)
    assert [now.figure(e) for e in (100, 200, 300, 400, 500)] == [150, 220, 300, 600, 750]
