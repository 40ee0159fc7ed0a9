"""get_provider_info() against Airflow's own schemas, and the connection form as the UI gets it."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import jsonschema
import pytest

from airflow_provider_tronenergy.client import RetryPolicy, Timeout, ValidationRules
from airflow_provider_tronenergy.get_provider_info import REPOSITORY_URL, get_provider_info
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from support.airflow_compat import requires_airflow
from tronenergy_protocol.signing import SCHEMES


def airflow_schema(name: str) -> dict[str, Any]:
    return json.loads((files("airflow") / name).read_text(encoding="utf-8"))


def connection_type(name: str = "tronenergy") -> dict[str, Any]:
    [conn] = [c for c in get_provider_info()["connection-types"] if c["connection-type"] == name]
    return conn


def test_the_provider_declares_its_three_connection_types():
    types = {c["connection-type"]: c["hook-class-name"].rsplit(".", 1)[1]
             for c in get_provider_info()["connection-types"]}
    assert types == {"tronenergy": "TronEnergyHook", "tron_node": "TronNodeHook",
                     "tron_signer": "TronSignerHook"}


def test_provider_info_passes_the_schema_airflow_loads_it_with():
    """ProvidersManager checks every provider's info against provider_info.schema.json."""
    schema = airflow_schema("provider_info.schema.json")
    jsonschema.validators.validator_for(schema)(schema).validate(get_provider_info())


@pytest.mark.parametrize("section", ["integrations", "connection-types", "hooks", "operators",
                                     "sensors", "triggers"])
def test_provider_info_sections_pass_the_provider_yaml_schema(section):
    """The stricter provider.yaml schema: an integration needs external-doc-url and tags,
    conn-fields need a label and a schema type."""
    schema = airflow_schema("provider.yaml.schema.json")
    jsonschema.Draft7Validator(schema["properties"][section]).validate(get_provider_info()[section])


def test_integration_docs_point_at_the_repository():
    [integration] = get_provider_info()["integrations"]
    assert integration["external-doc-url"].startswith(REPOSITORY_URL + "/")


def test_conn_fields_defaults_are_valid_and_match_the_hook():
    fields = connection_type()["conn-fields"]
    for name, field in fields.items():
        schema = field["schema"]
        assert "null" in schema["type"], f"{name}: an empty field must be allowed (not required)"
        if "default" in schema:
            jsonschema.Draft7Validator(schema).validate(schema["default"])
    scheme = fields["signature_scheme"]["schema"]
    assert scheme["enum"] == list(SCHEMES)  # real schemes only: no "null" option
    assert scheme["default"] == "v1"
    assert fields["max_retries"]["schema"]["default"] == 3
    assert fields["max_retries"]["schema"]["minimum"] == 0
    assert "default" not in fields["timeout"]["schema"]  # 5 s / 30 s is no single number


def form_connection(extra: dict[str, Any]) -> Any:
    from airflow.sdk import Connection

    return Connection(conn_id="form", conn_type="tronenergy", host="https://api.example.com/v1",
                      login="key", password="secret", extra=json.dumps(extra))


def test_what_the_form_saves_gives_the_hooks_defaults():
    """The 3.2+ form saves every field: its pre-filled values, or null where left empty."""
    fields = connection_type()["conn-fields"]
    pre_filled = {name: field["schema"].get("default") for name, field in fields.items()}
    cleared = dict.fromkeys(fields)
    blank = dict.fromkeys(fields, "")
    for extra in (pre_filled, cleared, blank, {}):
        settings = TronEnergyHook.client_settings(form_connection(extra))
        assert settings["signature_scheme"] == "v1"
        assert settings["retry"] == RetryPolicy(max_attempts=4)  # max_retries 3
        assert settings["timeout"] == Timeout()
        assert settings["rules"] == ValidationRules()


def test_legacy_form_placeholder_shows_the_hooks_defaults():
    """Airflow < 3.2 shows get_ui_field_behaviour()'s extra placeholder: it holds the defaults."""
    placeholder = json.loads(TronEnergyHook.get_ui_field_behaviour()["placeholders"]["extra"])
    settings = TronEnergyHook.client_settings(form_connection(placeholder))
    assert settings["signature_scheme"] == "v1"
    assert settings["retry"] == RetryPolicy(max_attempts=4)
    assert settings["timeout"] == Timeout()


