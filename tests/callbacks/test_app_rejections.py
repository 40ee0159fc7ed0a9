"""Every way a callback is refused, over HTTP: the status, a JSON error, and nothing stored."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from airflow_provider_tronenergy.callbacks import CallbackStore, WebhookSecrets, create_app
from support.callbacks import ServedApp, callback_body, post, signed_headers, transfer_data
from tronenergy_protocol.address import random_address
from tronenergy_protocol.signing import sign_callback

SECRET = "whsec_key_level"
ADDRESS = random_address()
ADDRESS_SECRET = "whsec_address_level"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Iterator[CallbackStore]:
    store = CallbackStore(f"sqlite:///{tmp_path_factory.mktemp('rejections') / 'cb.db'}")
    yield store
    store.close()


@pytest.fixture(scope="module")
def receiver(store) -> Iterator[ServedApp]:
    secrets = WebhookSecrets.build(SECRET, {ADDRESS: ADDRESS_SECRET})
    with ServedApp(create_app(store, secrets)) as served:
        yield served


@pytest.fixture(autouse=True)
def nothing_stored(store) -> Iterator[None]:
    yield
    assert store.max_id() == 0, "a rejected callback was stored"


def raw(data: dict[str, Any] | None = None, **top: Any) -> bytes:
    event: dict[str, Any] = {"event": "tron.transfer", "timestamp": int(time.time()),
                             "data": transfer_data() if data is None else data}
    event.update(top)
    return json.dumps(event).encode()


def without(field: str) -> bytes:
    data = transfer_data()
    del data[field]
    return raw(data)


def bad_checksum(address: str) -> str:
    """``address`` with its last character changed (to "1" unless it already is one)."""
    return address[:-1] + ("2" if address.endswith("1") else "1")


def expect(response: httpx.Response, status: int, error: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    payload = response.json()
    assert payload["success"] is False and payload["error"] == error
    assert SECRET not in response.text and ADDRESS_SECRET not in response.text


# -- 403: not authenticated, or a replay ---------------------------------------------------


def test_missing_signature(receiver):
    body = callback_body()
    expect(post(receiver.callback_url, body, {"Content-Type": "application/json"}), 403,
           "missing_signature")
    expect(post(receiver.callback_url, body, {"X-Signature": ""}), 403, "missing_signature")


# Named ids: the same on every xdist worker (the last body carries a fresh timestamp).
@pytest.mark.parametrize("signature", [
    sign_callback("whsec_someone_else", b"x"),
    sign_callback(SECRET, b"another body"),
    "not-hex-at-all",
    "0" * 64,
    sign_callback(SECRET, callback_body())[:-1],
], ids=["other-secret", "other-body", "not-hex", "zeros", "truncated"])
def test_wrong_signature(receiver, signature):
    body = callback_body()
    expect(post(receiver.callback_url, body, {"X-Signature": signature}), 403,
           "invalid_signature")


def test_body_changed_after_signing(receiver):
    body = callback_body(transfer_data(amount="1"))
    headers = signed_headers(SECRET, body)
    tampered = body.replace(b'"amount":"1"', b'"amount":"9"')
    assert tampered != body
    expect(post(receiver.callback_url, tampered, headers), 403, "invalid_signature")
    # Re-serialising changes the bytes, so the signature covers the exact bytes only.
    reserialised = json.dumps(json.loads(body), indent=1).encode()
    expect(post(receiver.callback_url, reserialised, headers), 403, "invalid_signature")


def test_unauthenticated_garbage_is_403_not_400(receiver):
    """An unauthenticated sender learns nothing about body validation."""
    for body in (b"{not json", b"[]", b'{"data": {"to": 5}}', b"\xff\xfe"):
        expect(post(receiver.callback_url, body, {"X-Signature": "ab" * 32}), 403,
               "invalid_signature")


def test_address_secret_only_counts_for_its_own_address(receiver):
    other = callback_body(transfer_data(to=random_address()))
    expect(post(receiver.callback_url, other, signed_headers(ADDRESS_SECRET, other)), 403,
           "invalid_signature")
    # ADDRESS's secret cannot sign a callback whose data.to is another address, even
    # when ADDRESS appears elsewhere in the body.
    sneaky = callback_body(transfer_data(**{"from": ADDRESS}))
    expect(post(receiver.callback_url, sneaky, signed_headers(ADDRESS_SECRET, sneaky)), 403,
           "invalid_signature")


@pytest.mark.parametrize("offset", [-16 * 60, 16 * 60, -10**6])
def test_stale_or_future_timestamp(receiver, offset):
    body = callback_body(timestamp=int(time.time()) + offset)
    expect(post(receiver.callback_url, body, signed_headers(SECRET, body)), 403,
           "stale_timestamp")


# -- 400: authenticated but malformed --------------------------------------------------------


BAD_BODIES = {
    "not json": b"{",
    "not utf-8": b'{"event": "tron.transfer\xff"}',
    "json array": b"[1, 2]",
    "json string": b'"tron.transfer"',
    "NaN": b'{"event":"tron.transfer","timestamp":NaN}',
    "duplicate keys": b'{"event":"tron.transfer","event":"tron.transfer","timestamp":1,"data":{}}',
    "deep nesting": b"[" * 5000 + b"]" * 5000,
    "event missing": json.dumps({"timestamp": int(time.time()),
                                 "data": transfer_data()}).encode(),
    "other event": raw(event="tron.withdrawal"),
    "event case": raw(event="TRON.TRANSFER"),
    "timestamp missing": json.dumps({"event": "tron.transfer",
                                     "data": transfer_data()}).encode(),
    "timestamp string": raw(timestamp=str(int(time.time()))),
    "timestamp bool": raw(timestamp=True),
    "data missing": json.dumps({"event": "tron.transfer",
                                "timestamp": int(time.time())}).encode(),
    "data list": raw(data=[transfer_data()]),  # type: ignore[arg-type]
    **{f"{field} missing": without(field)
       for field in ("tx_hash", "from", "to", "amount", "token", "block_number",
                     "block_timestamp")},
    "tx_hash short": raw(transfer_data(tx_hash="ab" * 31 + "a")),
    "tx_hash long": raw(transfer_data(tx_hash="ab" * 33)),
    "tx_hash not hex": raw(transfer_data(tx_hash="zz" * 32)),
    "tx_hash 0x": raw(transfer_data(tx_hash="0x" + "ab" * 31)),
    "tx_hash number": raw(transfer_data(tx_hash=12345)),
    "to bad checksum": raw(transfer_data(to=bad_checksum(random_address()))),
    "to short": raw(transfer_data(to="T" + "1" * 30)),
    "to not T": raw(transfer_data(to="A" + random_address()[1:])),
    "from bad": raw(transfer_data(**{"from": "0x" + "ab" * 20})),
    "to number": raw(transfer_data(to=123)),
    "amount zero": raw(transfer_data(amount="0")),
    "amount zero decimals": raw(transfer_data(amount="0.000000")),
    "amount negative": raw(transfer_data(amount="-1")),
    "amount exponent": raw(transfer_data(amount="1e5")),
    "amount words": raw(transfer_data(amount="ten")),
    "amount empty": raw(transfer_data(amount="")),
    "amount spaces": raw(transfer_data(amount=" 1")),
    "amount trailing dot": raw(transfer_data(amount="1.")),
    "amount NaN": raw(transfer_data(amount="NaN")),
    "amount json number": raw(transfer_data(amount=12.5)),
    "amount huge": raw(transfer_data(amount="9" * 41)),
    "token empty": raw(transfer_data(token="")),
    "token list": raw(transfer_data(token=["TRX"])),
    "token control char": raw(transfer_data(token="TR\nX")),
    "block_number string": raw(transfer_data(block_number="1")),
    "block_number negative": raw(transfer_data(block_number=-1)),
    "block_number float": raw(transfer_data(block_number=1.5)),
    "block_number bool": raw(transfer_data(block_number=True)),
    "block_timestamp null": raw(transfer_data(block_timestamp=None)),
}


@pytest.mark.parametrize("body", list(BAD_BODIES.values()), ids=list(BAD_BODIES))
def test_malformed_body_is_400(receiver, body):
    expect(post(receiver.callback_url, body, signed_headers(SECRET, body)), 400, "invalid_body")


def test_malformed_body_signed_with_address_secret_is_400(receiver):
    body = raw(transfer_data(to=ADDRESS, amount="-5"))
    expect(post(receiver.callback_url, body, signed_headers(ADDRESS_SECRET, body)), 400,
           "invalid_body")


# -- 413: too large, refused while reading ----------------------------------------------------


def test_oversized_body_with_content_length(receiver):
    data = transfer_data(memo="x" * (64 * 1024))
    body = callback_body(data)
    expect(post(receiver.callback_url, body, signed_headers(SECRET, body)), 413,
           "body_too_large")


def test_oversized_chunked_body_is_413(receiver):
    def chunks() -> Iterator[bytes]:
        for _ in range(64):
            yield b"x" * (16 * 1024)

    response = httpx.post(receiver.callback_url, content=chunks(),
                          headers={"X-Signature": "ab" * 32}, timeout=10, trust_env=False)
    assert "content-length" not in response.request.headers
    expect(response, 413, "body_too_large")


def test_endless_body_stops_being_read_past_the_limit(store):
    """At the ASGI level: the app stops pulling chunks once 64 KiB are exceeded."""
    import asyncio

    app = create_app(store, SECRET)
    pulled = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        return {"type": "http.request", "body": b"x" * 16 * 1024, "more_body": True}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": "/callbacks", "raw_path": b"/callbacks",
             "root_path": "", "query_string": b"", "server": ("127.0.0.1", 80),
             "client": ("127.0.0.1", 5000), "headers": [(b"x-signature", b"ab" * 32)]}
    asyncio.run(asyncio.wait_for(app(scope, receive, send), 10))
    assert sent[0]["status"] == 413
    assert pulled == 5  # 4 chunks are exactly 64 KiB; the 5th crosses the limit


@pytest.mark.parametrize("declared", ["\u00b2", "\u00b9\u00b2", "-1", "1e3", ""])
def test_content_length_must_be_ascii_digits(store, declared):
    """At the ASGI level (another server may pass what uvicorn's parser refuses):
    ``Content-Length: ²`` (a Latin-1 digit) is a 400, not a crash."""
    import asyncio

    app = create_app(store, SECRET)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": "/callbacks", "raw_path": b"/callbacks",
             "root_path": "", "query_string": b"", "server": ("127.0.0.1", 80),
             "client": ("127.0.0.1", 5000),
             "headers": [(b"x-signature", b"ab" * 32),
                         (b"content-length", declared.encode("latin-1"))]}
    asyncio.run(asyncio.wait_for(app(scope, receive, send), 10))
    assert sent[0]["status"] == 400
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert json.loads(body)["error"] == "invalid_body"


def test_huge_content_length_is_refused_before_reading(receiver):
    """Declared 1 GB, sent 2 bytes: the answer comes at once, nothing waits for the rest."""
    import socket

    with socket.create_connection(("127.0.0.1", receiver.port), timeout=5) as sock:
        sock.sendall(b"POST /callbacks HTTP/1.1\r\nHost: x\r\nX-Signature: " + b"ab" * 32
                     + b"\r\nContent-Length: 1000000000\r\n\r\n{}")
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), answer
    assert json.loads(body)["error"] == "body_too_large"


def test_unconfigured_receiver_refuses_everything(store):
    with ServedApp(create_app(store, None)) as served:
        body = callback_body()
        for secret in (SECRET, ""):
            expect(post(served.callback_url, body, signed_headers(secret, body)), 503,
                   "not_configured")
        health = httpx.get(f"{served.root_url}/health", trust_env=False)
        assert health.status_code == 503 and health.json()["status"] == "unconfigured"


def test_get_is_not_a_callback(receiver):
    response = httpx.get(receiver.callback_url, trust_env=False)
    assert response.status_code == 405


def test_the_bad_checksum_case_is_always_invalid():
    """It once changed nothing when the random address already ended in "1" (1 in 58)."""
    from tronenergy_protocol.address import is_valid_address

    addresses = [random_address() for _ in range(2000)]
    assert any(a.endswith("1") for a in addresses)
    assert not any(is_valid_address(bad_checksum(a)) for a in addresses)
