"""The fee_limit comes from the chain's price and the estimate; shortfalls are all named."""

from __future__ import annotations

from decimal import Decimal

import pytest

from airflow_provider_tronenergy.node.chain_parameters import ChainParameters
from airflow_provider_tronenergy.node.models import ChainAccount, Resources
from airflow_provider_tronenergy.payout.attempts import Attempt
from airflow_provider_tronenergy.payout.funds import (
    FeeLimitPolicy,
    Funds,
    FundsInFlight,
    PayoutRefused,
    estimate_energy,
    read_funds,
    refuse_unless_payable,
    transfer_energy,
)
from airflow_provider_tronenergy.payout.journal import PayoutState
from airflow_provider_tronenergy.payout.rows import payouts
from tronenergy_protocol.address import random_address

SENDER = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"


def test_fee_limit_is_the_estimate_at_the_chain_price_with_a_margin_and_a_cap():
    policy = FeeLimitPolicy(margin=Decimal("0.2"), max_trx=Decimal("100"))
    assert policy.fee_limit_sun(64_285, 100) == 7_714_200
    assert policy.fee_limit_sun(64_285, 210) == 16_199_820  # a price rise lifts it
    assert FeeLimitPolicy(max_trx=Decimal(5)).fee_limit_sun(130_285, 100) == 5_000_000


@pytest.mark.parametrize("kwargs", [{"margin": Decimal(-1)}, {"max_trx": Decimal(0)},
                                    {"max_trx": Decimal(15_001)}, {"margin": 0.2}])
def test_a_bad_policy_is_refused(kwargs):
    with pytest.raises(ValueError):
        FeeLimitPolicy(**kwargs)


def funds(**kw) -> Funds:
    base = dict(sender=SENDER, units_needed=10, units_held=10, energy_needed=100_000,
                energy_available=100_000, transactions=2, staked_bandwidth=0,
                free_bandwidth=700, trx_held_sun=0, energy_fee_sun=100,
                bandwidth_fee_sun=1000, max_burn_sun=0)
    return Funds(**{**base, **kw})


def test_a_covered_batch_passes():
    refuse_unless_payable(funds(), signer_address=SENDER, token="USDT", decimals=6)


def test_every_shortfall_is_named_with_the_signer_first():
    short = funds(units_held=4, energy_available=40_000, free_bandwidth=0,
                  trx_held_sun=1_000_000, max_burn_sun=2_000_000)
    with pytest.raises(PayoutRefused) as info:
        refuse_unless_payable(short, signer_address="TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7",
                              token="USDT", decimals=6)
    lines = str(info.value).splitlines()
    assert lines[1].strip().startswith("signer:")
    assert any("tokens:" in line and "0.000004 USDT" in line for line in lines)
    # 60,000 energy x 100 = 6 TRX burned for energy: over the 2 TRX cap; with 700 bytes of
    # bandwidth x 1,000 sun, 6.7 TRX to burn in all: over the 1 TRX held
    assert any("energy:" in line and "cost 6 TRX" in line for line in lines)
    assert any("TRX:" in line and "needs 6.7 TRX" in line for line in lines)


def test_a_batch_short_only_once_transfers_in_flight_execute_is_told_to_wait():
    waiting = funds(units_held=10, units_needed=5, in_flight=1, units_in_flight=6,
                    in_flight_batches=("b0",))
    with pytest.raises(FundsInFlight) as info:
        refuse_unless_payable(waiting, signer_address=SENDER, token="USDT", decimals=6)
    text = str(info.value)
    assert "(batch(es) b0), sending 0.000006 USDT" in text
    assert "tokens: " in text and "holds 0.000004 USDT, the batch sends 0.000005" in text
    # 11 - 6 covers 5; its bandwidth takes 350 of the 700 bytes: 0.35 TRX burned for the rest
    refuse_unless_payable(funds(units_held=11, units_needed=5, in_flight=1, units_in_flight=6,
                                trx_held_sun=350_000), signer_address=SENDER, token="USDT",
                          decimals=6)


