"""Proxy and CA settings come from the environment, read once when the client is made."""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.client import (
    RetryPolicy,
    ServiceUnreachableError,
    TronEnergyClient,
)


def test_proxy_from_environment_is_used(monkeypatch):
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # a port that refuses
    client = TronEnergyClient("http://api.example.test/v1", "key", "secret",
                              timeout=1, retry=RetryPolicy(max_attempts=1))
    assert client._session.proxies["http"] == "http://127.0.0.1:9"
    # The request really goes to the (dead) proxy, not to the unresolvable host.
    with pytest.raises(ServiceUnreachableError, match=r"(?i)proxy|connect"):
        client.get_account()


def test_no_proxy_is_honoured(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    client = TronEnergyClient("http://127.0.0.1:8900/v1", "key", "secret")
    assert "http" not in client._session.proxies


def test_ca_bundle_from_environment(monkeypatch, tmp_path):
    bundle = tmp_path / "ca.pem"
    bundle.write_text("")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(bundle))
    client = TronEnergyClient("https://api.example.test/v1", "key", "secret")
    assert client._session.verify == str(bundle)