@requires_airflow(3, 2, "the connection form reads conn-fields from provider info since 3.2")
def test_connection_form_as_the_ui_receives_it():
    """What GET /ui/connections/hook_meta sends the React form (Airflow's own code path)."""
    from airflow.api_fastapi.core_api.services.ui.connections import HookMetaService

    [meta] = [m for m in HookMetaService.hook_meta_data() if m.connection_type == "tronenergy"]
    sent = meta.model_dump(mode="json")
    extra = sent["extra_fields"]
    assert set(extra) == set(connection_type()["conn-fields"])
    # The UI picks a dropdown for an enum; each enum entry becomes one option.
    assert extra["signature_scheme"]["schema"]["enum"] == ["v1", "ts.body"]
    assert extra["signature_scheme"]["value"] == "v1"
    assert extra["signature_scheme"]["schema"]["title"] == "Signature scheme"
    assert extra["max_retries"]["value"] == 3
    assert extra["timeout"]["value"] is None
    assert extra["webhook_secret"]["schema"]["format"] == "password"
    assert extra["webhook_secret"]["value"] is None
    standard = sent["standard_fields"]
    assert standard["login"]["title"] == "API key"
    assert standard["port"]["hidden"] and standard["url_schema"]["hidden"]


def test_what_the_node_form_saves_gives_the_node_hooks_defaults():
    """The tron_node form's pre-filled, cleared and blank extras all give the hook's defaults."""
    from airflow.sdk import Connection

    from airflow_provider_tronenergy.client import Timeout
    from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
    from airflow_provider_tronenergy.node.models import USDT_MAINNET

    fields = connection_type("tron_node")["conn-fields"]
    pre_filled = {name: field["schema"].get("default") for name, field in fields.items()}
    for extra in (pre_filled, dict.fromkeys(fields), dict.fromkeys(fields, ""), {}):
        conn = Connection(conn_id="node", conn_type="tron_node", host="https://node.example",
                          extra=json.dumps(extra))
        settings = TronNodeHook.node_settings(conn)
        assert (settings["usdt_contract"], settings["timeout"], settings["max_retries"],
                settings["max_answer_bytes"]) == (USDT_MAINNET, Timeout(10.0, 10.0), 3, 16777216)
        assert settings["api_key"] is None
        assert TronNodeHook.requests_per_second(conn) is None  # unpaced


@requires_airflow(3, 2, "the connection form reads conn-fields from provider info since 3.2")
def test_node_connection_form_as_the_ui_receives_it():
    from airflow.api_fastapi.core_api.services.ui.connections import HookMetaService

    [meta] = [m for m in HookMetaService.hook_meta_data() if m.connection_type == "tron_node"]
    sent = meta.model_dump(mode="json")
    assert set(sent["extra_fields"]) == {"network", "genesis_block_id", "usdt_contract",
                                         "timeout", "max_retries", "max_answer_bytes",
                                         "explorer_url", "requests_per_second", "multicall",
                                         "multicall_chunk", "tokens"}
    assert sent["extra_fields"]["network"]["value"] is None  # empty: mainnet
    assert sent["extra_fields"]["explorer_url"]["value"] is None  # empty: mainnet TronScan
    assert sent["extra_fields"]["requests_per_second"]["value"] is None  # empty: unpaced
    assert sent["extra_fields"]["max_retries"]["value"] == 3
    standard = sent["standard_fields"]
    assert standard["host"]["title"] == "Node URL"
    assert standard["password"]["title"] == "API key (TRON-PRO-API-KEY)"
    assert standard["login"]["hidden"]


def test_every_extra_link_is_registered_and_known_to_the_providers_manager():
    """provider info's extra-links names each link class of links.explorer, no other."""
    import importlib
    import inspect

    from airflow.providers.common.compat.sdk import BaseOperatorLink
    from airflow.providers_manager import ProvidersManager

    from airflow_provider_tronenergy.links import explorer as links

    defined = {f"{links.__name__}.{name}" for name, value in vars(links).items()
               if inspect.isclass(value) and issubclass(value, BaseOperatorLink)
               and value.__module__ == links.__name__ and not inspect.isabstract(value)
               and not name.startswith("_")}
    registered = get_provider_info()["extra-links"]
    assert set(registered) == defined and len(defined) == 4
    for path in registered:
        module, _, name = path.rpartition(".")
        link = getattr(importlib.import_module(module), name)()
        assert link.name.startswith("TronScan: ")
    assert set(registered) <= set(ProvidersManager().extra_links_class_names)


