"""``tronenergy-receiver``: where its secret comes from, and that it never shows it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_provider_tronenergy.callbacks import config
from support.callbacks import callback_body, post, signed_headers, start_receiver, transfer_data
from tronenergy_protocol.address import random_address


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch) -> dict[str, str]:
    """An environment with no tronenergy settings and a throw-away AIRFLOW_HOME."""
    for key in list(os.environ):
        if key.startswith(("TRONENERGY_", "AIRFLOW_CONN_", "AIRFLOW__")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow_home"))
    return {"AIRFLOW_HOME": str(tmp_path / "airflow_home")}


def test_secret_from_the_airflow_connection(tmp_path, clean_env):
    conn = {"conn_type": "generic", "host": "http://127.0.0.1:8900/v1",
            "extra": {"webhook_secret": "whsec_rotating_new, whsec_rotating_old"}}
    env = {**clean_env, "AIRFLOW_CONN_TRONENERGY_DEFAULT": json.dumps(conn)}
    receiver = start_receiver("--port", "0", "--store", f"sqlite:///{tmp_path / 'cb.db'}",
                              env=env)
    try:
        banner = "".join(receiver.banner)
        assert "2 key-level secret(s)" in banner and "'tronenergy_default'" in banner
        assert "whsec_rotating" not in banner
        for secret in ("whsec_rotating_old", "whsec_rotating_new"):
            body = callback_body()
            assert post(receiver.url, body, signed_headers(secret, body)).status_code == 200
        body = callback_body()
        assert post(receiver.url, body, signed_headers("whsec_other", body)).status_code == 403
    finally:
        receiver.stop()


def test_secret_file_and_address_secrets_from_the_environment(tmp_path, clean_env):
    secret_file = tmp_path / "secret"
    secret_file.write_text("whsec_from_file\n")
    address = random_address()
    env = {**clean_env, config.ENV_ADDRESS_SECRETS: json.dumps({address: "whsec_address"})}
    receiver = start_receiver("--port", "0", "--store", f"sqlite:///{tmp_path / 'cb.db'}",
                              "--webhook-secret-file", str(secret_file), env=env)
    try:
        assert "1 address(es)" in receiver.banner[2] and "command line" in receiver.banner[2]
        body = callback_body()
        assert post(receiver.url, body, signed_headers("whsec_from_file", body)).status_code == 200
        mine = callback_body(transfer_data(to=address))
        assert post(receiver.url, mine, signed_headers("whsec_address", mine)).status_code == 200
    finally:
        receiver.stop()


def test_no_secret_anywhere_refuses_to_start(tmp_path, clean_env):
    result = subprocess.run(
        [sys.executable, "-m", "airflow_provider_tronenergy.callbacks", "--port", "0",
         "--store", f"sqlite:///{tmp_path / 'cb.db'}"],
        env={**os.environ, **clean_env}, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    assert "no webhook secret" in result.stderr
    assert "listening" not in result.stdout


def test_a_conn_id_that_names_nothing_refuses_to_start_naming_it(tmp_path, clean_env):
    result = subprocess.run(
        [sys.executable, "-m", "airflow_provider_tronenergy.callbacks", "--port", "0",
         "--store", f"sqlite:///{tmp_path / 'cb.db'}", "--conn-id", "tronenergy_typo"],
        env={**os.environ, **clean_env}, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    assert "--conn-id 'tronenergy_typo' names no connection" in result.stderr
    assert "listening" not in result.stdout


def test_secrets_from_env_parsing(monkeypatch):
    address = random_address()
    monkeypatch.setenv(config.ENV_WEBHOOK_SECRET, " s3cr3t-a , s3cr3t-b ,, s3cr3t-a ")
    monkeypatch.setenv(config.ENV_ADDRESS_SECRETS, json.dumps({address: ["s3cr3t-c", "d"]}))
    secrets = config.secrets_from_env()
    assert secrets is not None
    assert secrets.key_level == ("s3cr3t-a", "s3cr3t-b")
    assert secrets.by_address[address] == ("s3cr3t-c", "d")
    assert "s3cr3t" not in repr(secrets) and "s3cr3t" not in config.describe(secrets)
    monkeypatch.setenv(config.ENV_ADDRESS_SECRETS, "{not json")
    with pytest.raises(config.ConfigError, match="not JSON"):
        config.secrets_from_env()
    monkeypatch.setenv(config.ENV_ADDRESS_SECRETS, json.dumps({"Tnot-an-address": "x"}))
    with pytest.raises(config.ConfigError):
        config.secrets_from_env()
    monkeypatch.delenv(config.ENV_WEBHOOK_SECRET)
    monkeypatch.delenv(config.ENV_ADDRESS_SECRETS)
    assert config.secrets_from_env() is None


@pytest.mark.parametrize("store", ["postgresql://u:hunter2@127.0.0.1:1/x", "nonsense:hunter2"])
def test_unusable_store_refuses_to_start_without_showing_the_password(clean_env, store):
    result = subprocess.run(
        [sys.executable, "-m", "airflow_provider_tronenergy.callbacks", "--port", "0",
         "--store", store],
        env={**os.environ, **clean_env, config.ENV_WEBHOOK_SECRET: "whsec_x"},
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    assert "store" in result.stderr
    assert "hunter2" not in result.stderr + result.stdout
    assert "whsec_x" not in result.stderr + result.stdout
