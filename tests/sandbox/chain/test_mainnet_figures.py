"""The sandbox chain's charges checked against published mainnet figures (issue 37).

The node's estimate and the chain's charge use one rule, so "planned vs charged" on
the sandbox is partly true by construction. These tests hold the chain's receipts
against figures published from mainnet, each with its source, and say which figure is
an input of the sandbox's rule (by construction) and which one it derives (an
independent check).

Sources (all read 2026-11-28):

- [3556] java-tron issue 3556 (2020-12-09, before dynamic energy): USDT transfers
  charged 14,631 energy to a holder and 29,631 to an address new to the contract, with
  the tronscan receipts 4201025c...0538 and 142543db...1743; a maintainer explains the
  difference as the storage SET (new slot) vs RESET.
  https://github.com/tronprotocol/java-tron/issues/3556
- [imToken] "Want Low-Cost Transfer of Tron USDT? Don't Miss This Energy Guide":
  a TRX transfer consumes a fixed 268 bandwidth; USDT to a holder about 64,285 energy
  and 345 bandwidth, to an address without USDT about 130,285 energy (about 27.3599
  TRX, at 210 sun per energy) and 345 bandwidth.
  https://support.token.im/hc/en-us/articles/27669064968729
- [CatFee] "How Much Energy and Bandwidth Does a USDT Transfer Consume?": 64,285 energy
  (about 13.5 TRX burned at 210 sun) to a holder, 130,285 to an address without USDT.
  https://docs.catfee.io/en/energy/usdt-transfer-energy-on-tron
- [tronscan.energy] "TRON Transaction Fees": a TRX transfer about 267 bandwidth, "typical
  tx size". https://tronscan.energy/tron_fees.php
- [eopen] "TRON Energy Fee Methodology" (reviewed 2026-05-28): at 100 sun per energy,
  64,285 energy is about 6.4 TRX, 130,285 about 13 TRX.
  https://eopen.io/en/tron-energy-fee-methodology

Inputs of the sandbox's rule (``chain/parameters.py``), so matching them proves only that
the inputs are where they belong: the base energy 14,631 [3556] and the truncation of 91
energy fitted so that a holder's transfer at factor 34,000 is 64,285. Derived, so an
independent check: a first-time transfer's 29,631 at factor 0 and 130,285 at 34,000
(the fresh slot's 15,000 and its penalty), the TRX burned for them at 100 and at 210
sun per energy, and the bandwidth of a TRX and a USDT transfer (from the transaction's
bytes: java-tron's serialized size plus 64).
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from support.chain import Chain, manual_chain
from tronenergy_protocol.address import random_address

SUN = 1_000_000


@pytest.fixture
def chain():
    with manual_chain() as chain:
        yield chain


def _usdt_receipt(chain: Chain, *, holder: bool) -> dict:
    """A USDT transfer from a sender with no energy (everything burned), to a holder or not."""
    key, sender = chain.account(trx="100", usdt="10")
    to = chain.account(trx="1", usdt="1")[1] if holder else random_address()
    txid = chain.sent(chain.expiring(chain.usdt(sender, to, 1)), key)
    chain.blocks(1)
    info = chain.info(txid)
    assert info["receipt"]["result"] == "SUCCESS", info
    return info["receipt"]


def _contract(chain: Chain, **body: int) -> None:
    chain.control.post("/chain/contract", body)
    chain.blocks(1)  # in force from the next block


def _fee(chain: Chain, energy_fee: int) -> None:
    chain.control.post("/chain/parameters", {"getEnergyFee": energy_fee})
    chain.blocks(1)


def test_a_holders_and_a_first_time_usdt_transfer_at_todays_factor(chain: Chain):
    to_holder = _usdt_receipt(chain, holder=True)
    first_time = _usdt_receipt(chain, holder=False)
    assert to_holder["energy_usage_total"] == 64_285  # [imToken], [CatFee]: by construction
    assert first_time["energy_usage_total"] == 130_285  # [imToken], [CatFee]: derived
    # Burned at 100 sun per energy: about 6.4 and 13 TRX [eopen].
    assert Decimal(to_holder["energy_fee"]) / SUN == Decimal("6.4285")
    assert Decimal(first_time["energy_fee"]) / SUN == Decimal("13.0285")


def test_the_burn_at_the_price_before_proposal_104(chain: Chain):
    _fee(chain, 210)
    to_holder = _usdt_receipt(chain, holder=True)
    first_time = _usdt_receipt(chain, holder=False)
    assert Decimal(to_holder["energy_fee"]) / SUN == Decimal("13.49985")  # about 13.5 [CatFee]
    assert Decimal(first_time["energy_fee"]) / SUN == Decimal("27.35985")  # 27.3599 [imToken]


def test_the_transfers_before_dynamic_energy(chain: Chain):
    _contract(chain, energy_factor=0)
    assert _usdt_receipt(chain, holder=True)["energy_usage_total"] == 14_631  # [3556]: input
    assert _usdt_receipt(chain, holder=False)["energy_usage_total"] == 29_631  # [3556]: derived


def test_bandwidth_of_a_trx_and_a_usdt_transfer(chain: Chain):
    usdt = _usdt_receipt(chain, holder=True)
    assert usdt["net_usage"] == 345  # [imToken]: 345 (tronpy's transaction, 100 TRX fee limit)
    key, sender = chain.account(trx="100")
    to = chain.account(trx="1")[1]
    # A TRX transfer's bytes depend on its amount's varint: 1 TRX is 3 bytes, 10 TRX 4.
    sent = {sun: chain.sent(chain.expiring(chain.trx(sender, to, sun)), key)
            for sun in (1_000_000, 10_000_000)}
    chain.blocks(1)
    used = {sun: chain.info(txid)["receipt"]["net_usage"] for sun, txid in sent.items()}
    # [imToken]: "a fixed 268"; [tronscan.energy]: "~267 typical tx size".
    assert used == {1_000_000: 267, 10_000_000: 268}