def test_a_shortfall_without_the_transfers_in_flight_is_refused_for_good():
    short = funds(units_held=4, units_needed=5, in_flight=1, units_in_flight=6)
    with pytest.raises(PayoutRefused):
        refuse_unless_payable(short, signer_address=SENDER, token="USDT", decimals=6)


def test_transfers_in_flight_use_the_energy_first_and_burn_for_what_it_lacks():
    before = funds(energy_available=100_000, in_flight=2, energy_in_flight=150_000,
                   trx_held_sun=10_000_000, max_burn_sun=20_000_000)
    after = before.after_in_flight()
    # 50,000 energy burned by them at 100 sun; their 700 bytes take all the bandwidth
    assert (after.energy_available, after.free_bandwidth, after.trx_held_sun) == (
        0, 0, 5_000_000)
    assert (after.in_flight, after.units_in_flight, after.energy_in_flight) == (0, 0, 0)
    # this batch then burns 100,000 x 100 + 700 x 1,000 sun: more than the 5 TRX left
    assert after.burn_sun == 10_700_000
    with pytest.raises(FundsInFlight, match="TRX: burning for energy and bandwidth needs"):
        refuse_unless_payable(before, signer_address=SENDER, token="USDT", decimals=6)


def test_max_burn_caps_the_energy_burn_only_bandwidth_needs_trx():
    bandwidth_only = funds(free_bandwidth=0, trx_held_sun=700_000)
    refuse_unless_payable(bandwidth_only, signer_address=SENDER, token="USDT", decimals=6)
    with pytest.raises(PayoutRefused, match="TRX: burning"):
        refuse_unless_payable(funds(free_bandwidth=0, trx_held_sun=699_999),
                              signer_address=SENDER, token="USDT", decimals=6)


def test_burning_within_max_burn_is_allowed_when_the_trx_is_there():
    ok = funds(energy_available=90_000, trx_held_sun=2_000_000, max_burn_sun=1_000_000)
    refuse_unless_payable(ok, signer_address=SENDER, token="USDT", decimals=6)


class Estimating:
    """A node that estimates each recipient's transfer from a table, counting its calls."""

    def __init__(self, energies: dict[str, int | None]) -> None:
        self.energies, self.asked = energies, []

    def estimate_transfer_energy(self, owner: str, to: str, units: int) -> int | None:
        self.asked.append((owner, to, units))
        return self.energies[to]


def test_a_row_without_an_estimate_gets_the_nodes_for_its_recipient_never_a_constant():
    holder, newcomer, dry = random_address(), random_address(), random_address()
    rows = payouts([{"recipient": holder, "amount": "5"}, {"recipient": newcomer, "amount": "7"},
                    {"recipient": newcomer, "amount": "1"},
                    {"recipient": holder, "amount": "2", "energy": 70_000},
                    {"recipient": dry, "amount": "1"}], batch_id="b1")
    with pytest.raises(ValueError, match="no energy estimate"):
        transfer_energy(rows[0])  # the 131,000 it once fell back to is gone
    node = Estimating({holder: 64_285, newcomer: 177_529, dry: None})
    estimated, unestimated = estimate_energy(node, SENDER, rows)
    assert [(p.row, transfer_energy(p)) for p in estimated] == [
        (0, 64_285), (1, 177_529), (2, 177_529), (3, 70_000)]  # the row's own estimate kept
    assert [p.row for p in unestimated] == [4]
    # one request per distinct recipient lacking an estimate, for 1 unit: the energy of a
    # transfer does not depend on its amount, so a batch over the balance is still sized
    assert sorted(node.asked) == sorted([(SENDER, holder, 1), (SENDER, newcomer, 1),
                                         (SENDER, dry, 1)])
    with pytest.raises(PayoutRefused, match=rf"energy estimate: the node gives none for "
                                            rf"row 4 \({dry}\)"):
        refuse_unless_payable(funds(), signer_address=SENDER, token="USDT", decimals=6,
                              unestimated=unestimated)


