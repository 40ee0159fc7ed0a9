"""AWS KMS for tests: moto's, made to sign as AWS does, and able to fail as AWS does.

moto (5.2) makes ``ECC_SECG_P256K1`` keys and signs with them, but differs from AWS in two
ways that matter to a TRON signer, each put right here in a few lines:

* ``Sign`` with ``MessageType=DIGEST``: AWS signs the 32 bytes as given (they are the
  SHA-256 already); moto ignores ``MessageType`` and hashes them again (its docs: "The
  MessageType-parameter DIGEST is not yet implemented"), so no signature of a txID
  would recover to the key. Here a DIGEST is signed pre-hashed, and one of another
  length refused (``ValidationException``) as AWS refuses it.
* a disabled key (``DisabledException``) or one pending deletion
  (``KMSInvalidStateException``) refuses ``Sign`` on AWS; moto signs with it.

:class:`Faults` adds what no emulator does by itself: a refusal (``ThrottlingException``,
...) or an action (disable the key) after so many signatures, as a quota or an operator
would in the middle of a batch. Everything stays in process (moto's ``mock_aws``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import boto3
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed
from moto import mock_aws
from moto.core.exceptions import JsonRESTError
from moto.kms.models import KmsBackend, kms_backends
from moto.kms.responses import KmsResponse

from airflow_provider_tronenergy.signer.kms import KmsSigner, kms_client

REGION = "eu-west-1"
ACCOUNT = "123456789012"  # moto's default account
_REQUEST = threading.local()


@dataclass
class Faults:
    """What KMS does after ``after`` more signatures: ``then()`` (raise a refusal, or
    change the key), once or ``every`` time from then on."""

    signs: int = 0
    after: int | None = None
    then: Callable[[], None] | None = None
    every: bool = False
    seen: list[str] = field(default_factory=list)

    def at(self, after: int, then: Callable[[], None], *, every: bool = False) -> None:
        self.after, self.then, self.every = self.signs + after, then, every

    def clear(self) -> None:
        self.after = self.then = None

    def before_sign(self) -> None:
        if self.after is not None and self.then is not None and self.signs >= self.after:
            then = self.then
            if not self.every:
                self.clear()
            then()
        self.signs += 1


def refusal(code: str, message: str = "refused") -> Callable[[], None]:
    """A KMS error answer (HTTP 400 with ``__type`` = ``code``)."""
    def refuse() -> None:
        raise JsonRESTError(code, message)
    return refuse


def _backend() -> KmsBackend:
    return kms_backends[ACCOUNT][REGION]


@contextmanager
def aws_kms() -> Iterator[Faults]:
    """moto's KMS in process, signing DIGESTs and refusing unusable keys as AWS does."""
    faults = Faults()
    original_response_sign = KmsResponse.sign

    def response_sign(self: KmsResponse) -> str:
        _REQUEST.message_type = self._get_param("MessageType") or "RAW"
        try:
            return original_response_sign(self)
        finally:
            _REQUEST.message_type = "RAW"

    def backend_sign(self: KmsBackend, key_id: str, message: bytes,
                     signing_algorithm: str) -> tuple[str, bytes, str]:
        key = self.describe_key(key_id)
        if key.key_state == "Disabled":
            raise JsonRESTError("DisabledException", f"{key.arn} is disabled.")
        if key.key_state != "Enabled":
            raise JsonRESTError("KMSInvalidStateException", f"{key.arn} is {key.key_state}.")
        faults.before_sign()
        faults.seen.append(getattr(_REQUEST, "message_type", "RAW"))
        if getattr(_REQUEST, "message_type", "RAW") != "DIGEST":
            return original_backend_sign(self, key_id, message, signing_algorithm)
        if key.key_usage != "SIGN_VERIFY" or signing_algorithm not in key.signing_algorithms:
            raise JsonRESTError("InvalidKeyUsageException", "not a signing key")
        if signing_algorithm != "ECDSA_SHA_256" or len(message) != 32:
            raise JsonRESTError("ValidationException", "Digest is invalid length for "
                                "algorithm ECDSA_SHA_256.")
        signature = key.private_key.private_key.sign(message, ec.ECDSA(Prehashed(
            hashes.SHA256())))
        return key.arn, signature, signing_algorithm

    original_backend_sign = KmsBackend.sign
    with mock_aws(), mock.patch.object(KmsResponse, "sign", response_sign), \
            mock.patch.object(KmsBackend, "sign", backend_sign):
        yield faults


def client(**session: Any) -> Any:
    """A KMS client as the hook builds one, without boto3's retries (a throttled call
    reaches the signer at once) and on ``session``'s credentials if given."""
    return kms_client(REGION, attempts=1,
                      session=boto3.session.Session(region_name=REGION, **session)
                      if session else None)


def new_key(kms: Any, spec: str = "ECC_SECG_P256K1", usage: str = "SIGN_VERIFY",
            alias: str | None = None) -> str:
    """A new KMS key's id (and its alias, when given)."""
    key_id = str(kms.create_key(KeySpec=spec, KeyUsage=usage)["KeyMetadata"]["KeyId"])
    if alias:
        kms.create_alias(AliasName=alias, TargetKeyId=key_id)
    return key_id


def private_number(key_id: str) -> int:
    """The key KMS holds (for checking it appears nowhere; a real KMS never shows it)."""
    return int(_backend().keys[key_id].private_key.private_key.private_numbers()
               .private_value)


def disable(key_id: str) -> Callable[[], None]:
    return lambda: _backend().disable_key(key_id)


def signer(kms: Any, key_id: str, **kwargs: Any) -> KmsSigner:
    return KmsSigner(kms, key_id, **kwargs)
