"""The KMS signer against moto's KMS (tests/support/kms.py: signing DIGESTs as AWS does).

Every signature is checked the way payouts check it (``signature_for``: 65 bytes that
recover to the signer's address), and the address against the key KMS holds.
"""

from __future__ import annotations

import hashlib
import pickle

import boto3
import pytest
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.signer import (
    SignerError,
    SignerKeyDisabled,
    SignerKeyNotFound,
    SignerKeyUnsuitable,
    SignerNotPermitted,
    SignerThrottled,
    SignerUnavailable,
    recovered_address,
    signature_for,
)
from airflow_provider_tronenergy.signer.kms import KmsSigner, kms_client
from support import kms as aws
from support.ports import closed_port

SECRET_WORDS = ("AKIAFAKEKMSTESTKEY01", "kms-test-secret-key/do+not+log",
                "kms-test-session-token-secret")


@pytest.fixture(scope="module")
def kms():
    """One moto KMS for the module (starting one takes seconds); keys are per test."""
    with aws.aws_kms() as faults:
        yield faults, aws.client()


@pytest.fixture
def faults(kms):
    kms[0].clear()
    kms[0].seen.clear()
    kms[0].signs = 0
    return kms[0]


@pytest.fixture
def client(kms, faults):
    return kms[1]


def txid(i: int) -> bytes:
    return hashlib.sha256(b"kms tx %d" % i).digest()


def address_of(key_id: str) -> str:
    key = PrivateKey(aws.private_number(key_id).to_bytes(32, "big"))
    return str(key.public_key.to_base58check_address())


def test_the_signer_signs_for_the_address_of_the_key_kms_holds(client, faults):
    key_id = aws.new_key(client)
    signer = KmsSigner(client, key_id)
    assert signer.address == address_of(key_id)
    parities = set()
    for i in range(40):
        signature = signature_for(signer, txid(i))
        assert recovered_address(txid(i), signature) == signer.address
        assert int.from_bytes(signature[32:64], "big") <= aws_half_n()
        parities.add(signature[64])
        if parities == {0, 1}:
            break
    assert parities == {0, 1}  # both recovery ids met, each found
    assert set(faults.seen) == {"DIGEST"}


def aws_half_n() -> int:
    from airflow_provider_tronenergy.signer.recovery import HALF_N
    return HALF_N


def test_an_alias_names_the_key_and_signing_stays_on_the_key_it_named(client):
    first = aws.new_key(client, alias="alias/tron-payouts")
    signer = KmsSigner(client, "alias/tron-payouts", address=address_of(first))
    second = aws.new_key(client)
    client.update_alias(AliasName="alias/tron-payouts", TargetKeyId=second)
    assert recovered_address(txid(1), signature_for(signer, txid(1))) == address_of(first)


def test_a_key_for_another_address_is_refused_before_anything_is_signed(client, faults):
    key_id = aws.new_key(client)
    other = aws.new_key(client)
    with pytest.raises(SignerError, match=f"signs for {address_of(key_id)}, not for "
                                          f"{address_of(other)}"):
        KmsSigner(client, key_id, address=address_of(other))
    assert faults.signs == 0


@pytest.mark.parametrize("spec, usage", [
    ("ECC_NIST_P256", "SIGN_VERIFY"),
    ("ECC_NIST_P384", "SIGN_VERIFY"),
    ("RSA_2048", "SIGN_VERIFY"),
    ("SYMMETRIC_DEFAULT", "ENCRYPT_DECRYPT"),
])
def test_a_key_of_the_wrong_spec_is_refused(client, spec, usage):
    key_id = aws.new_key(client, spec=spec, usage=usage)
    with pytest.raises(SignerKeyUnsuitable, match="TRON needs ECC_SECG_P256K1 for "
                                                  "SIGN_VERIFY"):
        KmsSigner(client, key_id)


@pytest.mark.parametrize("key_id", ["alias/no-such-key", "8f3c1a52-0000-4000-8000-000000000000"])
def test_no_such_key(client, key_id):
    with pytest.raises(SignerKeyNotFound, match=r"no such key .*\(NotFoundException\)"):
        KmsSigner(client, key_id)


def test_a_disabled_key_refuses_to_sign(client):
    key_id = aws.new_key(client)
    signer = KmsSigner(client, key_id)
    client.disable_key(KeyId=key_id)
    with pytest.raises(SignerKeyDisabled, match=r"disabled \(DisabledException\)") as info:
        signer.sign(txid(1))
    assert not info.value.retryable
    client.enable_key(KeyId=key_id)
    assert signature_for(signer, txid(1))


@pytest.mark.parametrize("code, named, retryable", [
    ("ThrottlingException", SignerThrottled, True),
    ("LimitExceededException", SignerThrottled, True),
    ("AccessDeniedException", SignerNotPermitted, False),
    ("KMSInvalidStateException", SignerKeyDisabled, False),
    ("KMSInternalException", SignerUnavailable, True),
    ("KeyUnavailableException", SignerUnavailable, True),
    ("InvalidKeyUsageException", SignerKeyUnsuitable, False),
    ("SomethingNewException", SignerError, False),
])
def test_kms_refusals_are_named_and_never_repeat_kms_text(client, faults, code, named,
                                                          retryable):
    signer = KmsSigner(client, aws.new_key(client))
    # What an InvalidSignatureException-like answer may carry: the signed request.
    faults.at(1, aws.refusal(code, f"X-Amz-Security-Token:{SECRET_WORDS[2]}"))
    assert signature_for(signer, txid(1))
    with pytest.raises(SignerError) as info:
        signer.sign(txid(2))
    assert type(info.value) is named and info.value.retryable is retryable
    assert f"({code})" in str(info.value) and "KMS Sign with key" in str(info.value)
    assert SECRET_WORDS[2] not in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_no_credentials_is_not_permitted(faults, monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(SignerNotPermitted, match="no usable AWS credentials"):
        KmsSigner(kms_client(aws.REGION, attempts=1), "alias/anything")


def test_an_unreachable_kms_is_unavailable_and_retryable():
    """A real socket to a closed port on this machine: no answer at all."""
    port = closed_port()
    session = boto3.session.Session(aws_access_key_id=SECRET_WORDS[0],
                                    aws_secret_access_key=SECRET_WORDS[1],
                                    region_name=aws.REGION)
    client = kms_client(aws.REGION, session=session, attempts=1,
                        endpoint_url=f"http://127.0.0.1:{port}")
    with pytest.raises(SignerUnavailable, match="no answer from KMS") as info:
        KmsSigner(client, "alias/x")
    assert info.value.retryable
    assert not any(word in str(info.value) for word in SECRET_WORDS)


def test_the_signer_shows_no_secret_and_is_never_pickled(faults):
    client = aws.client(aws_access_key_id=SECRET_WORDS[0],
                        aws_secret_access_key=SECRET_WORDS[1],
                        aws_session_token=SECRET_WORDS[2])
    key_id = aws.new_key(client)
    signer = KmsSigner(client, key_id)
    private = aws.private_number(key_id)
    shown = repr(signer) + str(signer) + f"{signer}"
    assert key_id in shown and signer.address in shown
    for secret in (*SECRET_WORDS, f"{private:064x}", str(private)):
        assert secret not in shown
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps(signer)


def test_a_bad_key_id_or_txid_is_refused(client):
    with pytest.raises(SignerError, match="kms_key_id must name"):
        KmsSigner(client, "  ")
    signer = KmsSigner(client, aws.new_key(client))
    with pytest.raises(SignerError, match="32 bytes"):
        signer.sign(b"short")