@pytest.mark.parametrize("section", ["plugins", "asset-uris"])
def test_plugins_and_asset_uris_pass_the_provider_yaml_schema(section):
    schema = airflow_schema("provider.yaml.schema.json")
    jsonschema.Draft7Validator(schema["properties"][section]).validate(get_provider_info()[section])


class Reads(dict):
    """A connection's extra that records every key the code reading it asks for."""

    def __init__(self, values: dict[str, Any], seen: set[str]) -> None:
        super().__init__(values)
        self.seen = seen

    def get(self, key, default=None):
        self.seen.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.seen.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.seen.add(key)
        return super().__contains__(key)


def reading(seen: set[str], extra: dict[str, Any], **fields: Any) -> Any:
    """A connection as the hooks read it (attributes and ``extra_dejson``), recording reads."""
    from types import SimpleNamespace

    return SimpleNamespace(**{"conn_id": "reads", "host": None, "login": None,
                              "password": None, "port": None, "extra": json.dumps(extra),
                              "extra_dejson": Reads(extra, seen), **fields})


MULTICALL = "TGXuuKAb4bnrn137u39EKbYzKNXvdCes98"


def test_every_extra_the_service_connection_is_read_for_is_a_form_field(monkeypatch):
    """client_settings (with the order poll budget and the explorer it checks) and the
    callback receiver's secrets: every key they read is a conn-field, and every conn-field
    is read."""
    from airflow_provider_tronenergy.callbacks import config

    seen: set[str] = set()
    extra = {"webhook_secret": "whsec", "address_webhook_secrets": {MULTICALL: "addr-secret"},
             "signature_scheme": "v1", "timeout": 5, "max_answer_bytes": 1048576,
             "max_retries": 3, "order_poll_budget": 10, "price_rent_times": "0.08,0.17,1",
             "purchase_rent_times": "0.25,1,24", "explorer_url": "https://tronscan.org"}
    conn = reading(seen, extra, host="https://api.example.com/v1", login="key",
                   password="secret")
    TronEnergyHook.client_settings(conn)
    monkeypatch.setattr(config, "connection_extra", lambda *_: Reads(extra, seen))
    assert config.secrets_from_connection("reads") is not None
    assert seen == set(connection_type("tronenergy")["conn-fields"])


def test_every_extra_the_node_connection_is_read_for_is_a_form_field():
    """node_settings (network, explorer, pace, multicall: all it checks before a client)."""
    from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook

    seen: set[str] = set()
    extra = {"network": "custom", "genesis_block_id": "00" * 32, "usdt_contract": MULTICALL,
             "timeout": 10, "max_answer_bytes": 16777216, "max_retries": 3,
             "multicall": MULTICALL, "multicall_chunk": 100,
             "explorer_url": "http://10.0.0.5:3000/tronscan", "requests_per_second": "15"}
    conn = reading(seen, extra, host="https://node.example", password="node-key")
    settings = TronNodeHook.node_settings(conn)
    assert settings["multicall_chunk"] == 100
    TronNodeHook.explorer(conn)
    assert seen == set(connection_type("tron_node")["conn-fields"])


def test_every_extra_the_signer_connection_is_read_for_is_a_form_field(monkeypatch):
    """signer_of, each of its three ways: a local key, a KMS key, an external signer class."""
    from types import SimpleNamespace

    from airflow_provider_tronenergy.hooks import tron_signer
    from airflow_provider_tronenergy.hooks.tron_signer import TronSignerHook
    from airflow_provider_tronenergy.signer import LocalKeySigner

    key = "11" * 32
    address = LocalKeySigner(key).address
    made = SimpleNamespace(address=address)
    monkeypatch.setattr(tron_signer, "kms_client", lambda region, **kwargs: object())
    monkeypatch.setattr(tron_signer, "KmsSigner", lambda client, key_id, address: made)
    monkeypatch.setattr(tron_signer, "load_signer", lambda path, kwargs: made)
    seen: set[str] = set()
    ways = [({"address": address}, key),
            ({"address": address, "kms_key_id": "alias/payouts", "region_name": "eu-west-1",
              "aws_conn_id": "", "endpoint_url": "http://kms.local"}, None),
            ({"address": address, "signer_class": "hsm.module:Signer",
              "signer_kwargs": {"slot": 1}}, None)]
    for extra, password in ways:
        assert TronSignerHook.signer_of(reading(seen, extra, password=password)).address \
            == address
    assert seen == set(connection_type("tron_signer")["conn-fields"])


