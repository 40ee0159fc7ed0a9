"""A payout batch's settings (airflow_provider_tronenergy.payout.params), checked once."""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.payout.params import BatchParams, ChainParams
from airflow_provider_tronenergy.payout.rows import PayoutInputError
from tronenergy_protocol.address import random_address


@pytest.mark.parametrize("bad", ["has space", "x" * 65, "période"])
def test_a_bad_batch_id_fails_before_anything(bad):
    with pytest.raises(PayoutInputError, match="batch_id"):
        BatchParams.checked(sender_address=random_address(), rent_time="1",
                            max_spend_trx="10", batch_id=bad)


@pytest.mark.parametrize("bad", [{"max_spend_trx": "١٠٠"}, {"sender_address": "T" + "1" * 33}])
def test_a_bad_sender_or_ceiling_fails_before_anything(bad):
    given = {"sender_address": random_address(), "rent_time": "1", "max_spend_trx": "10", **bad}
    with pytest.raises(PayoutInputError, match="nothing was bought"):
        BatchParams.checked(**given)


def test_chain_params_are_checked_and_exact():
    params = ChainParams.checked(tron_node_conn_id="node", reserve_trx="10.5",
                                 energy_margin="20000", confirm_solidified=True,
                                 confirm_timeout_seconds="60")
    assert params == ChainParams(node_conn_id="node", energy_margin=20_000,
                                 trx_reserve_sun=10_500_000, solidified=True,
                                 confirm_timeout=60.0)
    assert ChainParams.checked().node_conn_id == "tron_node_default"
    assert ChainParams.checked().trx_reserve_sun == 0
    for bad in ({"reserve_trx": "-1"}, {"reserve_trx": "0.0000001"},
                {"energy_margin": "1.5"}, {"confirm_timeout_seconds": "0"},
                {"reserve_trx": "١٠"}):
        with pytest.raises(PayoutInputError, match="nothing was bought or activated"):
            ChainParams.checked(**bad)


@pytest.mark.parametrize(("value", "solidified"), [
    (None, True), ("", True), (True, True), ("true", True), (False, False), ("False", False),
    ("0", False)])
def test_the_delegations_are_confirmed_on_solidified_blocks_unless_told(value, solidified):
    assert ChainParams.checked(confirm_solidified=value).solidified is solidified


def test_a_confirm_solidified_that_is_no_flag_is_refused():
    with pytest.raises(PayoutInputError, match="confirm_solidified"):
        ChainParams.checked(confirm_solidified="Ture")


@pytest.mark.parametrize(("given", "read"), [
    (None, None), ("None", None), (" None ", None),  # None, as a template renders it too
    ("", ""), ("  ", ""),  # kept, so that the node's lookup refuses it (not "no node")
    ("tron_nod_default", "tron_nod_default")])
def test_no_node_is_a_written_none_never_an_empty_value(given, read):
    assert ChainParams.checked(tron_node_conn_id=given).node_conn_id == read
