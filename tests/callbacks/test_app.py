"""Real signed callbacks from the sandbox's dispatcher to the receiver under uvicorn."""

from __future__ import annotations

import time
from decimal import Decimal

from airflow_provider_tronenergy.callbacks import CallbackStore, WebhookSecrets, create_app
from support import signed
from support.callbacks import ServedApp, callback_body, post, signed_headers, transfer_data
from support.sandbox import sandbox_fixture
from support.signed import SignedSession
from tronenergy_protocol.address import random_address
from tronenergy_protocol.signing import verify_callback
from tronenergy_sandbox import SandboxConfig, SandboxServer

# Retries after 10 s / 60 s / 300 s become 0.1 s / 0.6 s / 3 s.
TIME_SCALE = 0.01


api = signed.api  # signed calls to this module's sandbox
sandbox = sandbox_fixture(time_scale=TIME_SCALE)


def test_dispatched_callbacks_are_stored_exactly(sandbox, api, sqlite_store):
    with ServedApp(create_app(sqlite_store, sandbox.webhook_secret)) as receiver:
        address = api.watch(receiver.callback_url, tokens=["TRX", "USDT"])
        sent = {api.transfer(address, amount): amount
                for amount in ("12.5", "0.000001", "100", "1234567.654321")}
        sent[api.transfer(address, "3.5", token="USDT")] = "3.5"
        delivered = api.deliveries(5)

        stored = sqlite_store.list_transfers(address, include_raw=True)
        assert {t.tx_hash: t.amount_text for t in stored} == sent
        for transfer in stored:
            assert transfer.amount == Decimal(sent[transfer.tx_hash])
            assert transfer.to_address == address
            assert transfer.verified_by == "key"
            assert transfer.raw_body is not None
            raw, signature = sqlite_store.audit_record(transfer.tx_hash) or (b"", "")
            assert verify_callback(sandbox.webhook_secret, raw, signature)
        assert {t.token for t in stored} == {"TRX", "USDT"}
        for delivery in delivered:
            assert delivery["history"][-1]["status_code"] == 200
            assert '"duplicate":false' in delivery["history"][-1]["response_body"]
        by_tx = {t.tx_hash: t for t in stored}
        for delivery in delivered:
            t = by_tx[delivery["tx_hash"]]
            assert t.block_number == delivery["data"]["block_number"]
            assert t.block_timestamp_ms == delivery["data"]["block_timestamp"]
            assert t.from_address == delivery["data"]["from"]

        # The console's manual resend is a duplicate: 200, stored once.
        resent = api.control("POST", f"/deliveries/{delivered[0]['id']}/resend")
        assert resent["history"][-1]["status_code"] == 200
        assert '"duplicate":true' in resent["history"][-1]["response_body"]
    assert len(sqlite_store.list_transfers()) == 5


def test_address_level_secret_and_unknown_one(sandbox, api, sqlite_store):
    known, unknown = "whsec_address_known", "whsec_address_unknown"
    address = random_address()
    mapped = WebhookSecrets.build(sandbox.webhook_secret, {address: known})
    with ServedApp(create_app(sqlite_store, mapped)) as receiver:
        api.data("POST", "/v1/tron-monitor/addresses",
                 {"address": address, "webhook_url": receiver.callback_url,
                  "webhook_secret": known})
        stranger = api.watch(receiver.callback_url, webhook_secret=unknown)
        plain = api.watch(receiver.callback_url)
        tx_known = api.transfer(address)
        tx_plain = api.transfer(plain)
        tx_stranger = api.transfer(stranger)
        api.deliveries(2)
        rejected = deliveries_settled_with(api, tx_stranger, lambda d: d["attempts"] >= 1)

    assert rejected["history"][0]["status_code"] == 403
    assert "invalid_signature" in rejected["history"][0]["response_body"]
    assert sqlite_store.get_transfer(tx_known).verified_by == "address"
    assert sqlite_store.get_transfer(tx_plain).verified_by == "key"
    assert sqlite_store.get_transfer(tx_stranger) is None
    assert sqlite_store.count_by_recipient([stranger]) == {stranger: 0}