@pytest.mark.parametrize("conn_type", ["tronenergy", "tron_node", "tron_signer"])
def test_the_hooks_legacy_form_is_provider_infos(conn_type):
    """Airflow < 3.2 reads the hook's get_ui_field_behaviour(): the same layout as provider
    info's, and its Extra JSON placeholder shows conn-fields only."""
    import importlib

    conn = connection_type(conn_type)
    module, _, name = conn["hook-class-name"].rpartition(".")
    legacy = getattr(importlib.import_module(module), name).get_ui_field_behaviour()
    behaviour = conn["ui-field-behaviour"]
    assert legacy["hidden_fields"] == behaviour["hidden-fields"]
    assert legacy["relabeling"] == behaviour["relabeling"]
    placeholders = dict(legacy["placeholders"])
    shown = json.loads(placeholders.pop("extra"))
    assert placeholders == behaviour["placeholders"]
    assert shown and set(shown) <= set(conn["conn-fields"])


def test_the_node_forms_legacy_placeholder_gives_the_node_hooks_defaults():
    from airflow.sdk import Connection

    from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook

    placeholder = TronNodeHook.get_ui_field_behaviour()["placeholders"]["extra"]
    conn = Connection(conn_id="node", conn_type="tron_node", host="https://node.example",
                      extra=placeholder)
    settings = TronNodeHook.node_settings(conn)
    assert (settings["timeout"], settings["max_retries"], settings["max_answer_bytes"]) == (
        Timeout(10.0, 10.0), 3, 16777216)


def test_the_forms_written_out_defaults_are_the_codes():
    """hooks.forms writes its defaults out (provider info imports no client or node code):
    they are the code's."""
    from airflow_provider_tronenergy.client.bounded import (
        DEFAULT_MAX_ANSWER_BYTES,
        NODE_MAX_ANSWER_BYTES,
    )
    from airflow_provider_tronenergy.node.multicall import MAX_MULTICALL_CHUNK, MULTICALL_CHUNK
    from airflow_provider_tronenergy.node.network import CUSTOM, NETWORKS

    node = connection_type("tron_node")["conn-fields"]
    assert node["max_answer_bytes"]["schema"]["default"] == NODE_MAX_ANSWER_BYTES
    assert node["multicall_chunk"]["schema"]["default"] == MULTICALL_CHUNK
    assert node["multicall_chunk"]["schema"]["maximum"] == MAX_MULTICALL_CHUNK
    assert set(node["network"]["schema"]["enum"]) == {*NETWORKS, CUSTOM, None}
    service = connection_type("tronenergy")["conn-fields"]
    assert service["max_answer_bytes"]["schema"]["default"] == DEFAULT_MAX_ANSWER_BYTES


@pytest.mark.parametrize(("conn_type", "heading"), [
    ("tronenergy", "## Extras"), ("tron_node", "## The `tron_node` connection"),
    ("tron_signer", "## The `tron_signer` connection")])
def test_docs_connection_tables_name_every_form_field(conn_type, heading):
    """docs/connection.md's table of each connection type names each of its extras."""
    import re
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs" / "connection.md").read_text(encoding="utf-8")
    section = text[text.index(heading):]
    section = section[:section.find("\n## ", 1)]
    documented = set(re.findall(r"^\| (?:Extra )?`(\w+)` \|", section, re.MULTILINE))
    assert set(connection_type(conn_type)["conn-fields"]) <= documented


def test_the_description_says_what_the_provider_does():
    """`airflow providers list` and the providers page show it: each of the provider's jobs."""
    description = get_provider_info()["description"]
    for job in ("energy", "payouts of USDT, TRX or any TRC-20 token", "exactly once", "keeper",
                "credit deposits", "local key", "KMS", "external signer"):
        assert job in description, job
