"""The tron_signer connection: a masked key or an external signer, never shown anywhere."""

from __future__ import annotations

import hashlib
import json

import pytest
from airflow.sdk import Connection
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.hooks.tron_signer import (
    TronSignerConnectionError,
    TronSignerHook,
)

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
