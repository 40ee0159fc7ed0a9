"""Address monitoring over HTTP: add, list (pages, filter), delete, stats and its alias."""

from __future__ import annotations

import pytest

from tronenergy_protocol.address import random_address

HOOK = "http://127.0.0.1:9/callbacks"  # port 9 refuses: deliveries stay pending


@pytest.fixture(scope="module")
def mon(start_sandbox, signer):
    """A sandbox of its own, so that totals and pages are exactly this module's."""
    return signer(start_sandbox())


def add(api, address: str | None = None, **extra) -> str:
    address = address or random_address()
    body = {"address": address, "webhook_url": HOOK, **extra}
    api.post("/v1/tron-monitor/addresses", body).ok(0)
    return address


def listing(api, query: str = "") -> dict:
    data: dict = api.get(f"/v1/tron-monitor/addresses{query}").ok(0)
    return data


def stats(api) -> dict:
    data: dict = api.get("/v1/tron-monitor/stats").ok(0)
    return data


def test_add_defaults_and_echo(mon):
    address = random_address()
    reply = mon.post("/v1/tron-monitor/addresses", {"address": address, "webhook_url": HOOK})
    assert reply.ok(0) == {"address": address, "status": "active", "webhook_url": HOOK}
    assert "added" in reply.message
    entry = next(a for a in listing(mon, "?page_size=100")["addresses"]
                 if a["address"] == address)
    assert entry["tokens"] == ["TRX"] and entry["label"] == "" and entry["is_active"] is True


def test_add_with_label_tokens_and_secret(mon):
    address = add(mon, label="hot wallet 7", tokens=["usdt", "TRX"], webhook_secret="s3cr3t")
    entry = next(a for a in listing(mon, "?page_size=100")["addresses"]
                 if a["address"] == address)
    assert entry["label"] == "hot wallet 7" and entry["tokens"] == ["USDT", "TRX"]
    assert "webhook_secret" not in entry  # never echoed


@pytest.mark.parametrize(("extra", "field"), [
    ({"webhook_url": None}, "webhook_url"), ({"webhook_url": ""}, "webhook_url"),
    ({"webhook_url": "ftp://example.com/x"}, "webhook_url"), ({"webhook_url": 7}, "webhook_url"),
    ({"tokens": []}, "tokens"), ({"tokens": "TRX"}, "tokens"), ({"tokens": [1]}, "tokens"),
    ({"label": 5}, "label"), ({"label": "x" * 257}, "label"), ({"webhook_secret": 1},
                                                               "webhook_secret"),
])
def test_add_rejects(mon, extra, field):
    body = {"address": random_address(), "webhook_url": HOOK, **extra}
    if extra.get("webhook_url", "") is None:
        del body["webhook_url"]
    before = stats(mon)["total_addresses"]
    assert field in mon.post("/v1/tron-monitor/addresses", body).error(40010, 400)
    assert stats(mon)["total_addresses"] == before


def test_webhook_url_required_unless_configured(start_sandbox, signer):
    configured = "http://127.0.0.1:9/configured"
    api = signer(start_sandbox(webhook_url=configured))
    address = random_address()
    data = api.post("/v1/tron-monitor/addresses", {"address": address}).ok(0)
    assert data == {"address": address, "status": "active", "webhook_url": configured}
    own = api.post("/v1/tron-monitor/addresses",
                   {"address": random_address(), "webhook_url": HOOK}).ok(0)
    assert own["webhook_url"] == HOOK  # an explicit URL still wins


def test_webhook_url_required_without_configuration(mon):
    message = mon.post("/v1/tron-monitor/addresses", {"address": random_address()}).error(
        40010, 400)
    assert "webhook_url" in message


def test_409_when_already_active_and_readd_after_delete(mon):
    address = add(mon)
    mon.post("/v1/tron-monitor/addresses", {"address": address, "webhook_url": HOOK}).error(
        40090, 409)
    mon.delete(f"/v1/tron-monitor/addresses/{address}").ok(0)
    add(mon, address, label="again")  # inactive may be added again
    entry = next(a for a in listing(mon, "?status=active&page_size=100")["addresses"]
                 if a["address"] == address)
    assert entry["label"] == "again"


def test_pagination(mon):
    mine = [add(mon) for _ in range(23)]
    total = listing(mon)["total"]
    assert total >= 23
    everything = []
    page = 1
    while True:
        chunk = listing(mon, f"?page={page}&page_size=7")
        assert chunk["total"] == total
        assert len(chunk["addresses"]) <= 7
        if not chunk["addresses"]:
            break
        everything += [a["address"] for a in chunk["addresses"]]
        page += 1
    assert len(everything) == total == len(set(everything))
    assert page - 1 == -(-total // 7)
    assert everything[-23:] == mine  # oldest first, in the order added
    assert len(listing(mon)["addresses"]) == min(total, 20)  # default page_size 20
    assert len(listing(mon, "?page_size=100")["addresses"]) == min(total, 100)
    assert [a["address"] for a in listing(mon, "?page_size=1")["addresses"]] == everything[:1]
    assert listing(mon, f"?page={total + 1}&page_size=1")["addresses"] == []


def test_status_filter_and_delete(mon):
    kept, dropped = add(mon), add(mon)
    before = stats(mon)
    deleted = mon.delete(f"/v1/tron-monitor/addresses/{dropped}")
    assert deleted.ok(0) is None
    assert "removed" in deleted.message

    everything = listing(mon, "?page_size=100")
    active = listing(mon, "?status=active&page_size=100")
    inactive = listing(mon, "?status=inactive&page_size=100")
    assert active["total"] + inactive["total"] == everything["total"]
    assert all(a["is_active"] for a in active["addresses"])
    assert not any(a["is_active"] for a in inactive["addresses"])
    assert kept in {a["address"] for a in active["addresses"]}
    assert dropped in {a["address"] for a in inactive["addresses"]}
    assert dropped not in {a["address"] for a in active["addresses"]}
    assert listing(mon, "?status=&page_size=100")["total"] == everything["total"]

    after = stats(mon)
    assert after["total_addresses"] == before["total_addresses"]
    assert after["active_addresses"] == before["active_addresses"] - 1
    mon.delete(f"/v1/tron-monitor/addresses/{dropped}").error(40040, 404)
    mon.delete(f"/v1/tron-monitor/addresses/{random_address()}").error(40040, 404)


def test_stats_counts_and_alias(mon):
    before = stats(mon)
    address = add(mon)
    after = stats(mon)
    assert after["total_addresses"] == before["total_addresses"] + 1
    assert after["active_addresses"] == before["active_addresses"] + 1
    assert after["total_addresses"] == listing(mon)["total"]
    assert after["active_addresses"] == listing(mon, "?status=active")["total"]
    doubled = mon.get("/v1/tron-monitor/tron-monitor/stats").ok(0)
    assert doubled == after  # nothing is in flight yet, so both reads must agree

    # A transfer to the watched address queues one callback (its receiver refuses).
    mon.control("POST", "/transfers", {"from": random_address(), "to": address,
                                       "amount": "1.5", "token": "TRX"})
    assert stats(mon)["total_callbacks"] == after["total_callbacks"] + 1
    entry = next(a for a in listing(mon, "?page_size=100")["addresses"]
                 if a["address"] == address)
    assert entry["total_callbacks"] == 1