def deliveries_settled_with(api: SignedSession, tx_hash: str, predicate, timeout: float = 15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for delivery in api.control("GET", "/deliveries"):
            if delivery["tx_hash"] == tx_hash and predicate(delivery):
                return delivery
        time.sleep(0.02)
    raise AssertionError(f"delivery of {tx_hash} never matched")


def test_rotation_accepts_old_and_new_secret_at_once(sqlite_store):
    with SandboxServer(SandboxConfig(port=0, time_scale=TIME_SCALE,
                                     webhook_secret="whsec_new")) as sandbox:
        api = SignedSession.of(sandbox)
        app = create_app(sqlite_store, "whsec_old, whsec_new")
        with ServedApp(app) as receiver:
            address = api.watch(receiver.callback_url)
            tx_new = api.transfer(address)
            api.deliveries(1)
            old_body = callback_body(transfer_data(to=address))
            assert post(receiver.callback_url, old_body,
                        signed_headers("whsec_old", old_body)).status_code == 200
            retired = callback_body(transfer_data(to=address))
            response = post(receiver.callback_url, retired,
                            signed_headers("whsec_retired", retired))
            assert response.status_code == 403
    assert sqlite_store.get_transfer(tx_new) is not None
    assert len(sqlite_store.list_transfers()) == 2


class SwitchableSecrets:
    """A secrets source an operator changes while the receiver runs."""

    def __init__(self, secrets: WebhookSecrets) -> None:
        self.secrets = secrets

    async def get(self) -> WebhookSecrets | None:
        return self.secrets


def test_forbidden_delivery_is_retried_and_stored_once_fixed(sandbox, api, sqlite_store):
    source = SwitchableSecrets(WebhookSecrets.build("whsec_not_the_one"))
    with ServedApp(create_app(sqlite_store, source)) as receiver:
        address = api.watch(receiver.callback_url)
        tx_hash = api.transfer(address)
        deliveries_settled_with(api, tx_hash, lambda d: d["attempts"] >= 1)
        assert sqlite_store.get_transfer(tx_hash) is None
        source.secrets = WebhookSecrets.build(sandbox.webhook_secret)
        delivered = api.deliveries(1)
    codes = [attempt["status_code"] for attempt in delivered[0]["history"]]
    assert codes[0] == 403 and codes[-1] == 200
    assert len(sqlite_store.list_transfers()) == 1


class FailingStore:
    """Fails the first ``failures`` commits, as a full disk or a lost database would."""

    def __init__(self, store: CallbackStore, failures: int) -> None:
        self.store = store
        self.failures = failures

    def record_many(self, events):
        if self.failures > 0:
            self.failures -= 1
            raise OSError("disk I/O error")
        return self.store.record_many(events)

    def ping(self) -> None:
        self.store.ping()


def test_store_failure_answers_503_and_the_retry_stores(sandbox, api, sqlite_store):
    with ServedApp(create_app(FailingStore(sqlite_store, failures=1),
                              sandbox.webhook_secret)) as receiver:
        address = api.watch(receiver.callback_url)
        tx_hash = api.transfer(address)
        delivered = api.deliveries(1)
    history = delivered[0]["history"]
    assert [a["status_code"] for a in history] == [503, 200]
    assert "store_unavailable" in history[0]["response_body"]
    assert sqlite_store.get_transfer(tx_hash) is not None


def test_tolerance_zero_disables_the_timestamp_check(sqlite_store):
    with ServedApp(create_app(sqlite_store, "s", tolerance=0)) as receiver:
        body = callback_body(timestamp=1_000_000_000)
        assert post(receiver.callback_url, body, signed_headers("s", body)).status_code == 200
    with ServedApp(create_app(sqlite_store, "s")) as receiver:
        body = callback_body(timestamp=1_000_000_000)
        response = post(receiver.callback_url, body, signed_headers("s", body))
        assert response.status_code == 403 and response.json()["error"] == "stale_timestamp"
    assert len(sqlite_store.list_transfers()) == 1


def test_body_at_the_size_limit_is_accepted(sqlite_store):
    data = transfer_data()
    body = callback_body(data)
    data["memo"] = "x" * (64 * 1024 - len(body) - len(',"memo":""'))
    body = callback_body(data)
    assert len(body) == 64 * 1024
    with ServedApp(create_app(sqlite_store, "s")) as receiver:
        assert post(receiver.callback_url, body, signed_headers("s", body)).status_code == 200
    assert sqlite_store.get_transfer(data["tx_hash"]) is not None


def test_health(sqlite_store):
    with ServedApp(create_app(sqlite_store, "s")) as receiver:
        import httpx

        assert httpx.get(f"{receiver.root_url}/health", trust_env=False).json() == \
            {"status": "ok"}
    with ServedApp(create_app(FailingPing(), "s")) as receiver:
        response = httpx.get(f"{receiver.root_url}/health", trust_env=False)
        assert response.status_code == 503 and response.json()["status"] == "store_unavailable"


class FailingPing:
    def record_many(self, events):
        raise AssertionError("not called")

    def ping(self) -> None:
        raise OSError("database is locked")


def test_a_signed_probe_is_answered_and_stores_nothing(sqlite_store):
    """The doctor's probe proves the route and the secret: signed and fresh, 200 and no
    row; unsigned, signed with another secret or stale, refused like a transfer (403)."""
    from airflow_provider_tronenergy.callbacks.verify import probe_body

    with ServedApp(create_app(sqlite_store, "s")) as receiver:
        body = probe_body()
        answer = post(receiver.callback_url, body, signed_headers("s", body))
        assert (answer.status_code, answer.json()) == (200, {"success": True, "probe": True})
        unsigned = post(receiver.callback_url, body, {"Content-Type": "application/json"})
        forged = post(receiver.callback_url, body, signed_headers("not-s", body))
        stale = probe_body(time.time() - 3600)
        old = post(receiver.callback_url, stale, signed_headers("s", stale))
        assert [(r.status_code, r.json()["error"]) for r in (unsigned, forged, old)] == [
            (403, "missing_signature"), (403, "invalid_signature"), (403, "stale_timestamp")]
    assert sqlite_store.list_transfers() == []
