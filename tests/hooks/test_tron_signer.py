"""The tron_signer connection: a masked key, a KMS key or an external signer, never shown
anywhere."""

from __future__ import annotations

import hashlib
import json
import sys

import pytest
from airflow.sdk import Connection
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.hooks.tron_signer import (
    TronSignerConnectionError,
    TronSignerHook,
)
from airflow_provider_tronenergy.signer import SignerKeyNotFound, signature_for
from airflow_provider_tronenergy.signer.kms import KmsSigner
from support import kms as aws

KEY = PrivateKey(hashlib.sha256(b"hook tests").digest())


def conn(**kwargs) -> Connection:
    return Connection(conn_id="signer", conn_type="tron_signer", **kwargs)


def test_a_local_key_signs_for_its_address():
    signer = TronSignerHook.signer_of(conn(password=KEY.hex()))
    assert signer.address == KEY.public_key.to_base58check_address()


MASK_SCRIPT = r"""
import io, logging, os
from airflow.sdk.log import configure_logging
from airflow_provider_tronenergy.hooks.tron_signer import TronSignerHook
hook = TronSignerHook()
print("address", hook.address)                  # reads the connection: masks the key
buffer = io.StringIO()
configure_logging(output=buffer, log_level="DEBUG", colored_console_log=False)
key = os.environ["KEY_TO_LEAK"]
hook.log.info("hook log: %s", key)
logging.getLogger("some.library").warning("stdlib log: %s", key)
print(buffer.getvalue())
"""


