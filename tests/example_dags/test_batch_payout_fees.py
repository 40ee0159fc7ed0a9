"""The batch-payout example prices its plan at the chain's figures: dag.test() against the
sandbox (also the ``tron_node``), with a fee proposal and an energy-factor change between
two runs; the second run plans the new figures, every saving names its source, and a node
answering impossible fees stops the run before anything is bought or activated. Orders
are counted at the sandbox, never taken from the run's own report."""

from __future__ import annotations

from decimal import Decimal

import batch_payout_preparation as example
import requests

from airflow_provider_tronenergy.payout import onchain
from support.waiting import wait_until


def _run(run_dag, control, tmp_path, sender, recipients, batch_id,
         node: str | None = "tron_node_default"):
    payouts = tmp_path / f"{batch_id}.csv"
    payouts.write_text("recipient,amount\n" + "".join(f"{a},10.5\n" for a in recipients))
    before = len(control.orders())
    out = run_dag(example.dag, payouts_file=str(payouts), sender_address=sender,
                  batch_id=batch_id, rent_time="1", max_spend_trx="100",
                  confirm_timeout_seconds="5",
                  tron_node_conn_id=node)
    return out, control.orders()[before:]


def _batch(control):
    """A sender with no energy of its own; two USDT holders and one first-time recipient."""
    sender = control.wallet(trx="50", usdt="1000")
    return sender, [control.wallet(trx="1", usdt="1"), control.wallet(trx="1", usdt="1"),
                    control.wallet(trx="1")]


def _in_force(sandbox, path: str, body: dict, check) -> None:
    wait_until(lambda: check(requests.post(sandbox.root_url + path, json=body,
                                           timeout=5).json()), timeout=10)


def test_a_batch_after_a_fee_proposal_plans_the_new_figures(run_dag, control, node_conn,
                                                            sandbox, tmp_path):
    sender, recipients = _batch(control)
    out, placed = _run(run_dag, control, tmp_path, sender, recipients, "before")
    assert out["__run__"] == "success", out
    ready = out["publish_batch_ready"][2]
    assert [r["energy"] for r in ready["recipients"]] == [64_285, 64_285, 130_285]
    assert ready["prices"] == {
        "energy_sun": 100, "bandwidth_sun": 1_000, "activation_sun": 1_100_000,
        "energy_factor": 34_000,
        "source": {"energy_price": "chain", "bandwidth_price": "chain",
                   "activation_fee": "chain", "energy_factor": "chain"}}
    assert [(o["kind"], o["energy_amount"]) for o in placed] == [("buy", 258_855)]
    assert Decimal(ready["burn_cost"]) == Decimal("25.8855")  # 258,855 x 100 sun
    assert Decimal(ready["saving"]) == Decimal("25.8855") - Decimal(placed[0]["cost"])

    # A proposal passes (energy 210 sun, as before August 2025) and USDT's factor is cut.
    control.post("/chain/parameters", {"getEnergyFee": 210})
    control.post("/chain/contract", {"energy_factor": 10_000})
    _in_force(sandbox, "/wallet/getchainparameters", {},
              lambda a: {"key": "getEnergyFee", "value": 210} in a["chainParameter"])
    _in_force(sandbox, "/wallet/getcontractinfo",
              {"value": sandbox.state.config.usdt_contract, "visible": True},
              lambda a: a["contract_state"].get("energy_factor") == 10_000)

    sender, recipients = _batch(control)
    out, placed = _run(run_dag, control, tmp_path, sender, recipients, "after")
    assert out["__run__"] == "success", out
    ready = out["publish_batch_ready"][2]
    assert [r["energy"] for r in ready["recipients"]] == [29_236, 29_236, 59_236]
    assert (ready["prices"]["energy_sun"], ready["prices"]["energy_factor"]) == (210, 10_000)
    assert [(o["kind"], o["energy_amount"]) for o in placed] == [("buy", 117_708)]
    assert Decimal(ready["burn_cost"]) == Decimal("24.71868")  # 117,708 x 210 sun
    assert [r["burn_cost"] for r in ready["recipients"]] == ["6.13956", "6.13956", "12.43956"]
    [bought] = out["buy_energy"][2]
    assert bought["burn_price"] == {"energy_sun": 210, "source": "chain"}
    assert Decimal(bought["burn_cost"]) == Decimal("24.71868")


def test_a_node_answering_impossible_fees_stops_the_run_before_any_spend(
        run_dag, control, node_conn, sandbox, tmp_path, monkeypatch):
    raised: list[BaseException] = []
    real = onchain.read_prices

    def spy(*args, **kwargs):  # dag.test() runs the task in this process
        try:
            return real(*args, **kwargs)
        except BaseException as exc:
            raised.append(exc)
            raise

    monkeypatch.setattr(onchain, "read_prices", spy)
    control.post("/chain/parameters", {"getEnergyFee": 5_000_000})  # 5 TRX per energy
    try:
        _in_force(sandbox, "/wallet/getchainparameters", {},
                  lambda a: {"key": "getEnergyFee", "value": 5_000_000} in a["chainParameter"])
        sender, recipients = _batch(control)
        out, placed = _run(run_dag, control, tmp_path, sender, recipients, "lying")
        assert out["__run__"] == "failed"
        assert out["preflight_on_chain"][:2] == ("failed", 1)  # refused, not retried
        assert placed == []  # no energy order and no activation at the sandbox
        [refusal] = raised
        assert "not believed" in str(refusal) and "getEnergyFee" in str(refusal)
        assert "nothing was bought or activated" in str(refusal)
    finally:
        control.post("/chain/parameters", {"getEnergyFee": 100})


def test_without_a_node_the_defaults_are_named(run_dag, control, tmp_path):
    sender = control.activated()
    out, _ = _run(run_dag, control, tmp_path, sender, [control.activated(holder=True)], "none",
                  node=None)
    assert out["__run__"] == "success", out
    prices = out["publish_batch_ready"][2]["prices"]
    assert (prices["energy_sun"], prices["source"]["energy_price"]) == (100, "default")
    assert prices["source"]["energy_factor"] == "not read"
