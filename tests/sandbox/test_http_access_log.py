"""The access log: one line per request (method, path, status, code, ms), never a secret."""

from __future__ import annotations

import logging
import re
import time
import uuid

import pytest
import requests

from tronenergy_protocol.address import random_address

ACCESS = "tronenergy.sandbox.access"
LINE = re.compile(r"^(?P<method>[A-Z]+) (?P<path>\S+) (?P<status>\d{3}|dropped) "
                  r"code=(?P<code>-|\d+) (?P<ms>\d+\.\d)ms$")


def access_lines(caplog, marker: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == ACCESS and marker in r.getMessage()]


def wait_for_line(caplog, marker: str, also: str = "") -> str:
    """The server logs after answering, on its own thread: wait for the line to land."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = [line for line in access_lines(caplog, marker) if also in line]
        if found:
            return found[0]
        time.sleep(0.01)
    raise AssertionError(f"no access line for {marker}")


@pytest.fixture
def logs(caplog):
    caplog.set_level(logging.DEBUG)  # everything the sandbox logs, at every level
    return caplog


def test_one_line_per_request(signed, logs):
    order_id = uuid.uuid4().hex
    signed.get(f"/v1/energy/order/{order_id}").error(40040, 404)
    line = wait_for_line(logs, order_id)
    match = LINE.match(line)
    assert match, line
    assert match.group("method") == "GET"
    assert match.group("path") == f"/v1/energy/order/{order_id}"
    assert (match.group("status"), match.group("code")) == ("404", "40040")

    address = random_address()
    signed.post("/v1/energy/check-address", {"address": address}).ok()
    assert signed.post("/v1/energy/activate", {"address": address}).json["success"] is True
    marker = uuid.uuid4().hex
    signed.get(f"/v1/energy/order/{marker}")  # later than the others, on the same connection
    wait_for_line(logs, marker)
    assert len(access_lines(logs, order_id)) == 1
    lines = [LINE.match(r.getMessage()) for r in logs.records if r.name == ACCESS]
    assert all(lines), [r.getMessage() for r in logs.records if r.name == ACCESS]
    posted = [(m.group("path"), m.group("status"), m.group("code"))
              for m in lines if m and m.group("method") == "POST"]
    assert ("/v1/energy/check-address", "200", "10000") in posted
    assert ("/v1/energy/activate", "200", "10000") in posted  # the flat response too


def test_monitoring_and_errors_log_their_codes(signed, logs):
    signed.get("/v1/tron-monitor/stats").ok(0)
    signed.get("/v1/energy/account", signature="0" * 64).error(40002, 401)
    marker = uuid.uuid4().hex
    signed.get(f"/v1/energy/order/{marker}")
    wait_for_line(logs, marker)
    seen = [LINE.match(r.getMessage()) for r in logs.records if r.name == ACCESS]
    summary = [(m.group("path"), m.group("status"), m.group("code")) for m in seen if m]
    assert ("/v1/tron-monitor/stats", "200", "0") in summary
    assert ("/v1/energy/account", "401", "40002") in summary


def test_a_dropped_request_is_logged_as_dropped(faults, logs):
    target = faults.activated()
    faults.add_fault(kind="drop", path="/energy/buy-count", count=1)
    with pytest.raises(requests.ConnectionError):
        faults.post("/v1/energy/buy-count", {"target_address": target})
    line = wait_for_line(logs, "POST /v1/energy/buy-count ", also=" dropped ")
    assert LINE.match(line), line


def test_secrets_never_reach_any_log(sandbox_server, signed, faults, logs):
    secrets = [sandbox_server.api_key, sandbox_server.api_secret, sandbox_server.webhook_secret]
    key, secret, webhook = secrets
    # Secrets in every place a request can carry them: query, body, headers, wrong keys.
    signed.get(f"/v1/energy/account?api_key={key}&secret={secret}&w={webhook}").ok()
    signed.get("/v1/energy/account", key=webhook).error(40001, 401)
    signed.get("/v1/energy/account", key=secret).error(40001, 401)
    signed.get("/v1/energy/account", signature=secret).error(40002, 401)
    signed.get("/v1/energy/account", ts=key).error(40003, 401)
    signed.post("/v1/energy/check-address", {"address": key}).error(40011, 400)
    signed.post("/v1/tron-monitor/addresses", {"address": random_address(), "webhook_url":
                f"http://127.0.0.1:9/{secret}", "webhook_secret": webhook}).ok(0)
    signed.post("/v1/energy/buy", raw=f'{{"target_address": "{secret}"'.encode()).error(
        40010, 400)
    faults.add_fault(kind="error", path="/energy/price", status=500, count=1)
    faults.get(f"/v1/energy/price?k={key}").error(50000, 500)
    marker = uuid.uuid4().hex
    signed.get(f"/v1/energy/order/{marker}")
    wait_for_line(logs, marker)

    sandbox_records = [r for r in logs.records
                       if r.name.startswith(("tronenergy", "uvicorn"))]
    assert len([r for r in sandbox_records if r.name == ACCESS]) >= 10
    for record in sandbox_records:
        text = record.getMessage() + (record.exc_text or "") + repr(record.args)
        for value in secrets:
            assert value not in text, (record.name, text)
