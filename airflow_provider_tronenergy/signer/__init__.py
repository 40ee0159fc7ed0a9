"""Who signs a payout: a key kept apart from everything else.

A :class:`Signer` is an address and ``sign(txid) -> 65-byte signature``. Two kinds:

* :class:`LocalKeySigner`: a private key from the ``tron_signer`` connection's password,
  held in memory only while a payout task runs. Its repr names the address; it cannot
  be pickled (so it never reaches XCom or trigger kwargs) and no error repeats the key.
* :class:`~.kms.KmsSigner`: a secp256k1 key in AWS KMS (the ``[aws]`` extra); the key
  never leaves KMS, the worker holds only its public key.
* an **external signer** (an HSM, a signing service): any class named by import path,
  so the key never reaches Airflow. :func:`load_signer` builds it.

Whatever signs, :func:`signature_for` checks the signature recovers to the signer's
address before a transaction carrying it is journaled: a misconfigured external signer
stops the payout before anything is broadcast.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Final, Protocol, runtime_checkable

from airflow_provider_tronenergy.errors import TronEnergyProviderError
from tronenergy_protocol.address import is_valid_address

SIGNATURE_BYTES: Final = 65
_HEX_KEY = re.compile(r"(?:0x)?[0-9a-fA-F]{64}")
_IMPORT_PATH = re.compile(r"[A-Za-z_][\w.]*(?::|\.)[A-Za-z_]\w*")


class SignerError(TronEnergyProviderError, ValueError):
    """A signer cannot be built or gave a signature that is not its address's."""

    retryable: bool = False
    """A later try may succeed as it is (a busy or unreachable signing service)."""


class SignerKeyNotFound(SignerError):
    """The signing service has no key by that id or alias (for these credentials)."""


class SignerKeyUnsuitable(SignerError):
    """The key is not a secp256k1 signing key (the wrong key spec or usage)."""


class SignerNotPermitted(SignerError):
    """The credentials may not use the key, or are not accepted (no credentials, expired)."""


class SignerKeyDisabled(SignerError):
    """The key exists but cannot sign now: disabled, or pending deletion."""


class SignerThrottled(SignerError):
    """The signing service asked to slow down: nothing was signed by this call; retry later."""

    retryable = True


class SignerUnavailable(SignerError):
    """The signing service did not answer, or failed inside: nothing to use was signed."""

    retryable = True


@runtime_checkable
class Signer(Protocol):
    """What signs payouts: the address it signs for, and a recoverable secp256k1 signature."""

    @property
    def address(self) -> str:
        """The base58check address whose key signs."""

    def sign(self, txid: bytes) -> bytes:
        """A 65-byte ``r || s || v`` signature of the 32-byte transaction id."""


class LocalKeySigner:
    """A private key held in memory, for a hot wallet whose key Airflow's secrets keep."""

    __slots__ = ("_address", "_key")

    def __init__(self, private_key_hex: str) -> None:
        from tronpy.keys import PrivateKey

        text = private_key_hex.strip() if isinstance(private_key_hex, str) else ""
        if not _HEX_KEY.fullmatch(text):
            raise SignerError("the private key must be 64 hexadecimal characters (32 bytes)")
        try:
            key = PrivateKey(bytes.fromhex(text.removeprefix("0x")))
        except Exception:  # tronpy's BadKey repeats nothing, but keep the key out anyway
            raise SignerError("the private key is not a valid secp256k1 key") from None
        self._key = key
        self._address: str = key.public_key.to_base58check_address()

    @property
    def address(self) -> str:
        """The address this key signs for."""
        return self._address

    def sign(self, txid: bytes) -> bytes:
        """Sign the transaction id (coincurve, through tronpy's keys)."""
        return bytes(self._key.sign_msg_hash(txid).to_bytes())

    def __repr__(self) -> str:
        return f"LocalKeySigner(address={self._address!r})"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("a signer holds a private key and is never pickled or serialised")


def load_signer(import_path: str, kwargs: dict[str, Any] | None = None) -> Signer:
    """An external signer: ``package.module:Class`` (or ``package.module.Class``) built
    with ``kwargs`` (from the connection's extra; no secret belongs there)."""
    if not isinstance(import_path, str) or not _IMPORT_PATH.fullmatch(import_path):
        raise SignerError("signer_class must be an import path like 'package.module:Class'")
    module_name, _, name = (import_path.partition(":") if ":" in import_path
                            else import_path.rpartition("."))
    try:
        factory = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise SignerError(f"signer_class {import_path!r} cannot be imported "
                          f"({type(exc).__name__})") from None
    try:
        signer = factory(**(kwargs or {}))
    except Exception as exc:
        raise SignerError(f"signer_class {import_path!r} could not be built "
                          f"({type(exc).__name__})") from None
    if not isinstance(signer, Signer):
        raise SignerError(f"signer_class {import_path!r} has no address and sign(txid)")
    if not is_valid_address(str(signer.address)):
        raise SignerError(f"signer_class {import_path!r} signs for {signer.address!r}, "
                          "which is not a valid TRON address")
    return signer


def recovered_address(txid: bytes, signature: bytes) -> str | None:
    """The address whose key made ``signature`` over ``txid``, or None if it recovers to none."""
    from tronpy.keys import Signature

    try:
        public = Signature(signature).recover_public_key_from_msg_hash(txid)
    except Exception:
        return None
    return str(public.to_base58check_address())


def signature_for(signer: Signer, txid: bytes) -> bytes:
    """``signer``'s signature of ``txid``, checked: 65 bytes, recovering to its address."""
    if len(txid) != 32:
        raise SignerError("a transaction id is 32 bytes")
    signature = signer.sign(txid)
    if not isinstance(signature, bytes | bytearray) or len(signature) != SIGNATURE_BYTES:
        raise SignerError(f"the signer for {signer.address} did not return a 65-byte signature")
    signature = bytes(signature)
    if recovered_address(txid, signature) != signer.address:
        raise SignerError(f"the signer for {signer.address} returned a signature of another "
                          "key: nothing is sent with it")
    return signature
