"""A payout key kept in AWS KMS: the worker asks KMS to sign and never holds the key.

:class:`KmsSigner` reads the key's public key once (``GetPublicKey``), refuses a key that
is not ``ECC_SECG_P256K1`` for ``SIGN_VERIFY``, and derives its TRON address (keccak of
the point, ``0x41``, base58check: tronpy's ``PublicKey``). Each transaction id is signed
as a digest (``Sign``, ``MessageType=DIGEST``, ``ECDSA_SHA_256``: KMS signs the 32 bytes
as given, they are already a SHA-256) and made into TRON's 65 bytes by
:mod:`.recovery`. :func:`~airflow_provider_tronenergy.signer.signature_for` then checks
it recovers to the address, as it checks every signer.

KMS's refusals become the signer's named errors (:data:`NAMED`); a message names the
operation, the key and KMS's error code, never KMS's own text (an
``InvalidSignatureException`` repeats the signed request, whose headers may hold a
session token) nor a chained exception. The boto3 client comes from :func:`kms_client`
(the default credential chain, or a session the ``tron_signer`` hook takes from an
Airflow ``aws`` connection); boto3 is the ``[aws]`` extra, imported only when used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from airflow_provider_tronenergy.signer import (
    SignerError,
    SignerKeyDisabled,
    SignerKeyNotFound,
    SignerKeyUnsuitable,
    SignerNotPermitted,
    SignerThrottled,
    SignerUnavailable,
)
from airflow_provider_tronenergy.signer.recovery import der_signature, public_point, recoverable

KEY_SPEC: Final = "ECC_SECG_P256K1"
KEY_USAGE: Final = "SIGN_VERIFY"
ALGORITHM: Final = "ECDSA_SHA_256"

NAMED: Final[dict[str, tuple[type[SignerError], str]]] = {
    "NotFoundException": (SignerKeyNotFound, "no such key (or alias) in this account and "
                                             "region"),
    "DisabledException": (SignerKeyDisabled, "the key is disabled"),
    "KMSInvalidStateException": (SignerKeyDisabled, "the key cannot sign in its state "
                                                    "(pending deletion or import)"),
    "KeyUnavailableException": (SignerUnavailable, "the key is unavailable for now"),
    "AccessDeniedException": (SignerNotPermitted, "these credentials may not use the key "
                                                  "(the key policy or IAM)"),
    "UnrecognizedClientException": (SignerNotPermitted, "the credentials are not accepted"),
    "InvalidSignatureException": (SignerNotPermitted, "the credentials are not accepted"),
    "ExpiredTokenException": (SignerNotPermitted, "the credentials have expired"),
    "InvalidKeyUsageException": (SignerKeyUnsuitable, f"the key is not a {KEY_USAGE} key"),
    "UnsupportedOperationException": (SignerKeyUnsuitable, "the key cannot do this"),
    "ThrottlingException": (SignerThrottled, "KMS is throttling this account's requests"),
    "LimitExceededException": (SignerThrottled, "a KMS request quota is exhausted"),
    "KMSInternalException": (SignerUnavailable, "KMS failed inside"),
    "DependencyTimeoutException": (SignerUnavailable, "KMS timed out inside"),
}
"""KMS's error codes (its API reference, Sign and GetPublicKey) -> the signer's errors."""


def kms_error(exc: BaseException, operation: str, key_id: str | None) -> SignerError:
    """The signer's named error for what a KMS call raised: the code, never the text."""
    code = (getattr(exc, "response", None) or {}).get("Error", {}).get("Code")
    where = f"KMS {operation}" + (f" with key {key_id!r}" if key_id else "")
    if isinstance(code, str) and code:
        cls, why = NAMED.get(code, (SignerError, "KMS refused the request"))
        return cls(f"{where}: {why} ({code})")
    name = type(exc).__name__
    if name in ("NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError"):
        return SignerNotPermitted(f"{where}: no usable AWS credentials were found ({name})")
    if name == "NoRegionError":
        return SignerError(f"{where}: no AWS region (give region_name)")
    # EndpointConnectionError, ReadTimeoutError, ConnectTimeoutError, ...: no answer.
    return SignerUnavailable(f"{where}: no answer from KMS ({name})")


