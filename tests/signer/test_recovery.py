"""A remote key's DER answers made into TRON's 65 bytes: every edge of the encoding.

Signatures come from tronpy's keys (coincurve, RFC 6979: deterministic), re-encoded as
a signing service would send them: DER, ``s`` in either half, no recovery id. Each must
come back as exactly tronpy's ``r || s || v``.
"""

from __future__ import annotations

import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.signer import SignerError, SignerKeyUnsuitable
from airflow_provider_tronenergy.signer.recovery import (
    HALF_N,
    SECP256K1_N,
    der_signature,
    public_point,
    recoverable,
)

KEY = PrivateKey(hashlib.sha256(b"recovery tests").digest())
POINT = KEY.public_key.to_bytes()


def txid(i: int) -> bytes:
    return hashlib.sha256(b"tx %d" % i).digest()


def signed(i: int) -> tuple[bytes, int, int, int]:
    """(txid, r, s, v) as tronpy signs: low s, v 0 or 1."""
    sig = KEY.sign_msg_hash(txid(i))
    return txid(i), sig.r, sig.s, sig.v


def first(condition) -> tuple[bytes, int, int, int]:
    """The first deterministic signature meeting ``condition(r, s, v)``."""
    for i in range(20_000):
        found = signed(i)
        if condition(*found[1:]):
            return found
    raise AssertionError("no such signature in 20,000")


def test_the_der_public_key_gives_the_point_and_the_address():
    private = ec.derive_private_key(int.from_bytes(KEY.to_bytes(), "big"), ec.SECP256K1())
    der = private.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    assert public_point(der) == POINT


@pytest.mark.parametrize("curve", [ec.SECP256R1(), ec.SECP384R1()], ids=["P-256", "P-384"])
def test_a_key_on_another_curve_is_unsuitable(curve):
    der = ec.generate_private_key(curve).public_key().public_bytes(
        Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    with pytest.raises(SignerKeyUnsuitable, match="secp256k1"):
        public_point(der)


def test_bytes_that_are_no_public_key_are_unsuitable():
    with pytest.raises(SignerKeyUnsuitable, match="SubjectPublicKeyInfo"):
        public_point(b"\x30\x03\x02\x01\x01")


@pytest.mark.parametrize("parity", [0, 1])
def test_the_recovery_id_is_found_for_both_parities(parity):
    tx, r, s, _v = first(lambda r, s, v: v == parity)
    made = recoverable(tx, *der_signature(encode_dss_signature(r, s)), POINT)
    assert made == KEY.sign_msg_hash(tx).to_bytes() and made[64] == parity


@pytest.mark.parametrize("parity", [0, 1])
def test_a_high_s_is_brought_to_the_low_half_and_recovers(parity):
    tx, r, s, _v = first(lambda r, s, v: v == parity)
    high = SECP256K1_N - s
    assert high > HALF_N
    assert der_signature(encode_dss_signature(r, high)) == (r, s)
    assert recoverable(tx, r, s, POINT) == KEY.sign_msg_hash(tx).to_bytes()


@pytest.mark.parametrize("which", ["r", "s"])
def test_a_short_integer_is_padded_back_to_32_bytes(which):
    """DER drops leading zero bytes: an ``r`` or ``s`` under 2**248 arrives in 31 bytes
    (or fewer) and must be left-padded, not shifted."""
    index = 0 if which == "r" else 1
    tx, r, s, _v = first(lambda *rsv: rsv[index] < 2**247)
    der = encode_dss_signature(r, s)
    lengths = (der[3], der[5 + der[3]])  # SEQUENCE, INTEGER r (len), INTEGER s (len)
    assert lengths[index] == 31
    made = recoverable(tx, *der_signature(der), POINT)
    assert made == KEY.sign_msg_hash(tx).to_bytes()
    assert made[32 * index] == 0


def test_an_integer_with_its_top_bit_set_carries_a_leading_zero_in_der():
    tx, r, s, _v = first(lambda r, s, v: r >= 2**255)
    der = encode_dss_signature(r, s)
    assert der[3] == 33 and der[4] == 0
    assert recoverable(tx, *der_signature(der), POINT) == KEY.sign_msg_hash(tx).to_bytes()


@pytest.mark.parametrize("der", [
    b"",
    b"\x30\x00",
    encode_dss_signature(1, 1)[:-1],
    # r with a superfluous leading zero: BER, not DER.
    bytes.fromhex("3007020300000102010102"),
], ids=["empty", "empty-sequence", "truncated", "not-minimal"])
def test_bytes_that_are_no_der_signature_are_refused(der):
    with pytest.raises(SignerError, match="not a DER ECDSA signature"):
        der_signature(der)


@pytest.mark.parametrize("r, s", [(0, 1), (1, 0), (SECP256K1_N, 1), (1, SECP256K1_N)])
def test_integers_out_of_the_curves_range_are_refused(r, s):
    with pytest.raises(SignerError, match="out of secp256k1's range"):
        der_signature(encode_dss_signature(r, s))


def test_a_signature_by_another_key_recovers_to_no_recovery_id():
    tx, r, s, _v = signed(1)
    other = PrivateKey(hashlib.sha256(b"another key").digest()).public_key.to_bytes()
    with pytest.raises(SignerError, match="not this key's signature"):
        recoverable(tx, r, s, other)
    with pytest.raises(SignerError, match="not this key's signature"):
        recoverable(txid(2), r, s, POINT)
