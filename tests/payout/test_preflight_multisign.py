"""The pre-flight of a batch signed under a permission needing several keys, on the sandbox.

A transfer carrying more than one signature pays the chain's ``getMultiSignFee`` (1 TRX on
mainnet) from the TRX, before its contract runs (java-tron's
``Manager.consumeMultiSignFee``, commit 1e35f79a165424bbae319799d9aca92948b8f5c2; the
sandbox charges it the same way: tests/sandbox/chain/test_multi_sign_fee.py). The
pre-flight counts it per transfer when the signers up to the permission's threshold are
more than one (:meth:`PayoutSender.check_permission`), so the TRX it plans is the TRX
the chain takes, and a wallet short of it is refused before anything is signed.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.payout.funds import FeeLimitPolicy, PayoutRefused
from airflow_provider_tronenergy.payout.preflight import Cleared, clear_to_sign
from airflow_provider_tronenergy.payout.send import PayoutSender
from airflow_provider_tronenergy.signer import LocalKeySigner
from support.payouts import Payouts
from support.permissions import active, permit

HOLDER = 64_285
"""A transfer to a USDT holder at USDT's energy factor 34,000."""


class Counted(LocalKeySigner):
    """A local key that counts what it signs."""

    signed = 0

    def sign(self, txid: bytes) -> bytes:
        self.signed += 1
        return super().sign(txid)


def hot_wallet(world: Payouts, threshold: int, *, trx: str, staked: int
               ) -> tuple[PayoutSender, list[Counted]]:
    """The sender's active permission 2: three keys of weight 1 and ``threshold``; its
    bandwidth staked (a transfer's bytes vary by a few, so bandwidth burns no TRX here),
    ``staked`` energy and ``trx``. A sender with all three keys configured, as the
    operator builds it, its permission checked."""
    keys = [Counted(PrivateKey.random().hex()) for _ in range(3)]
    permit(world.chain.control, world.address, [world.key],
           [active([(k.address, 1) for k in keys], threshold=threshold)])
    world.chain.control.wallet(world.address, trx=trx, staked=staked)
    world.chain.control.post(f"/addresses/{world.address}/bandwidth", {"staked": 10_000})
    world.signer = keys[0]
    sending = world.sender(permission_id=2, cosigners=keys[1:])
    sending.check_permission(world.address)
    return sending, keys


def cleared(world: Payouts, sending: PayoutSender, rows, max_burn: str = "100") -> Cleared:
    """The pre-flight as the operator runs it: the signers are the sender's permission."""
    return clear_to_sign(world.node, world.address, rows, signer_address=world.address,
                         token="USDT", decimals=6, max_burn_trx=Decimal(max_burn),
                         policy=FeeLimitPolicy(), signatures=len(sending.signing))


@pytest.mark.parametrize("threshold, fees", [(2, 3_000_000), (1, 0)])
def test_the_trx_a_batch_needs_is_the_trx_the_chain_charges(world, threshold, fees):
    """2-of-3: two signatures a transfer, 1 TRX each on top of the energy burned; 1-of-3:
    one signature, no fee. Failed before: the pre-flight planned no multi-sign fee (the
    2-of-3 batch was charged 3 TRX more than planned)."""
    sending, _ = hot_wallet(world, threshold, trx="100", staked=100_000)
    rows = world.rows(world.recipients(3))
    plan = cleared(world, sending, rows)
    before = int(world.chain.wallet(world.address)["trx_sun"])
    energy_burn = (3 * HOLDER - 100_000) * 100  # what the stake does not cover, at 100 sun
    assert (plan.funds.energy_burn_sun, plan.funds.bandwidth_burn_sun) == (energy_burn, 0)
    assert plan.funds.multi_sign_sun == fees
    assert plan.funds.burn_sun == energy_burn + fees
    assert plan.to_dict()["multi_sign_fee_trx"] == str(fees // 1_000_000)

    sent = sending.send(plan.rows, sender=world.address, token="USDT", batch_id="b1")
    assert sent.accepted == 3
    world.chain.blocks(1)
    assert world.watch("b1").step().confirmed == 3
    infos = [world.chain.info(a.txid) for a in world.journal.batch("b1") if a.txid]
    assert [len(a.signed_tx["signature"]) for a in world.journal.batch("b1")] == [threshold] * 3
    charged = sum(info.get("fee", 0) for info in infos)
    assert charged == plan.funds.burn_sun  # planned vs charged, to the sun
    assert before - int(world.chain.wallet(world.address)["trx_sun"]) == charged


def test_a_wallet_short_of_the_multi_sign_fee_is_refused_before_signing(world):
    """Energy and bandwidth staked for the batch, TRX a sun short of three fees. Failed
    before: cleared, signed and broadcast, and the third transfer refused by the chain
    (``Account resource insufficient error.``). With the three fees it is paid."""
    sending, keys = hot_wallet(world, 2, trx="2.999999", staked=1_000_000)
    rows = world.rows(world.recipients(3))
    with pytest.raises(PayoutRefused, match="nothing was signed") as info:
        cleared(world, sending, rows, max_burn="0")
    assert ("TRX: burning for energy and bandwidth and the multi-sign fee needs 3 TRX, the "
            "sender has 2.999999") in str(info.value)
    assert "multi-sign fee: 3 transfer(s) with several signatures at 1 TRX: 3 TRX" \
        in str(info.value)
    assert [k.signed for k in keys] == [0, 0, 0] and world.journal.batch("b1") == []

    world.chain.control.wallet(world.address, trx="3")
    plan = cleared(world, sending, rows, max_burn="0")
    assert plan.funds.burn_sun == 3_000_000
    assert sending.send(plan.rows, sender=world.address, token="USDT",
                        batch_id="b1").accepted == 3
    world.chain.blocks(1)
    assert world.watch("b1").step().confirmed == 3
    assert int(world.chain.wallet(world.address)["trx_sun"]) == 0