def _call(operation: str, key_id: str, call: Callable[..., Any], **kwargs: Any) -> Any:
    try:
        return call(**kwargs)
    except Exception as exc:
        raise kms_error(exc, operation, key_id) from None


class KmsSigner:
    """Signs with a secp256k1 key held in AWS KMS.

    :param client: a boto3 KMS client (:func:`kms_client`).
    :param key_id: the key's id, ARN or alias (``alias/...``); after ``GetPublicKey``
        every ``Sign`` names the key KMS answered with, so an alias moved to another key
        mid-run cannot change the key that signs.
    :param address: the address the key must sign for (the payout's sender): any other
        is refused here, before anything is signed.
    """

    __slots__ = ("_address", "_client", "_key_arn", "_key_id", "_point")

    def __init__(self, client: Any, key_id: str, *, address: str | None = None) -> None:
        from tronpy.keys import PublicKey

        if not isinstance(key_id, str) or not key_id.strip():
            raise SignerError("kms_key_id must name a KMS key (its id, ARN or alias/...)")
        self._client, self._key_id = client, key_id.strip()
        answer = _call("GetPublicKey", self._key_id, client.get_public_key, KeyId=self._key_id)
        spec = answer.get("KeySpec") or answer.get("CustomerMasterKeySpec")
        usage = answer.get("KeyUsage")
        if spec != KEY_SPEC or usage != KEY_USAGE:
            raise SignerKeyUnsuitable(
                f"KMS key {self._key_id!r} is {spec} for {usage}: TRON needs {KEY_SPEC} "
                f"for {KEY_USAGE}")
        if ALGORITHM not in answer.get("SigningAlgorithms", [ALGORITHM]):
            raise SignerKeyUnsuitable(f"KMS key {self._key_id!r} does not sign {ALGORITHM}")
        self._point = public_point(answer["PublicKey"])
        self._key_arn: str = answer.get("KeyId") or self._key_id
        self._address: str = PublicKey(self._point).to_base58check_address()
        if address is not None and address != self._address:
            raise SignerError(f"KMS key {self._key_id!r} signs for {self._address}, not for "
                              f"{address}: nothing is signed with it")

    @property
    def address(self) -> str:
        """The address of the KMS key."""
        return self._address

    def sign(self, txid: bytes) -> bytes:
        """KMS's signature of the 32-byte transaction id, as ``r || s || v``."""
        if len(txid) != 32:
            raise SignerError("a transaction id is 32 bytes")
        answer = _call("Sign", self._key_id, self._client.sign, KeyId=self._key_arn,
                       Message=bytes(txid), MessageType="DIGEST", SigningAlgorithm=ALGORITHM)
        r, s = der_signature(answer["Signature"])
        return recoverable(bytes(txid), r, s, self._point)

    def __repr__(self) -> str:
        return f"KmsSigner(key_id={self._key_id!r}, address={self._address!r})"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("a signer holds a client with credentials and is never pickled")


def kms_client(region_name: str | None = None, *, session: Any = None,
               endpoint_url: str | None = None, attempts: int = 3) -> Any:
    """A boto3 KMS client: ``session``'s credentials (an Airflow ``aws`` connection's), or
    boto3's default chain (environment, profile, the instance's or the task's role);
    ``endpoint_url``: a VPC endpoint of KMS, or an emulator.

    boto3's standard retry mode makes a throttled or failed call ``attempts`` times in
    all, with backoff, before :class:`SignerThrottled` reaches the payout."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise SignerError("the KMS signer needs boto3: install "
                          "'airflow-provider-tronenergy[aws]'") from None
    config = Config(retries={"mode": "standard", "total_max_attempts": attempts},
                    connect_timeout=5, read_timeout=15)
    try:
        return (session or boto3.session.Session()).client(
            "kms", region_name=region_name, endpoint_url=endpoint_url, config=config)
    except Exception as exc:
        raise kms_error(exc, "client", None) from None
