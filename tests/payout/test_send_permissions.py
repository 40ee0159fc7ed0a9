"""Payouts signed under a TRON account permission on the sandbox chain.

The hot wallet as docs/payouts.md sets it up: its owner key offline, an ``active``
permission (id 2) allowing only TriggerSmartContract and holding the payout key (here
one in KMS: moto's, tests/support/kms.py). Signers that the chain would refuse under
the permission (not a key of it, a permission without TriggerSmartContract, too little
weight, no such permission) are refused before anything is claimed, signed or sent;
a 2-of-3 permission's transfers carry two signers' signatures.
"""

from __future__ import annotations

from collections import Counter

import pytest
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.payout.funds import PayoutRefused
from airflow_provider_tronenergy.payout.journal import PayoutState
from airflow_provider_tronenergy.signer import (
    LocalKeySigner,
    SignerError,
    recovered_address,
    signature_for,
)
from airflow_provider_tronenergy.signer.kms import KmsSigner
from support import kms as aws
from support.payouts import Payouts
from support.permissions import TRANSFER_ONLY, TRIGGER_ONLY, active, permit


def send(world: Payouts, **settings):
    rows = world.rows(world.recipients(3))
    sent = world.sender(**settings).send(rows, sender=world.address, token="USDT",
                                         batch_id="b1")
    return rows, sent


def settled_once(world: Payouts, rows) -> None:
    world.chain.blocks(1)
    assert world.watch("b1").step().confirmed == len(rows)
    assert world.successes_per_recipient() == Counter(r.recipient for r in rows)


def signers_of(world: Payouts) -> list[list[str]]:
    """Who signed each journaled transfer."""
    return [[recovered_address(bytes.fromhex(a.txid), bytes.fromhex(s))
             for s in a.signed_tx["signature"]] for a in world.journal.batch("b1")]


def permission_ids(world: Payouts) -> set[int]:
    """``Permission_id`` of the journaled transfers, as the chain read them."""
    from tronpy.proto import tron_pb2

    return {tron_pb2.Transaction.raw.FromString(bytes.fromhex(a.signed_tx["raw_data_hex"]))
            .contract[0].Permission_id for a in world.journal.batch("b1")}


def test_a_kms_key_pays_under_an_active_permission_limited_to_contract_calls(world):
    cold = world.key  # the owner key, offline from now on
    with aws.aws_kms():
        client = aws.client()
        kms = KmsSigner(client, aws.new_key(client))
        assert permit(world.chain.control, world.address, [cold], [active([(kms.address, 1)])]
                      ).status_code == 200
        world.signer = kms
        rows, sent = send(world, permission_id=2)
        assert (sent.signed, sent.accepted) == (3, 3)
    settled_once(world, rows)
    assert kms.address != world.address
    assert signers_of(world) == [[kms.address]] * 3
    assert permission_ids(world) == {2}


def test_a_permission_set_by_a_signed_update_bounds_a_kms_key_to_payouts(world):
    """The whole set-up through the chain: the owner signs an AccountPermissionUpdateContract
    (tronpy; executed in its block for 100 TRX) giving a KMS key an active permission limited
    to TriggerSmartContract; the KMS key's TRX transfer is then refused as java-tron refuses
    it, and a USDT payout batch under permission 2 is paid."""
    chain = world.chain
    chain.control.wallet(world.address, trx="200")
    with aws.aws_kms():
        client = aws.client()
        kms = KmsSigner(client, aws.new_key(client))
        perm = {"owner": {"permission_name": "owner", "threshold": 1,
                          "keys": [{"address": world.address, "weight": 1}]},
                "actives": [{"type": "Active", "permission_name": "payouts", "threshold": 1,
                             "operations": TRIGGER_ONLY,
                             "keys": [{"address": kms.address, "weight": 1}]}]}
        update = chain.expiring(chain.tron.trx.account_permission_update(world.address, perm)
                                ).build().sign(world.key)
        assert chain.raw_broadcast(update).get("result") is True
        chain.blocks(1)
        assert chain.info(update.txid)["fee"] == 100_000_000
        trx = chain.expiring(chain.trx(world.address, world.recipients(1)[0], 1_000_000)
                             .permission_id(2)).build()
        trx.set_signature([signature_for(kms, bytes.fromhex(trx.txid)).hex()])
        refused = chain.raw_broadcast(trx)
        assert (refused["code"], refused["message"]) == (
            "SIGERROR", "Validate signature error: Permission denied")
        world.signer = kms
        rows, sent = send(world, permission_id=2)
        assert (sent.signed, sent.accepted) == (3, 3)
    settled_once(world, rows)
    assert signers_of(world) == [[kms.address]] * 3 and permission_ids(world) == {2}


def test_a_two_of_three_permission_collects_two_signatures(world):
    a, b, c = PrivateKey.random(), PrivateKey.random(), PrivateKey.random()
    permit(world.chain.control, world.address, [world.key], [active([(a, 1), (b, 1), (c, 1)], 2)])
    world.signer = LocalKeySigner(a.hex())
    rows, sent = send(world, permission_id=2, cosigners=[LocalKeySigner(c.hex())])
    assert sent.accepted == 3
    settled_once(world, rows)
    assert signers_of(world) == [[world.signer.address, LocalKeySigner(c.hex()).address]] * 3


