"""Payouts signed by the KMS signer on the sandbox chain: accepted, executed, once each.

The sender is a KMS key's address (moto's KMS, tests/support/kms.py), funded on a
sandbox chain whose blocks move only when the test says. The chain checks every
signature recovers to the owner, as java-tron does; a signer that refuses in the
middle of a batch leaves nothing journaled as signed, and the next pass pays each
payout exactly once.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from airflow.providers.common.compat.sdk import AirflowException, AirflowFailException

from airflow_provider_tronenergy.payout.journal import PayoutState
from airflow_provider_tronenergy.signer import (
    SignerKeyDisabled,
    SignerThrottled,
    recovered_address,
)
from airflow_provider_tronenergy.signer.kms import KmsSigner
from airflow_provider_tronenergy.verdicts.payout import signer_failure
from support import kms as aws
from support.chain import manual_chain
from support.payouts import Payouts

SECRETS = ("AKIAKMSPAYOUTTEST001", "kms-payout-secret/+key", "kms-payout-session-token")


class KmsPayouts(Payouts):
    """A funded sender whose key is in KMS: the worker never holds it."""

    def __init__(self, chain, tmp_path: Path, signer: KmsSigner) -> None:
        super().__init__(chain, tmp_path)
        self.key = None  # the local key Payouts made is not used
        self.signer, self.address = signer, signer.address
        chain.control.wallet(self.address, trx="1000", usdt="100000")


@pytest.fixture
def kms() -> Iterator[tuple[aws.Faults, str, KmsSigner]]:
    with aws.aws_kms() as faults:
        client = aws.client(aws_access_key_id=SECRETS[0], aws_secret_access_key=SECRETS[1],
                            aws_session_token=SECRETS[2])
        key_id = aws.new_key(client, alias="alias/tron-payouts")
        yield faults, key_id, KmsSigner(client, "alias/tron-payouts")


@pytest.fixture
def world(tmp_path: Path, kms) -> Iterator[KmsPayouts]:
    with manual_chain() as chain:
        payouts = KmsPayouts(chain, tmp_path, kms[2])
        try:
            yield payouts
        finally:
            payouts.close()


def send(world: KmsPayouts, rows, **settings):
    return world.sender(**settings).send(rows, sender=world.address, token="USDT",
                                         batch_id="b1")


def settle(world: KmsPayouts):
    world.chain.blocks(1)
    return world.watch("b1").step()


def signatures_recover_to_the_key(world: KmsPayouts) -> None:
    for attempt in world.journal.batch("b1"):
        if attempt.state is PayoutState.CONFIRMED:
            signature = bytes.fromhex(attempt.signed_tx["signature"][0])
            assert recovered_address(bytes.fromhex(attempt.txid), signature) == world.address


def test_a_batch_signed_in_kms_is_accepted_and_executed_once(world, kms):
    faults = kms[0]
    recipients = world.recipients(4) + world.recipients(1, holders=False)
    rows = world.rows(recipients)
    sent = send(world, rows)
    assert (sent.signed, sent.accepted) == (5, 5)
    assert settle(world).confirmed == 5
    assert world.successes_per_recipient() == Counter(recipients)
    assert {t["owner"] for t in world.on_chain()} == {world.address}
    signatures_recover_to_the_key(world)
    assert faults.seen == ["DIGEST"] * 5


def test_throttling_mid_batch_journals_nothing_as_signed_and_a_retry_pays_once(world, kms):
    """Failed before payout.send gave up a refused chunk's claims: the retry found them
    ``signing`` and waited out the lease instead of signing."""
    faults = kms[0]
    rows = world.rows(world.recipients(4))
    faults.at(2, aws.refusal("ThrottlingException", "Rate exceeded"))
    with pytest.raises(SignerThrottled) as info:
        send(world, rows, scope="try1")
    assert info.value.retryable
    assert isinstance(signer_failure(info.value), AirflowException)
    assert not isinstance(signer_failure(info.value), AirflowFailException)
    attempts = world.journal.batch("b1")
    assert {a.state for a in attempts} == {PayoutState.ABANDONED}
    assert not any(a.txid or a.signed_tx for a in attempts)
    assert world.on_chain() == []
    again = send(world, rows, scope="try2")  # at once: no lease to wait out
    assert (again.signed, again.accepted) == (4, 4)
    assert settle(world).confirmed == 4
    assert world.successes_per_recipient() == Counter(r.recipient for r in rows)
    signatures_recover_to_the_key(world)


def test_a_key_disabled_mid_batch_stops_the_rest_and_each_payout_is_paid_once(world, kms):
    faults, key_id = kms[0], kms[1]
    rows = world.rows(world.recipients(5))
    faults.at(2, aws.disable(key_id))
    with pytest.raises(SignerKeyDisabled, match="disabled") as info:
        send(world, rows, chunk=2, scope="try1")
    assert isinstance(signer_failure(info.value), AirflowFailException)
    states = Counter(a.state for a in world.journal.batch("b1"))
    assert states == Counter({PayoutState.SENT: 2, PayoutState.ABANDONED: 2})
    world.chain.blocks(1)
    assert len(world.on_chain()) == 2  # the first chunk, signed before the key was disabled
    aws._backend().enable_key(key_id)
    again = send(world, rows, chunk=2, scope="try2")
    assert (again.signed, again.accepted) == (3, 3)
    assert settle(world).confirmed == 5
    assert world.successes_per_recipient() == Counter(r.recipient for r in rows)
    signatures_recover_to_the_key(world)


def test_no_key_material_or_aws_secret_anywhere_a_kms_batch_leaves(world, kms, caplog,
                                                                  tmp_path):
    faults, key_id, signer = kms
    private = aws.private_number(key_id)
    caplog.set_level(logging.DEBUG, logger="airflow_provider_tronenergy")
    rows = world.rows(world.recipients(3))
    sent = send(world, rows)
    assert sent.accepted == 3
    settle(world)
    faults.at(0, aws.refusal("InvalidSignatureException",
                             f"Canonical request: x-amz-security-token:{SECRETS[2]}"))
    with pytest.raises(Exception) as info:
        send(world, world.rows(world.recipients(1), batch_id="b2"))
    left = [caplog.text, repr(signer), str(signer), str(info.value),
            repr(world.journal.batch("b1")), repr(world.journal.batch("b2"))]
    left += [p.read_bytes().decode("latin-1") for p in tmp_path.rglob("*") if p.is_file()]
    everything = "\n".join(left)
    assert world.address in everything  # the search looked at something
    for secret in (*SECRETS, f"{private:064x}", f"{private:x}", str(private)):
        assert secret not in everything


class Together:
    """A signer whose calls wait for each other: signed one after another, the first
    call waits in vain (``BrokenBarrierError``)."""

    def __init__(self, inner: KmsSigner, parties: int) -> None:
        self.inner, self.barrier = inner, threading.Barrier(parties, timeout=30)

    @property
    def address(self) -> str:
        return self.inner.address

    def sign(self, txid: bytes) -> bytes:
        self.barrier.wait()
        return self.inner.sign(txid)


def test_a_remote_signer_signs_a_chunk_concurrently(world, kms):
    """Failed before payout.send signed a chunk's transfers in parallel: KMS's round trips
    one after another made 10,000 payouts spend minutes signing (docs/performance.md)."""
    world.signer = Together(kms[2], parties=4)
    rows = world.rows(world.recipients(4))
    sent = send(world, rows, concurrency=4)
    assert (sent.signed, sent.accepted) == (4, 4)
    assert settle(world).confirmed == 4
    signatures_recover_to_the_key(world)
