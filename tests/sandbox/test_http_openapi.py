"""/openapi.json describes /v1 as it really answers: real bodies validate against it."""

from __future__ import annotations

import copy
import uuid
from decimal import Decimal
from typing import Any

import pytest
from fastapi.routing import APIRoute
from jsonschema import Draft202012Validator

from tronenergy_protocol.address import random_address
from tronenergy_sandbox import api as sandbox_api

HOOK = "http://127.0.0.1:9/callbacks"


@pytest.fixture(scope="module")
def document(signed) -> dict[str, Any]:
    response = signed.session.get(f"{signed.root_url}/openapi.json", timeout=10)
    assert response.status_code == 200
    doc: dict[str, Any] = response.json()
    assert doc["openapi"].startswith("3.")
    return doc


def inline(node: Any, components: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    """Replace every ``#/components/schemas/X`` reference by a copy of X."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            prefix = "#/components/schemas/"
            assert ref.startswith(prefix), ref
            name = ref[len(prefix):]
            assert name not in seen, f"recursive schema {name}"
            target = inline(copy.deepcopy(components[name]), components, (*seen, name))
            return {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return {k: inline(v, components, seen) for k, v in node.items()}
    if isinstance(node, list):
        return [inline(v, components, seen) for v in node]
    return node


def response_schema(doc: dict[str, Any], method: str, template: str, status: int) -> Any:
    operation = doc["paths"][template][method.lower()]
    responses = operation["responses"]
    assert str(status) in responses, f"{method} {template} does not declare {status}"
    schema = responses[str(status)]["content"]["application/json"]["schema"]
    return inline(schema, doc.get("components", {}).get("schemas", {}))


def validate(doc: dict[str, Any], method: str, template: str, reply) -> None:
    schema = response_schema(doc, method, template, reply.status)
    Draft202012Validator.check_schema(schema)
    errors = sorted(Draft202012Validator(schema).iter_errors(reply.json), key=str)
    assert not errors, (method, template, reply.status, reply.text, [e.message for e in errors])


def cases(api) -> list[tuple[str, str, Any, int]]:
    """(method, template, reply, expected status): one success, one error per endpoint."""
    active, holder = api.activated(), api.holder()
    order_id = api.post("/v1/energy/buy", {"target_address": active}).ok()["order_id"]
    watched = random_address()
    out: list[tuple[str, str, Any, int]] = []

    def case(method: str, template: str, reply, status: int) -> None:
        out.append((method, template, reply, status))

    case("GET", "/v1/energy/account", api.get("/v1/energy/account"), 200)
    case("GET", "/v1/energy/account", api.get("/v1/energy/account", key=None), 401)
    case("GET", "/v1/energy/price", api.get("/v1/energy/price?rent_time=0.08"), 200)
    case("GET", "/v1/energy/price", api.get("/v1/energy/price?rent_time=9"), 400)
    for path in ("/v1/energy/buy", "/v1/energy/rent"):
        case("POST", path, api.post(path, {"target_address": active}), 200)
        case("POST", path, api.post(path, {"target_address": random_address()}), 400)
    case("POST", "/v1/energy/auto-buy",
         api.post("/v1/energy/auto-buy", {"from_address": active, "to_address": holder}), 200)
    case("POST", "/v1/energy/auto-buy",
         api.post("/v1/energy/auto-buy", {"from_address": active}), 400)
    case("POST", "/v1/energy/buy-count",
         api.post("/v1/energy/buy-count", {"target_address": active, "count": 2}), 200)
    case("POST", "/v1/energy/buy-count",
         api.post("/v1/energy/buy-count", {"target_address": active, "count": 0}), 400)
    case("POST", "/v1/energy/smart-buy",
         api.post("/v1/energy/smart-buy", {"receiver_address": active,
                                           "to_address": random_address()}), 200)
    case("POST", "/v1/energy/smart-buy",
         api.post("/v1/energy/smart-buy", {"receiver_address": active,
                                           "to_address": holder}, signature="0" * 64), 401)
    case("POST", "/v1/energy/check-address",
         api.post("/v1/energy/check-address", {"address": holder}), 200)
    case("POST", "/v1/energy/check-address",
         api.post("/v1/energy/check-address", {"address": "T" * 34}), 400)
    case("POST", "/v1/energy/activate",
         api.post("/v1/energy/activate", {"address": random_address()}), 200)
    case("POST", "/v1/energy/activate", api.post("/v1/energy/activate", {"address": holder}), 400)
    case("GET", "/v1/energy/order/{order_id}", api.get(f"/v1/energy/order/{order_id}"), 200)
    case("GET", "/v1/energy/order/{order_id}",
         api.get(f"/v1/energy/order/{uuid.uuid4().hex}"), 404)
    for path in ("/v1/tron-monitor/stats", "/v1/tron-monitor/tron-monitor/stats"):
        case("GET", path, api.get(path), 200)
        case("GET", path, api.get(path, ts=1), 401)
    case("POST", "/v1/tron-monitor/addresses",
         api.post("/v1/tron-monitor/addresses", {"address": watched, "webhook_url": HOOK}), 200)
    case("POST", "/v1/tron-monitor/addresses",
         api.post("/v1/tron-monitor/addresses", {"address": watched, "webhook_url": HOOK}), 409)
    case("GET", "/v1/tron-monitor/addresses", api.get("/v1/tron-monitor/addresses?page=1"), 200)
    case("GET", "/v1/tron-monitor/addresses", api.get("/v1/tron-monitor/addresses?page=0"), 400)
    case("DELETE", "/v1/tron-monitor/addresses/{address}",
         api.delete(f"/v1/tron-monitor/addresses/{watched}"), 200)
    case("DELETE", "/v1/tron-monitor/addresses/{address}",
         api.delete(f"/v1/tron-monitor/addresses/{watched}"), 404)
    return out


def test_every_response_validates_against_the_document(signed, document):
    seen = set()
    for method, template, reply, status in cases(signed):
        assert reply.status == status, (method, template, reply)
        validate(document, method, template, reply)
        seen.add((method, template))
    served = {(m, r.path) for r in sandbox_api.router.routes if isinstance(r, APIRoute)
              for m in r.methods}
    assert seen == served  # every /v1 endpoint had its success and its error checked


def test_balance_and_fault_errors_validate(faults, document, start_sandbox, signer):
    poor = signer(start_sandbox(balance=Decimal("1")))
    reply = poor.post("/v1/energy/buy", {"target_address": poor.activated()})
    assert reply.status == 402
    validate(document, "POST", "/v1/energy/buy", reply)
    for kind, status in (("rate_limit", 429), ("error", 500), ("error", 503)):
        faults.add_fault(kind=kind, path="/energy/account", status=max(status, 500), count=1)
        reply = faults.get("/v1/energy/account")
        assert reply.status == status
        validate(document, "GET", "/v1/energy/account", reply)


def test_the_schema_would_catch_a_wrong_body(document):
    """The check is not vacuous: a float-typed string amount or a missing field fails."""
    schema = response_schema(document, "GET", "/v1/energy/account", 200)
    good = {"success": True, "code": 10000, "message": "ok", "data": {
        "user_id": 1, "username": "a@b.c", "balance": Decimal("1.5"),
        "available_balance": 1, "frozen_amount": 0, "pending_orders_count": 0,
        "recharge_address": "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"}}
    assert Draft202012Validator(schema).is_valid(good)
    for broken in ({**good["data"], "balance": "1.5"}, {**good["data"], "extra": 1},
                   {k: v for k, v in good["data"].items() if k != "user_id"}):
        assert not Draft202012Validator(schema).is_valid({**good, "data": broken})
    flat = response_schema(document, "POST", "/v1/energy/activate", 200)
    assert not Draft202012Validator(flat).is_valid(good)


def test_paths_in_the_document(document):
    documented = {(method.upper(), path) for path, ops in document["paths"].items()
                  for method in ops if method in ("get", "post", "put", "delete", "patch")}
    served = {(m, r.path) for r in sandbox_api.router.routes if isinstance(r, APIRoute)
              for m in r.methods}
    assert served <= documented
    assert documented == served  # and nothing undocumented or phantom
    assert all(path.startswith("/v1/") for _, path in documented)
    assert not any(path.startswith("/sandbox") for path in document["paths"])
    spec = {("GET", "/v1/energy/account"), ("GET", "/v1/energy/price"),
            ("POST", "/v1/energy/buy"), ("POST", "/v1/energy/auto-buy"),
            ("POST", "/v1/energy/buy-count"), ("POST", "/v1/energy/smart-buy"),
            ("POST", "/v1/energy/check-address"), ("POST", "/v1/energy/activate"),
            ("GET", "/v1/energy/order/{order_id}"), ("GET", "/v1/tron-monitor/stats"),
            ("GET", "/v1/tron-monitor/tron-monitor/stats"),
            ("GET", "/v1/tron-monitor/addresses"), ("POST", "/v1/tron-monitor/addresses"),
            ("DELETE", "/v1/tron-monitor/addresses/{address}")}
    assert spec <= documented


def test_the_document_declares_only_statuses_the_sandbox_answers(document):
    """Validation errors are 400/40010 here, never FastAPI's 422."""
    possible = {"200", "400", "401", "402", "404", "409", "429", "500", "503"}
    for path, ops in document["paths"].items():
        for method, operation in ops.items():
            assert set(operation["responses"]) <= possible, (method, path)
            for parameter in operation.get("parameters", []):
                assert parameter["in"] in ("query", "path"), (method, path, parameter)


def test_declared_request_rules_match_the_sandbox(document, signed):
    price = signed.get("/v1/energy/price").ok()
    paths = document["paths"]
    buy = paths["/v1/energy/buy"]["post"]["requestBody"]["content"]["application/json"]
    energy = buy["schema"]["properties"]["energy_amount"]
    assert (energy["minimum"], energy["maximum"]) == (price["min_energy"], price["max_energy"])
    for path in ("/v1/energy/buy", "/v1/energy/auto-buy", "/v1/energy/buy-count",
                 "/v1/energy/smart-buy"):
        body = paths[path]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert sorted(Decimal(str(v)) for v in body["properties"]["rent_time"]["enum"]) == [
            Decimal("0.25"), Decimal("1"), Decimal("24")]
    query = {p["name"]: p for p in paths["/v1/energy/price"]["get"]["parameters"]}
    assert sorted(Decimal(str(v)) for v in query["rent_time"]["schema"]["enum"]) == [
        Decimal("0.08"), Decimal("0.17"), Decimal("1")]
    listing = {p["name"]: p["schema"] for p in
               paths["/v1/tron-monitor/addresses"]["get"]["parameters"]}
    assert listing["page_size"]["maximum"] == 100 and listing["page_size"]["default"] == 20
    assert listing["status"]["enum"] == ["active", "inactive"]
    for path, name in (("/v1/energy/order/{order_id}", "order_id"),
                       ("/v1/tron-monitor/addresses/{address}", "address")):
        declared = [p for p in paths[path][next(iter(paths[path]))]["parameters"]
                    if p["in"] == "path"]
        assert [(p["name"], p["required"]) for p in declared] == [(name, True)]
