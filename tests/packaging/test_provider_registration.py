"""The package registers as a real provider: ProvidersManager, CLI, connection form."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from airflow_provider_tronenergy.get_provider_info import get_provider_info
from support.airflow_compat import requires_airflow


def airflow_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "airflow", *args], capture_output=True,
                          text=True, env=os.environ.copy(), timeout=180)


CLI_SESSION = """
import contextlib, io, json, sys
from pathlib import Path

from airflow.cli import cli_parser
from airflow.configuration import write_default_airflow_configuration_if_needed

write_default_airflow_configuration_if_needed()  # as airflow's main() does
parser, results = cli_parser.get_parser(), []
for argv in json.loads(sys.argv[1]):
    out, code = io.StringIO(), 0
    with contextlib.redirect_stdout(out):
        try:
            args = parser.parse_args(argv)
            args.func(args)
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else 1
    results.append({"code": code, "stdout": out.getvalue()})
Path(sys.argv[2]).write_text(json.dumps(results))
"""
"""Airflow's CLI commands, one after another in one new interpreter, as ``airflow`` runs
each (its parser, then the command's function): one start-up of Airflow for them all."""


def airflow_cli_session(tmp_path, *commands: list[str],
                        env: dict[str, str] | None = None) -> tuple[list[tuple[int, str]], str]:
    """Each command's exit code and stdout; the session's stderr (the commands' logs)."""
    results = tmp_path / "cli.json"
    done = subprocess.run([sys.executable, "-c", CLI_SESSION, json.dumps(commands),
                           str(results)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=180)
    assert done.returncode == 0 and results.exists(), done.stdout + done.stderr[-3000:]
    return [(r["code"], r["stdout"]) for r in json.loads(results.read_text())], done.stderr


def test_providers_manager_knows_hook_and_connection_form():
    from airflow.providers_manager import ProvidersManager

    manager = ProvidersManager()
    assert "airflow-provider-tronenergy" in manager.providers
    hook = manager.hooks["tronenergy"]
    assert hook is not None
    assert hook.hook_class_name == "airflow_provider_tronenergy.hooks.tronenergy.TronEnergyHook"
    assert hook.connection_id_attribute_name == "tronenergy_conn_id"


@requires_airflow(3, 2, "conn-fields and ui-field-behaviour in provider info arrived in 3.2")
def test_connection_form_from_provider_info():
    from airflow.providers_manager import ProvidersManager

    manager = ProvidersManager()
    widgets = manager.connection_form_widgets
    assert widgets["extra__tronenergy__webhook_secret"].is_sensitive
    assert not widgets["extra__tronenergy__timeout"].is_sensitive
    behaviour = manager.field_behaviours["tronenergy"]
    assert behaviour["relabeling"]["login"] == "API key"
    assert behaviour["relabeling"]["password"] == "API secret"
    assert set(behaviour["hidden_fields"]) == {"schema", "port"}


def test_provider_info_modules_import():
    import importlib

    info = get_provider_info()
    for section in ("hooks", "operators", "sensors", "triggers"):
        for entry in info.get(section, []):
            for module in entry["python-modules"]:
                importlib.import_module(module)
    for conn in info["connection-types"]:
        module, _, name = conn["hook-class-name"].rpartition(".")
        assert getattr(importlib.import_module(module), name).conn_type == conn["connection-type"]


def test_provider_info_lists_every_operator_sensor_and_trigger_module():
    """A module that defines an operator, sensor or trigger is named in provider info."""
    import importlib
    import pkgutil

    from airflow.sdk import BaseOperator
    from airflow.triggers.base import BaseTrigger

    import airflow_provider_tronenergy

    info = get_provider_info()
    for section, base in (("operators", BaseOperator), ("sensors", BaseOperator),
                          ("triggers", BaseTrigger)):
        listed = {m for entry in info[section] for m in entry["python-modules"]}
        package = importlib.import_module(f"{airflow_provider_tronenergy.__name__}.{section}")
        defining = set()
        for found in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{found.name}")
            if any(isinstance(value, type) and issubclass(value, base)
                   and value.__module__ == module.__name__ for value in vars(module).values()):
                defining.add(module.__name__)
        assert defining - listed == set(), section


def test_every_configuration_option_read_is_declared():
    """``[tronenergy] x`` read anywhere in the package appears in provider info's config."""
    from pathlib import Path

    import airflow_provider_tronenergy

    root = Path(airflow_provider_tronenergy.__file__).parent
    read = set()
    for path in root.rglob("*.py"):
        read |= set(re.findall(r"airflow_conf\(\s*\"([a-z_]+)\"", path.read_text()))
    from airflow_provider_tronenergy.purchase_journal.store import CONF_KEY

    read.add(CONF_KEY)  # read through a constant
    declared = set(get_provider_info()["config"]["tronenergy"]["options"])
    assert read and read - declared == set()


def test_airflow_cli_lists_provider_and_adds_connection(airflow_db, sandbox, caplog,
                                                        tmp_path):
    """Listed by ``airflow providers list``; a connection added and read with ``airflow
    connections``, then tested as the UI's Test button does (one Airflow start-up for the
    four commands: :data:`CLI_SESSION`)."""
    caplog.set_level("INFO", logger="tronenergy.sandbox.access")
    (listed, added, shown, tested), logs = airflow_cli_session(
        tmp_path,
        ["providers", "list"],
        ["connections", "add", "tronenergy_cli", "--conn-type", "tronenergy",
         "--conn-host", sandbox.url, "--conn-login", sandbox.api_key,
         "--conn-password", sandbox.api_secret,
         "--conn-extra", json.dumps({"webhook_secret": sandbox.webhook_secret})],
        ["connections", "get", "tronenergy_cli", "-o", "json"],
        ["connections", "test", "tronenergy_cli"],
        env={"AIRFLOW__CORE__TEST_CONNECTION": "Enabled"})
    assert listed[0] == 0 and "airflow-provider-tronenergy" in listed[1], listed
    assert added[0] == 0, added
    start = re.search(r"^\[\s*\{", shown[1], re.MULTILINE)  # past any log lines
    assert shown[0] == 0 and start is not None, shown
    record = json.loads(shown[1][start.start():])[0]
    assert record["conn_type"] == "tronenergy"
    assert record["host"] == sandbox.url
    # The stored connection works through the hook: the UI's Test button, via the CLI.
    assert tested[0] == 0, tested
    assert "Connection success!" in tested[1]
    # ... and it really asked the service (the sandbox logged the signed call).
    assert "GET /v1/energy/account 200 code=10000" in caplog.text
    assert sandbox.api_secret not in tested[1] + logs


def test_the_doctor_is_an_airflow_cli_command_where_airflow_reads_providers_commands():
    """``airflow tronenergy-doctor``: provider info's ``cli`` key, read by Airflow's CLI
    (``ProvidersManager.cli_command_functions``); it runs the checks and exits 1 on a
    failing line (here: a connection that does not exist)."""
    from airflow.providers_manager import ProvidersManager

    if not hasattr(ProvidersManager, "cli_command_functions"):
        pytest.skip("this Airflow's CLI reads no provider's commands (tronenergy-doctor only)")
    done = airflow_cli("tronenergy-doctor", "--tronenergy-conn-id", "nothing_here",
                       "--tron-node-conn-id", "", "--tron-signer-conn-id", "",
                       "--callback-url", "", "--json")
    assert done.returncode == 1, done.stderr[-2000:]
    report = json.loads(done.stdout[done.stdout.index("{"):])
    service = next(c for c in report["checks"] if c["name"] == "service")
    assert service["status"] == "FAIL"
    assert "'nothing_here' does not exist" in service["detail"]


def test_plugins_are_declared_in_provider_info_and_by_the_entry_point_alike():
    """Provider info's plugins (read by Airflow with lazy_discover_providers = False) and
    the airflow.plugins entry point (read otherwise) name the same classes, each under its
    plugin's own name, so Airflow loads each once either way (docs/decisions.md)."""
    import importlib
    from importlib.metadata import entry_points

    declared = {p["name"]: p["plugin-class"] for p in get_provider_info()["plugins"]}
    points = {ep.name: ep.value.replace(":", ".") for ep in entry_points(group="airflow.plugins")
              if ep.value.startswith("airflow_provider_tronenergy.")}
    assert declared == points and len(declared) == 2
    for name, path in declared.items():
        module, _, cls = path.rpartition(".")
        assert getattr(importlib.import_module(module), cls).name == name


def test_the_providers_manager_reads_the_plugins_and_the_asset_scheme():
    from airflow.providers_manager import ProvidersManager

    from airflow_provider_tronenergy.assets import sanitize_uri

    manager = ProvidersManager()
    manager.initialize_providers_plugins()
    ours = {p.name: p.plugin_class for p in manager.plugins
            if p.provider_name == "airflow-provider-tronenergy"}
    assert set(ours) == {"tronenergy_callbacks", "tronenergy_energy"}
    manager.initialize_providers_asset_uri_resources()
    assert manager.asset_uri_handlers["tronenergy"] is sanitize_uri
