"""The ``tronenergy://`` asset URI scheme: its handler, and Airflow calling it."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from airflow_provider_tronenergy.assets import sanitize_uri


@pytest.mark.parametrize(("written", "stored"), [
    ("tronenergy://payout-batch-ready", "tronenergy://payout-batch-ready/"),
    ("tronenergy://payout-batch-ready/", "tronenergy://payout-batch-ready/"),
    ("TronEnergy://Deposits", "tronenergy://deposits/"),
    ("tronenergy://keeper/energy_keeper", "tronenergy://keeper/energy_keeper"),
    ("tronenergy://keeper/Energy.Keeper-2/", "tronenergy://keeper/Energy.Keeper-2"),
    ("tronenergy://payouts-sent#fragment", "tronenergy://payouts-sent/"),
])
def test_airflow_stores_a_tronenergy_uri_in_its_one_form(written, stored):
    """Airflow's own normalisation, then the provider's handler (found through provider
    info's asset-uris): the name lower-cased, the path as written."""
    from airflow.sdk import Asset

    assert Asset(written).uri == stored


@pytest.mark.parametrize(("uri", "why"), [
    ("tronenergy://deposits?chain=nile", "no query"),
    ("tronenergy://user@deposits", "no user or port"),
    ("tronenergy://deposits:8080", "no user or port"),
    ("tronenergy:///deposits", "name is missing"),
    ("tronenergy://dep%20osits", "other characters"),
    ("tronenergy://keeper//energy_keeper", "path segment"),
    ("tronenergy://keeper/../deposits", "path segment"),
])
def test_a_uri_the_provider_never_means_fails_the_dag_that_declares_it(uri, why):
    from airflow.sdk import Asset

    with pytest.raises(ValueError, match=why) as refused:
        Asset(uri)
    assert "tronenergy://<name>[/<path>]" in str(refused.value)


def test_the_handler_alone_keeps_what_airflow_normalised():
    parts = urlsplit("tronenergy://Keeper/energy_keeper")
    assert sanitize_uri(parts).geturl() == "tronenergy://keeper/energy_keeper"