def test_the_key_is_masked_in_airflow_logs_once_read():
    """Airflow's own logging set-up (as tasks get it) masks the key the hook registered."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "KEY_TO_LEAK": KEY.hex(), "AIRFLOW_CONN_TRON_SIGNER_DEFAULT":
           json.dumps({"conn_type": "tron_signer", "password": KEY.hex()})}
    result = subprocess.run([sys.executable, "-c", MASK_SCRIPT], capture_output=True,
                            text=True, env=env, timeout=120, check=True)
    output = result.stdout + result.stderr
    assert "hook log: ***" in output and "stdlib log: ***" in output
    assert KEY.hex() not in output


def test_an_external_signer_from_the_extra():
    c = conn(extra=json.dumps({"signer_class": "support.signers:KmsLikeSigner",
                               "signer_kwargs": {"passphrase": "hsm"}}))
    assert TronSignerHook.signer_of(c).address.startswith("T")


@pytest.mark.parametrize("kwargs, message", [
    ({}, "no private key"),
    ({"password": "12"}, "64 hexadecimal"),
    ({"password": KEY.hex(), "extra": json.dumps({"signer_class": "a.b:C"})}, "not both"),
    ({"extra": json.dumps({"signer_class": "support.signers:KmsLikeSigner",
                           "signer_kwargs": "x"})}, "signer_kwargs"),
    ({"password": KEY.hex(), "extra": json.dumps(
        {"address": "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"})}, "but its extra says"),
])
def test_an_unusable_connection_is_refused_without_the_key(kwargs, message):
    with pytest.raises(TronSignerConnectionError, match=message) as info:
        TronSignerHook.signer_of(conn(**kwargs))
    assert KEY.hex() not in str(info.value)


def test_test_connection_names_the_address_only(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "password": KEY.hex()}))
    hook = TronSignerHook()
    ok, message = hook.test_connection()
    assert ok and message == f"Signs for {KEY.public_key.to_base58check_address()}"
    assert KEY.hex() not in repr(hook) + repr(hook.get_conn())


# -- a key in AWS KMS (moto's, tests/support/kms.py) ---------------------------------------


@pytest.fixture
def kms_key():
    with aws.aws_kms():
        client = aws.client()
        key_id = aws.new_key(client, alias="alias/hook-payouts")
        yield key_id, KmsSigner(client, key_id).address


def kms_extra(**extra) -> str:
    return json.dumps({"kms_key_id": "alias/hook-payouts", "region_name": aws.REGION, **extra})


def test_a_kms_key_from_the_extra_signs_for_its_address(kms_key):
    signer = TronSignerHook.signer_of(conn(extra=kms_extra(address=kms_key[1])))
    assert signer.address == kms_key[1] and "alias/hook-payouts" in repr(signer)
    assert len(signature_for(signer, hashlib.sha256(b"tx").digest())) == 65


@pytest.mark.parametrize("kwargs, message", [
    ({"password": KEY.hex()}, "not both"),
    ({"extra_": {"signer_class": "support.signers:KmsLikeSigner"}}, "not both"),
    ({"extra_": {"address": "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"}}, "not for TLa2f6"),
])
def test_an_unusable_kms_connection_is_refused(kms_key, kwargs, message):
    extra = kms_extra(**kwargs.pop("extra_", {}))
    with pytest.raises(TronSignerConnectionError, match=message):
        TronSignerHook.signer_of(conn(extra=extra, **kwargs))


def test_a_kms_refusal_keeps_its_name_and_the_test_button_shows_it(kms_key, monkeypatch):
    with pytest.raises(SignerKeyNotFound, match="connection 'signer': KMS GetPublicKey"):
        TronSignerHook.signer_of(conn(extra=kms_extra(kms_key_id="alias/nope")))
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "extra": json.loads(kms_extra(kms_key_id="alias/nope"))}))
    ok, message = TronSignerHook().test_connection()
    assert not ok and "NotFoundException" in message
    monkeypatch.setenv("AIRFLOW_CONN_TRON_SIGNER_DEFAULT", json.dumps(
        {"conn_type": "tron_signer", "extra": json.loads(kms_extra())}))
    assert TronSignerHook().test_connection() == (True, f"Signs for {kms_key[1]}")


# -- credentials from an Airflow aws connection (the Amazon provider's AwsBaseHook) -----------

AWS_LOGIN, AWS_SECRET = "AKIAAIRFLOWCONN00001", "airflow-conn-secret/+kms"


def aws_connection(monkeypatch, region: str) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_AWS_PAYOUTS", json.dumps(
        {"conn_type": "aws", "login": AWS_LOGIN, "password": AWS_SECRET,
         "extra": {"region_name": region}}))


def test_without_the_amazon_provider_an_aws_conn_id_is_refused_naming_it(kms_key, monkeypatch):
    monkeypatch.setitem(sys.modules, "airflow.providers.amazon.aws.hooks.base_aws", None)
    with pytest.raises(TronSignerConnectionError, match="needs the Amazon provider"):
        TronSignerHook.signer_of(conn(extra=kms_extra(aws_conn_id="aws_payouts")))


def test_credentials_and_region_come_from_the_airflow_aws_connection(kms_key, monkeypatch):
    """The real AwsBaseHook (apache-airflow-providers-amazon, in the dev extra) reads the
    aws connection; the KMS client signs with its keys, in its region, not boto3's chain's."""
    pytest.importorskip("airflow.providers.amazon.aws.hooks.base_aws",
                        reason="the Amazon provider (the dev extra's) is not installed")
    aws_connection(monkeypatch, aws.REGION)
    extra = json.dumps({"kms_key_id": "alias/hook-payouts", "aws_conn_id": "aws_payouts"})
    signer = TronSignerHook.signer_of(conn(extra=extra))
    assert isinstance(signer, KmsSigner) and signer.address == kms_key[1]
    client = signer._client
    credentials = client._request_signer._credentials
    assert (credentials.access_key, credentials.secret_key) == (AWS_LOGIN, AWS_SECRET)
    assert client.meta.region_name == aws.REGION
    assert len(signature_for(signer, hashlib.sha256(b"tx").digest())) == 65
    assert AWS_SECRET not in repr(signer) + str(signer)


def test_the_aws_connections_region_is_where_the_key_is_looked_for(kms_key, monkeypatch):
    pytest.importorskip("airflow.providers.amazon.aws.hooks.base_aws",
                        reason="the Amazon provider (the dev extra's) is not installed")
    aws_connection(monkeypatch, "us-east-1")  # moto's keys live in their region
    extra = json.dumps({"kms_key_id": "alias/hook-payouts", "aws_conn_id": "aws_payouts"})
    with pytest.raises(SignerKeyNotFound, match="connection 'signer': KMS GetPublicKey"):
        TronSignerHook.signer_of(conn(extra=extra))
