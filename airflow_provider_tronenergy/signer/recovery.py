"""A remote key's DER answers made into what TRON takes: a 64-byte point, ``r || s || v``.

A signing service (AWS KMS, an HSM) gives its public key as DER SubjectPublicKeyInfo and
each signature as a DER ``SEQUENCE { r INTEGER, s INTEGER }``, with no recovery id and
``s`` in either half. TRON wants 65 bytes: ``r`` and ``s`` as 32 bytes each and ``v``,
the recovery id (0 or 1, as tronpy's ``Signature.to_bytes`` and this package's
:class:`~airflow_provider_tronenergy.signer.LocalKeySigner` give it; java-tron's
``SignUtils``/``ECKey.signatureToAddress`` takes 0/1 or 27/28). ``s`` is brought to the
low half (``n - s``): the same signature, the form secp256k1 libraries (coincurve, which
tronpy uses) verify. The DER is read by the ``cryptography`` package, never by hand;
the recovery id is found by recovering against the public key (tronpy's keys).
"""

from __future__ import annotations

from typing import Final

from airflow_provider_tronenergy.signer import SignerError, SignerKeyUnsuitable

SECP256K1_N: Final = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
"""The order of secp256k1's group (SEC 2, 2.4.1); tronpy's ``keys.SECPK1_N``."""
HALF_N: Final = SECP256K1_N // 2


def public_point(der: bytes) -> bytes:
    """The 64-byte ``X || Y`` of a DER SubjectPublicKeyInfo holding a secp256k1 key;
    :class:`SignerKeyUnsuitable` for any other key."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        PublicFormat,
        load_der_public_key,
    )

    try:
        key = load_der_public_key(bytes(der))
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise SignerKeyUnsuitable("the public key is not a DER SubjectPublicKeyInfo") from None
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve,
                                                                         ec.SECP256K1):
        raise SignerKeyUnsuitable("the public key is not on secp256k1, the curve TRON signs "
                                  "with")
    return key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)[1:]


def der_signature(der: bytes) -> tuple[int, int]:
    """``(r, s)`` of a DER ECDSA signature, ``s`` in the low half; a signature no
    secp256k1 key can make is refused."""
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    try:
        r, s = decode_dss_signature(bytes(der))
    except ValueError:
        raise SignerError("the signing service's answer is not a DER ECDSA signature") from None
    if not (0 < r < SECP256K1_N and 0 < s < SECP256K1_N):
        raise SignerError("the signing service's signature is out of secp256k1's range")
    return r, (SECP256K1_N - s if s > HALF_N else s)


def recoverable(txid: bytes, r: int, s: int, point: bytes) -> bytes:
    """``r || s || v``: the recovery id ``v`` (0 or 1) whose recovered key is ``point``."""
    body = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    for v in (0, 1):
        candidate = body + bytes([v])
        if _recovers(txid, candidate) == point:
            return candidate
    raise SignerError("the signature recovers to no recovery id of the key's public key: "
                      "it is not this key's signature of this transaction")


def _recovers(txid: bytes, signature: bytes) -> bytes | None:
    """The 64-byte key ``signature`` recovers to, or None (tronpy's ``BadSignature``)."""
    from tronpy.keys import Signature

    try:
        return bytes(Signature(signature).recover_public_key_from_msg_hash(txid).to_bytes())
    except Exception:
        return None