def test_rows_that_all_carry_an_estimate_ask_the_node_nothing():
    rows = payouts([{"recipient": random_address(), "amount": "1", "energy": 64_285}],
                   batch_id="b1")
    node = Estimating({})
    assert estimate_energy(node, SENDER, rows) == (rows, []) and node.asked == []


@pytest.mark.parametrize(("transactions", "staked", "free", "covered"), [
    (2, 0, 600, 1),     # 600 free bytes pay one 350-byte transfer whole, not half another
    (3, 0, 600, 1),
    (2, 0, 700, 2),     # exactly two
    (2, 0, 699, 1),
    (3, 500, 600, 2),   # one from the stake (150 left, never used), one from the free
    (4, 700, 700, 4),
    (1, 0, 0, 0),
])
def test_bandwidth_pays_each_transaction_whole_or_burns_all_its_bytes(transactions, staked,
                                                                      free, covered):
    """java-tron's BandwidthProcessor: staked bandwidth covers a transaction whole or not at
    all, then the free allowance the same, else every byte of it is burned. Before, the
    pools were added up and only the bytes beyond them burned (600 free for two: 0.1 TRX)."""
    f = funds(transactions=transactions, staked_bandwidth=staked, free_bandwidth=free,
              energy_needed=0)
    assert f.transactions_covered == covered
    assert f.bandwidth_burned == (transactions - covered) * 350
    assert f.burn_sun == (transactions - covered) * 350 * 1_000
    assert (f.bandwidth_needed, f.bandwidth_available) == (transactions * 350, staked + free)


def test_two_payouts_with_free_bandwidth_for_one_name_the_whole_burn():
    short = funds(transactions=2, free_bandwidth=600, energy_needed=0, trx_held_sun=200_000)
    with pytest.raises(PayoutRefused) as info:
        refuse_unless_payable(short, signer_address=SENDER, token="USDT", decimals=6)
    assert ("TRX: burning for energy and bandwidth needs 0.35 TRX, the sender has 0.2 "
            "(bandwidth: 2 transfer(s) of 350 bytes, each paid whole from 0 staked or 600 "
            "free bytes or burned: 1 burn 0.35 TRX)") in str(info.value)
    refuse_unless_payable(funds(transactions=2, free_bandwidth=600, energy_needed=0,
                                trx_held_sun=350_000),
                          signer_address=SENDER, token="USDT", decimals=6)


def test_transfers_in_flight_take_bandwidth_whole_from_the_stake_then_the_free():
    before = funds(transactions=1, staked_bandwidth=500, free_bandwidth=600, in_flight=3,
                   energy_needed=0, energy_in_flight=0, trx_held_sun=1_000_000)
    after = before.after_in_flight()
    # the first from the stake (150 left), the second from the free (250 left), the third
    # burns its 350 bytes: nothing is left to pay this batch's transfer, which burns too
    assert (after.staked_bandwidth, after.free_bandwidth) == (150, 250)
    assert after.trx_held_sun == 1_000_000 - 350_000
    assert after.transactions_covered == 0 and after.burn_sun == 350_000


def test_a_cap_below_a_transfers_need_names_the_rows_and_figures():
    rows = payouts([{"recipient": random_address(), "amount": "1", "energy": 130_285},
                    {"recipient": random_address(), "amount": "1", "energy": 64_285}],
                   batch_id="b1")
    policy = FeeLimitPolicy(max_trx=Decimal(10))
    [line] = policy.over_cap(rows, 100)
    assert line.startswith("fee_limit: 1 transfer(s) need more than max_fee_limit_trx 10 TRX "
                           "at 100 sun per energy")
    assert f"row 0 ({rows[0].recipient}, 130,285 energy: 13.0285 TRX)" in line
    assert "row 1" not in line
    assert policy.over_cap(rows, 150) != [] and FeeLimitPolicy().over_cap(rows, 100) == []
    with pytest.raises(PayoutRefused, match="fee_limit: 1 transfer"):
        refuse_unless_payable(funds(), signer_address=SENDER, token="USDT", decimals=6,
                              more=policy.over_cap(rows, 100))


