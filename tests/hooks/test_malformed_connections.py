"""A malformed connection (an Extra that is not a JSON object, an extra of the wrong type) is
bad input only a person fixes: each hook refuses it with its connection error, a
``NotRetryable`` (the task fails once), naming the connection, the extra and the fix; never
Airflow's reading of a broken Extra as empty (every setting in it silently its default).
Fast: the connections from the environment, refused before any request.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from airflow.providers.common.compat.sdk import AirflowFailException

from airflow_provider_tronenergy.airflow_errors import to_airflow
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.hooks.tron_node import TronNodeConnectionError, TronNodeHook
from airflow_provider_tronenergy.hooks.tron_signer import TronSignerConnectionError, TronSignerHook
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyConnectionError, TronEnergyHook
from support.airflow_compat import hands_malformed_extras

SECRET = "sec-" + "5e" * 12
KEY = "11" * 32
NOT_JSON = '{"timeout": 30,, "webhook_secret": "' + SECRET + '"}'
ID = "broken_conn"

SERVICE = {"conn_type": "tronenergy", "host": "http://127.0.0.1:9/v1", "login": "key",
           "password": SECRET}
NODE = {"conn_type": "tron_node", "host": "http://127.0.0.1:9"}
SIGNER = {"conn_type": "tron_signer", "password": KEY}


def _connect(monkeypatch: pytest.MonkeyPatch, fields: dict[str, Any], extra: Any) -> None:
    """``extra`` as the Extra field's text (a str: as it is, however broken) or JSON."""
    text = extra if isinstance(extra, str) else json.dumps(extra)
    monkeypatch.setenv(f"AIRFLOW_CONN_{ID.upper()}", json.dumps({**fields, "extra": text}))


def _service(monkeypatch: pytest.MonkeyPatch, extra: Any) -> object:
    _connect(monkeypatch, SERVICE, extra)
    return TronEnergyHook(ID).get_conn()


def _node(monkeypatch: pytest.MonkeyPatch, extra: Any) -> object:
    _connect(monkeypatch, NODE, extra)
    return TronNodeHook(ID).get_conn()


def _signer(monkeypatch: pytest.MonkeyPatch, extra: Any) -> object:
    _connect(monkeypatch, SIGNER if "kms_key_id" not in str(extra) else
             {"conn_type": "tron_signer"}, extra)
    return TronSignerHook(ID).get_conn()


@pytest.mark.parametrize(("use", "error"), [
    (_service, TronEnergyConnectionError), (_node, TronNodeConnectionError),
    (_signer, TronSignerConnectionError)], ids=["tronenergy", "tron_node", "tron_signer"])
@pytest.mark.parametrize(("extra", "says"), [
    (NOT_JSON, "its Extra is not valid JSON (Expecting property name enclosed in double "
               "quotes, line 1 column 16); fix it to a JSON object of extras"),
    ("[30, 60]", "its Extra is a JSON list, not an object; fix it to a JSON object"),
    ('"mainnet"', "its Extra is a JSON str, not an object"),
], ids=["not-json", "a-list", "a-string"])
@hands_malformed_extras()
def test_an_extra_that_is_not_a_json_object_is_refused_by_each_hook(monkeypatch, use, error,
                                                                   extra, says):
    with pytest.raises(error) as refused:
        use(monkeypatch, extra)
    message = str(refused.value)
    assert message.startswith(f"connection '{ID}': ") and says in message, message
    assert SECRET not in message and KEY not in message
    assert isinstance(refused.value, NotRetryable)
    assert isinstance(to_airflow(refused.value), AirflowFailException)  # fails once


@pytest.mark.parametrize(("use", "extra", "says"), [
    (_service, {"signature_scheme": ["v1"]}, "extra signature_scheme must be one of v1"),
    (_service, {"max_retries": [3]}, "extra max_retries must be an integer"),
    (_service, {"timeout": {"read": 5}}, "extra timeout is invalid"),
    (_service, {"price_rent_times": 1}, "extra price_rent_times must be a list of hours"),
    (_service, {"max_answer_bytes": "lots"}, "extra max_answer_bytes must be a positive"),
    (_service, {"order_poll_budget": [10]}, "extra order_poll_budget must be a number"),
    (_service, {"webhook_secret": 12345}, "extra webhook_secret must be text"),
    (_node, {"network": ["nile"]}, "network must be one of mainnet"),
    (_node, {"max_retries": {"n": 3}}, "max_retries"),
    (_node, {"requests_per_second": [5]}, "requests_per_second"),
    (_signer, {"address": ["T"]}, "extra address must be text, not list"),
    (_signer, {"kms_key_id": 7}, "extra kms_key_id must be text, not int"),
], ids=lambda value: value.__name__.strip("_") if callable(value) else None)
def test_an_extra_of_the_wrong_type_names_the_connection_and_the_extra(monkeypatch, use,
                                                                      extra, says):
    with pytest.raises(TronEnergyConnectionError) as refused:
        use(monkeypatch, extra)
    message = str(refused.value)
    assert message.startswith(f"connection '{ID}': ") and says in message, message
    assert isinstance(to_airflow(refused.value), AirflowFailException)


@hands_malformed_extras()
def test_the_webhook_secret_of_a_broken_extra_is_never_read_as_none(monkeypatch):
    """Airflow reads an Extra that is not JSON as empty: no webhook secret, as if none
    were set. The hook refuses instead."""
    _connect(monkeypatch, SERVICE, NOT_JSON)
    with pytest.raises(TronEnergyConnectionError, match="not valid JSON"):
        TronEnergyHook(ID).get_webhook_secret()
