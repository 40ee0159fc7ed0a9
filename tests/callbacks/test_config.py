"""The receiver's connection: an id someone wrote that names nothing is refused naming the
setting it came from (``hooks.lookup``'s answer); the default nobody wrote may be absent."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from airflow_provider_tronenergy.callbacks import config
from airflow_provider_tronenergy.callbacks.verify import RefreshingSecrets, WebhookSecrets
from airflow_provider_tronenergy.errors import ConnectionMissing, NotRetryable


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No tronenergy setting and no connection in the environment."""
    for key in list(os.environ):
        if key.startswith(("TRONENERGY_", "AIRFLOW_CONN_", "AIRFLOW__TRONENERGY__")):
            monkeypatch.delenv(key)


def given_by(how: str, monkeypatch: pytest.MonkeyPatch, conn_id: str) -> config.ConnChoice:
    if how == "flag":
        return config.chosen(conn_id)
    if how == "env":
        monkeypatch.setenv(config.ENV_CONN_ID, conn_id)
    else:
        monkeypatch.setenv("AIRFLOW__TRONENERGY__CONN_ID", conn_id)
    return config.chosen()


@pytest.mark.parametrize(("how", "setting"), [
    ("flag", "--conn-id"), ("env", "TRONENERGY_CONN_ID"), ("conf", "[tronenergy] conn_id")])
def test_a_conn_id_someone_wrote_that_names_nothing_is_refused_naming_it(
        how: str, setting: str, monkeypatch: pytest.MonkeyPatch) -> None:
    choice = given_by(how, monkeypatch, "tronenergy_typo")
    assert choice == config.ConnChoice("tronenergy_typo", setting)
    with pytest.raises(ConnectionMissing) as refused:
        config.load_secrets(choice)
    assert isinstance(refused.value, NotRetryable)
    assert str(refused.value).startswith(f"{setting} 'tronenergy_typo' names no connection")
    assert "TRONENERGY_WEBHOOK_SECRET" in str(refused.value)  # the other way, named


def test_a_conn_id_someone_wrote_gives_its_connection_secrets(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_MINE", json.dumps(
        {"conn_type": "generic", "extra": {"webhook_secret": "whsec_mine_a,whsec_mine_b"}}))
    secrets = config.load_secrets(given_by("env", monkeypatch, "mine"))
    assert secrets is not None and secrets.key_level == ("whsec_mine_a", "whsec_mine_b")


def test_the_default_nobody_wrote_may_name_nothing() -> None:
    """No id anywhere and no tronenergy_default: no secrets, which the CLI refuses to start
    on and the plugin answers 503 for, as without any setting."""
    assert config.chosen() == config.ConnChoice(config.DEFAULT_CONN_ID, None)
    assert config.load_secrets() is None


def test_the_environment_comes_before_a_connection_that_names_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(config.ENV_WEBHOOK_SECRET, "whsec_env")
    secrets = config.load_secrets(given_by("env", monkeypatch, "tronenergy_typo"))
    assert secrets is not None and secrets.key_level == ("whsec_env",)


def test_a_connection_that_names_nothing_serves_no_secret_in_the_api_server() -> None:
    """The plugin re-reads the connection: one deleted (or a typo) is an answer, not an
    outage, so the last good secrets are dropped; a backend down keeps them."""
    current: dict[str, BaseException | str] = {"value": "old"}

    def load() -> WebhookSecrets | None:
        value = current["value"]
        if isinstance(value, BaseException):
            raise value
        return WebhookSecrets.build(value)

    source = RefreshingSecrets(load, ttl=0, retry=0)

    async def scenario() -> None:
        assert (await source.get()).key_level == ("old",)  # type: ignore[union-attr]
        current["value"] = OSError("metadata database unavailable")
        assert (await source.get()).key_level == ("old",)  # type: ignore[union-attr]
        current["value"] = ConnectionMissing("TRONENERGY_CONN_ID 'gone' names no connection")
        assert await source.get() is None

    asyncio.run(scenario())


def test_without_airflow_the_receiver_reads_the_environment() -> None:
    """tronenergy-receiver runs where Airflow is not installed: reading its connection goes
    through hooks.lookup, which imports nothing of Airflow until a connection is read."""
    code = ("import sys; sys.modules['airflow'] = None\n"
            "from airflow_provider_tronenergy.callbacks import cli, config\n"
            "assert config.secrets_from_connection('tronenergy_typo', '--conn-id') is None\n"
            "print(config.describe(config.load_secrets()))\n")
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("TRONENERGY_", "AIRFLOW_CONN_"))}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**env, config.ENV_WEBHOOK_SECRET: "whsec_env"}, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "1 key-level secret(s), 0 address(es) with their own"
