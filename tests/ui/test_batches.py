"""Per-batch rows from ``payout batch ready`` events: what a malformed event or scope gives."""

from __future__ import annotations

from airflow_provider_tronenergy.ui.batches import BatchEvent, add_activations, task_of
from airflow_provider_tronenergy.ui.purchases import Day
from support.energy_history import PERIOD, at


def test_a_scope_names_its_task_instance():
    assert task_of("d/manual__2026-03-01T00:00:00+00:00/buy_energy__order_3/-1") == {
        "dag_id": "d", "run_id": "manual__2026-03-01T00:00:00+00:00",
        "task_id": "buy_energy", "map_index": -1}
    assert task_of("d/r/send/2/try3@host:12")["map_index"] == 2
    assert task_of("d/run/with/slashes/t/0")["run_id"] == "run/with/slashes"
    assert task_of(None) is None and task_of("not a scope") is None
    assert task_of("d/r/t/x") is None


def test_activations_count_on_their_events_day_and_malformed_figures_count_as_none():
    days = [Day() for _ in range(len(PERIOD))]
    add_activations(days, [
        BatchEvent.of({"activations": 2, "activation_cost": "2.2"}, at(2)),
        BatchEvent.of({"activations": 1, "activation_cost": "not a number"}, at(3)),
        BatchEvent.of({"activations": 5, "activation_cost": "5.5"}, at(3) + 5 * 86_400_000),
        BatchEvent.of({"activations": 1, "activation_cost": "1.1",
                       "prices": {"energy_sun": 100, "bandwidth_sun": 1000,
                                  "activation_sun": 1_000_000,
                                  "source": {"energy_price": "chain"}}}, at(1)),
    ], PERIOD)
    assert [d.activations for d in days] == [1, 2, 1]
    assert [str(d.activation_trx) for d in days] == ["1.1", "2.2", "0"]
    # The chain's price when the event names it, else the documented default.
    assert [str(d.activation_burn_trx) for d in days] == ["1.000000", "2.200000",
                                                          "1.100000"]


def test_an_event_read_from_extracted_values_equals_one_read_from_its_extra():
    extra = {"batch_id": "b", "sender": "T1", "recipients": [{}, {}], "energy_bought": 5,
             "energy_cost": "0.25", "activations": 1, "activation_cost": "1.1",
             "prices": {"activation_sun": 1_100_000}, "total_cost": "1.35",
             "burn_cost_bought": "0.5", "saving": "0.25",
             "approval": {"required": True, "approved": True, "by": "lead", "at": "t",
                          "timed_out": False, "extra key": "ignored"}}
    # As SQLite's json_extract hands them over: numbers as numbers, the rest as text.
    extracted = {"batch_id": "b", "sender": "T1", "recipients": 2, "energy_bought": 5,
                 "energy_cost": "0.25", "activations": 1, "activation_cost": "1.1",
                 "activation_sun": 1_100_000, "total_cost": "1.35",
                 "burn_cost_bought": "0.5", "saving": "0.25",
                 "approval": {"required": True, "approved": True, "by": "lead", "at": "t",
                              "timed_out": False}}
    assert BatchEvent.of(extra, 7, "d", "r") == BatchEvent.read(7, "d", "r", extracted)
    odd = BatchEvent.of({"energy_bought": 1.5, "energy_cost": 0.1, "activations": "x",
                         "approval": "yes", "recipients": "all"}, 7)
    assert (odd.energy, odd.energy_trx, odd.activations, odd.approval, odd.recipients) == \
        (0, "0", 0, {}, None)