class Wallet:
    """A node answering one sender's funds: 5 TRX, 100 USDT units, energy and bandwidth
    staked for anything."""

    def get_account(self, address):
        return ChainAccount(address=address, activated=True, trx_sun=5_000_000)

    def get_resources(self, address):
        return Resources(address=address, energy_limit=10**7, net_limit=10**5)

    def get_usdt_balance(self, address):
        return 100


PRICES = ChainParameters(energy_fee=100, transaction_fee=1_000, create_account_fee=100_000,
                         create_new_account_fee_in_system_contract=1_000_000,
                         free_net_limit=600, multi_sign_fee=1_000_000)


def signed(signatures: int, batch: str = "b0") -> Attempt:
    """A transfer of the sender in flight, carrying ``signatures``."""
    return Attempt(id=1, identity=f"i{signatures}", attempt=1, state=PayoutState.SIGNED,
                   batch_id=batch, row=0, sender=SENDER, recipient=random_address(),
                   token="USDT", units=1, claimed_by="w", created_at=0.0, updated_at=0.0,
                   txid="00" * 32, fee_limit_sun=1_000_000,
                   signed_tx={"signature": ["aa"] * signatures})


def test_the_multi_sign_fee_is_counted_per_transfer_with_several_signatures():
    rows = payouts([{"recipient": random_address(), "amount": "0.00001", "energy": 64_285}
                    for _ in range(5)], batch_id="b1")
    one = read_funds(Wallet(), SENDER, rows, max_burn_trx=Decimal(0), prices=PRICES)
    two = read_funds(Wallet(), SENDER, rows, max_burn_trx=Decimal(0), prices=PRICES,
                     signatures=2)
    assert (one.multi_sign_sun, one.transaction_bandwidth) == (0, 350)
    assert (two.multi_sign_sun, two.transaction_bandwidth, two.burn_sun) == (
        5_000_000, 417, 5_000_000)  # 5 TRX held: exactly payable
    refuse_unless_payable(two, signer_address=SENDER, token="USDT", decimals=6)
    # Transfers in flight with two signatures pay it first; one with one signature does not.
    waiting = read_funds(Wallet(), SENDER, rows, max_burn_trx=Decimal(0), prices=PRICES,
                         signatures=2, in_flight=[signed(2), signed(1)])
    assert waiting.multi_sign_in_flight_sun == 1_000_000
    assert waiting.after_in_flight().trx_held_sun == 4_000_000
    with pytest.raises(FundsInFlight, match="and the multi-sign fee needs 5 TRX"):
        refuse_unless_payable(waiting, signer_address=SENDER, token="USDT", decimals=6)
    with pytest.raises(ValueError, match="at least one signature"):
        read_funds(Wallet(), SENDER, rows, max_burn_trx=Decimal(0), prices=PRICES,
                   signatures=0)


def test_only_the_tokens_own_transfers_in_flight_leave_its_balance():
    """A batch of another token counts the sender's USDT in flight against USDT, not
    against its own balance (each token is a purse of its own)."""
    from dataclasses import replace

    contract = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
    rows = payouts([{"recipient": random_address(), "amount": "0.00001", "energy": 64_285}],
                   batch_id="b1")
    usdt_in_flight = replace(signed(1), units=90)
    mine_in_flight = replace(signed(1, "b2"), token=contract, units=7)
    for_usdt = read_funds(Wallet(), SENDER, rows, max_burn_trx=Decimal(0), prices=PRICES,
                          in_flight=[usdt_in_flight, mine_in_flight])
    for_other = read_funds(Wallet(), SENDER, rows, max_burn_trx=Decimal(0), prices=PRICES,
                           in_flight=[usdt_in_flight, mine_in_flight], token=contract)
    assert (for_usdt.units_in_flight, for_other.units_in_flight) == (90, 7)
