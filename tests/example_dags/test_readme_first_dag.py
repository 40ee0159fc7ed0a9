"""The README's first DAG does what the README says, against the sandbox: its code block
(tests/dags/readme_first_dag.py runs it as written) in dag.test(), on the wallet its
commands activate, with the connection its commands set up."""

from __future__ import annotations

import json
import re
import shlex

import readme_first_dag as readme

from support.sandbox import sandbox_fixture

# Orders succeed within milliseconds: the sensor's first check, before it would defer,
# finds the order done (a deferred wait is the sensor's own tests' subject).
sandbox = sandbox_fixture(scope="module", time_scale=0.001)

COMMANDS = "\n".join(readme.code("bash")).replace("\\\n", " ")


def test_the_first_dag_rents_energy_and_waits_for_the_order(run_dag, control):
    [address] = re.findall(r"/sandbox/addresses/(T\w+)/activate", COMMANDS)
    assert readme.buy.target_address == address  # the wallet the commands activate
    control.activated(address)
    out = run_dag(readme.dag)
    assert out["__run__"] == "success", out
    assert out["buy"][0] == out["wait"][0] == "success"
    order_id = out["buy"][2]["order_id"]
    [order] = [o for o in control.orders(address) if o["order_id"] == order_id]
    assert (order["kind"], order["energy_amount"], order["status"]) == ("buy", 131_000,
                                                                        "success")


def test_the_connection_is_the_sandboxs_as_started():
    """The exported connection names the base URL, key and secrets the sandbox's command
    gives it."""
    words = shlex.split(COMMANDS, comments=True)
    flags = {flag: words[words.index(flag) + 1]
             for flag in ("--port", "--api-key", "--api-secret", "--webhook-secret")}
    [exported] = re.findall(r"AIRFLOW_CONN_TRONENERGY_DEFAULT='(.*?)'", COMMANDS, re.DOTALL)
    conn = json.loads(exported)
    assert conn["conn_type"] == "tronenergy"
    assert conn["host"] == f"http://127.0.0.1:{flags['--port']}/v1"
    assert (conn["login"], conn["password"], conn["extra"]["webhook_secret"]) == (
        flags["--api-key"], flags["--api-secret"], flags["--webhook-secret"])
    assert "airflow dags test rent_energy" in COMMANDS
    assert readme.dag.dag_id == "rent_energy"