@pytest.mark.parametrize("case, reason", [
    ("outside", "is not a key of permission 2 (payouts)"),
    ("no-trigger", "permission 2 (payouts) of {sender} does not allow TriggerSmartContract"),
    ("one-of-two", "the signers' weight 1 is under the threshold 2 of permission 2"),
    ("no-such", "{sender} has no permission 3"),
    ("owner", "are not a key of permission 0 (owner)"),
])
def test_signers_the_chain_would_refuse_are_refused_before_anything_is_signed(
        world, case, reason):
    payout, other = PrivateKey.random(), PrivateKey.random()
    actives = {"outside": [active([(other, 1)])],
               "no-trigger": [active([(payout, 1)], operations=TRANSFER_ONLY)],
               "one-of-two": [active([(payout, 1), (other, 1)], threshold=2)],
               "no-such": [active([(payout, 1)])],
               "owner": [active([(payout, 1)])]}[case]
    assert permit(world.chain.control, world.address, [world.key], actives).status_code == 200
    world.signer = LocalKeySigner(payout.hex())
    permission_id = {"no-such": 3, "owner": 0}.get(case, 2)
    cosigners = [LocalKeySigner(PrivateKey.random().hex())] if case == "owner" else []
    with pytest.raises(PayoutRefused, match="nothing was signed") as info:
        send(world, permission_id=permission_id, cosigners=cosigners)
    assert reason.format(sender=world.address) in str(info.value)
    assert world.journal.batch("b1") == []
    world.chain.blocks(1)
    assert world.on_chain() == []


class Counted:
    """A local key that counts what it signs (``fails``: it raises instead, with a message
    no error may repeat)."""

    def __init__(self, key: PrivateKey, fails: bool = False) -> None:
        self.inner, self.fails, self.signed = LocalKeySigner(key.hex()), fails, 0

    @property
    def address(self) -> str:
        return self.inner.address

    def sign(self, txid: bytes) -> bytes:
        if self.fails:
            raise RuntimeError("HSM said: secret-pin-1234 rejected")
        self.signed += 1
        return self.inner.sign(txid)


def test_cosigners_sign_only_up_to_the_threshold(world):
    """Failed before: every configured cosigner signed (three signatures for a 2-of-3)."""
    a, b, c = (Counted(PrivateKey.random()) for _ in range(3))
    permit(world.chain.control, world.address, [world.key],
           [active([(s.address, 1) for s in (a, b, c)], threshold=2)])
    world.signer = a
    rows, sent = send(world, permission_id=2, cosigners=[b, c])
    assert (sent.signed, sent.accepted) == (3, 3)
    settled_once(world, rows)
    assert signers_of(world) == [[a.address, b.address]] * 3
    assert (a.signed, b.signed, c.signed) == (3, 3, 0)


def test_a_heavy_key_signs_alone_though_a_cosigner_is_configured(world):
    heavy, light = Counted(PrivateKey.random()), Counted(PrivateKey.random())
    permit(world.chain.control, world.address, [world.key],
           [active([(heavy.address, 2), (light.address, 1)], threshold=2)])
    world.signer = heavy
    rows, sent = send(world, permission_id=2, cosigners=[light])
    assert sent.accepted == 3
    settled_once(world, rows)
    assert signers_of(world) == [[heavy.address]] * 3 and light.signed == 0


def test_a_threshold_the_configured_signers_cannot_meet_is_refused_before_signing(world):
    a, b, c = (Counted(PrivateKey.random()) for _ in range(3))
    permit(world.chain.control, world.address, [world.key],
           [active([(s.address, 1) for s in (a, b, c)], threshold=3)])
    world.signer = a
    with pytest.raises(PayoutRefused, match="nothing was signed") as info:
        send(world, permission_id=2, cosigners=[b])
    assert "the signers' weight 2 is under the threshold 3 of permission 2" in str(info.value)
    assert (a.signed, b.signed) == (0, 0)
    assert world.journal.batch("b1") == []


def test_a_failing_cosigner_is_named_and_nothing_is_journaled_as_signed(world):
    a, broken = Counted(PrivateKey.random()), Counted(PrivateKey.random(), fails=True)
    permit(world.chain.control, world.address, [world.key],
           [active([(a.address, 1), (broken.address, 1)], threshold=2)])
    world.signer = a
    with pytest.raises(SignerError) as info:
        send(world, permission_id=2, cosigners=[broken])
    assert str(info.value) == (f"cosigner {broken.address} failed (RuntimeError): nothing was "
                               "signed")
    assert "secret-pin" not in repr(info.value) and info.value.__cause__ is None
    attempts = world.journal.batch("b1")
    assert {x.state for x in attempts} == {PayoutState.ABANDONED}
    assert not any(x.txid or x.signed_tx for x in attempts)
    world.chain.blocks(1)
    assert world.on_chain() == []
