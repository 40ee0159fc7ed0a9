"""Issue 33 (part A): a node's word about time and receipts is checked, not believed.

On the sandbox chain, whose clock is the worker's here (``support.payouts``): the node's
answers are rewritten by the ``tamper`` fault, refused by ``error``, and the chain is
paused. Every test ends counting on the chain: each payout paid exactly once, and only
after the node tells the truth again.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from airflow_provider_tronenergy.node.client import TronNodeClient
from airflow_provider_tronenergy.node.errors import UnreliableNode
from airflow_provider_tronenergy.payout.journal import PayoutState
from airflow_provider_tronenergy.payout.send import MAX_EXPIRATION_S, Step
from payout.test_send import LostAnswers, settle
from support.chain import USDT
from support.payouts import Payouts

HOUR_MS = 3600 * 1000


def tamper(world: Payouts, path: str, **patch: Any) -> int:
    """Rewrite fields of the node's answers on ``path`` (values: raw JSON), until removed."""
    api_key = patch.pop("api_key", None)
    fault = world.chain.control.fault(
        kind="tamper", path=path, patch={k.replace("__", "."): v for k, v in patch.items()},
        **({"api_key": api_key} if api_key else {}))
    return int(fault["id"])


def send(world: Payouts, rows: list[Any], **settings: Any) -> Any:
    sender = settings.pop("sender", None) or world.sender(**settings)
    return sender.send(rows, sender=world.address, token="USDT", batch_id="b1")


def states(world: Payouts) -> Counter[PayoutState]:
    return Counter(a.state for a in world.journal.recent(limit=1000))


def test_a_head_an_hour_ahead_while_transfers_are_pending_signs_and_judges_nothing(world):
    """Finding 1: three transfers accepted, the chain paused, then the node's head and
    solidified block (and its blocks by number: a coherent liar) an hour ahead. They used
    to be judged expired and signed again; on resume all six executed."""
    rows = world.rows(world.recipients(3))
    world.chain.control.post("/chain/pause")
    assert send(world, rows).accepted == 3
    head, solid = world.node.get_now_block(), world.node.get_solid_block()
    ahead = {"block_header__raw_data__timestamp": str(head.timestamp_ms + HOUR_MS)}
    solid_ahead = {"block_header__raw_data__timestamp": str(solid.timestamp_ms + HOUR_MS)}
    tamper(world, "/wallet/getnowblock", **ahead)
    tamper(world, "/wallet/getblockbynum", **ahead)
    tamper(world, "/walletsolidity/getnowblock", **solid_ahead)
    tamper(world, "/walletsolidity/getblockbynum", **solid_ahead)
    with pytest.raises(UnreliableNode, match="ahead of this worker's clock"):
        send(world, rows)
    with pytest.raises(UnreliableNode, match="ahead of this worker's clock"):
        world.watch().step()
    assert states(world) == Counter({PayoutState.SENT: 3})
    world.chain.control.clear_faults()
    world.chain.control.post("/chain/resume")
    assert settle(world).confirmed == 3
    assert world.successes_per_recipient() == Counter(r.recipient for r in rows)
    assert len(world.on_chain()) == 3


def test_a_receipt_for_a_transaction_the_node_refused_is_not_a_confirmation(world):
    """Finding 2: the broadcast refused (503), then the node shows a SUCCESS receipt for
    that txID in a real block: the journal said confirmed, nothing was on chain, and the
    payout was never paid. Now the receipt's block, read by number, must hold it."""
    rows = world.rows(world.recipients(1))
    refusing = world.chain.control.fault(kind="error", path="/wallet/broadcasthex",
                                         status=503)
    assert send(world, rows).accepted == 0
    [attempt] = world.journal.batch("b1")
    head = world.node.get_now_block()
    tamper(world, "/wallet/gettransactioninfobyid", id=f'"{attempt.txid}"',
           blockNumber=str(head.number), blockTimeStamp=str(head.timestamp_ms),
           receipt='{"result": "SUCCESS", "energy_usage": 64285, '
                   '"energy_usage_total": 64285, "net_usage": 345}')
    world.chain.blocks(5)  # one payout, five blocks: the watch reads its receipt by id
    watch = world.watch()
    status = watch.step()
    assert (status.confirmed, status.in_flight, status.unreliable) == (0, 1, 1)
    assert world.journal.batch("b1")[0].state is PayoutState.SIGNED
    assert world.on_chain() == []
    world.chain.control.clear_faults()
    assert refusing["id"]  # removed with the rest: the node tells the truth again
    watch.step()  # sends the same bytes again
    assert settle(world).confirmed == 1
    assert world.successes_per_recipient() == Counter([rows[0].recipient])
    assert [a.txid for a in world.journal.history(rows[0].identity)] == [attempt.txid]


def test_a_receipt_with_invented_figures_is_not_recorded(world):
    rows = world.rows(world.recipients(1))
    send(world, rows)
    world.chain.blocks(1)
    tamper(world, "/wallet/gettransactioninfobyblocknum",
           **{"0__receipt__energy_fee": "9000000", "0__fee": "30000000"})
    watch = world.watch()
    status = watch.step()
    assert (status.confirmed, status.in_flight, status.unreliable) == (0, 1, 1)
    assert world.journal.batch("b1")[0].receipt is None
    world.chain.control.clear_faults()
    assert watch.step().confirmed == 1  # the same watch reads that block again
    receipt = world.journal.batch("b1")[0].receipt
    price = world.node.get_chain_parameters().energy_fee
    assert receipt["trx_burned_sun"] < 30_000_000
    assert receipt["energy_burned"] * price <= receipt["trx_burned_sun"]
    assert world.successes_per_recipient() == Counter([rows[0].recipient])


def test_a_fee_beyond_energy_bandwidth_and_the_multi_sign_fee_is_not_recorded(world):
    """The fee may exceed the energy and bandwidth fees by the chain's getMultiSignFee (a
    transfer signed by several keys), by nothing else."""
    rows = world.rows(world.recipients(1))
    send(world, rows)
    world.chain.blocks(1)
    [attempt] = world.journal.batch("b1")
    fee = int(world.chain.info(attempt.txid)["fee"])
    tamper(world, "/wallet/gettransactioninfobyblocknum", **{"0__fee": str(fee + 500_000)})
    watch = world.watch()
    assert (watch.step().confirmed, world.journal.batch("b1")[0].receipt) == (0, None)
    world.chain.control.clear_faults()
    assert watch.step().confirmed == 1
    assert world.journal.batch("b1")[0].receipt["trx_burned_sun"] == fee


def test_a_multi_sign_fee_on_a_transfer_signed_by_one_key_is_not_recorded(world):
    """The chain charges getMultiSignFee only on more than one signature: a receipt of a
    transfer the journal holds signed by one key, its fee the multi-sign fee higher, is
    not the chain's (it was recorded: either fee was taken for any transfer)."""
    rows = world.rows(world.recipients(1))
    send(world, rows)
    world.chain.blocks(1)
    [attempt] = world.journal.batch("b1")
    assert attempt.signatures == 1
    fee = int(world.chain.info(attempt.txid)["fee"])
    multi_sign = world.node.get_chain_parameters().multi_sign_fee
    assert multi_sign > 0
    tamper(world, "/wallet/gettransactioninfobyblocknum", **{"0__fee": str(fee + multi_sign)})
    watch = world.watch()
    assert (watch.step().confirmed, world.journal.batch("b1")[0].receipt) == (0, None)
    world.chain.control.clear_faults()
    assert watch.step().confirmed == 1
    assert world.journal.batch("b1")[0].receipt["trx_burned_sun"] == fee


def test_a_head_thirty_days_ahead_signs_nothing(world):
    """Finding 3: one head answer 30 days ahead was signed into a transfer expiring 30
    days later, which the chain refuses until then (and `resolve --resend` too)."""
    rows = world.rows(world.recipients(1))
    head = world.node.get_now_block()
    world.chain.control.fault(kind="tamper", path="/wallet/getnowblock", count=1, patch={
        "block_header.raw_data.timestamp": str(head.timestamp_ms + 30 * 24 * HOUR_MS)})
    with pytest.raises(UnreliableNode, match="ahead of this worker's clock"):
        send(world, rows)
    assert world.journal.recent() == []
    sent = send(world, rows)  # the next answer is the chain's
    assert sent.accepted == 1
    [attempt] = world.journal.batch("b1")
    assert attempt.expiration_ms is not None
    assert attempt.expiration_ms <= world.chain.clock() * 1000 + MAX_EXPIRATION_S * 1000
    assert settle(world).confirmed == 1
    assert world.successes_per_recipient() == Counter([rows[0].recipient])


def test_a_head_its_own_block_by_number_contradicts_signs_nothing(world):
    """A head whose id is not the id of that block read by number (a fork, a forgery):
    a transfer referencing it would be refused, or reference another chain."""
    rows = world.rows(world.recipients(1))
    head = world.node.get_now_block()
    forged = head.block_id[:16] + "ab" * 24
    assert forged != head.block_id
    tamper(world, "/wallet/getnowblock", blockID=f'"{forged}"')
    with pytest.raises(UnreliableNode, match="not the block it returns by number"):
        send(world, rows)
    assert world.journal.recent() == []
    world.chain.control.clear_faults()
    assert send(world, rows).accepted == 1
    assert settle(world).confirmed == 1


def test_a_head_older_than_a_journaled_reference_signs_nothing(world):
    """A node that lags behind the block a journaled transfer references by more than the
    tolerance (another node behind a load balancer, a minute behind) is not believed: its
    head would make that transfer look unknown to the chain."""
    rows = world.rows(world.recipients(2))
    send(world, rows[:1])
    [first] = world.journal.batch("b1")
    assert first.ref_block is not None
    world.chain.blocks(40)
    lagging = first.ref_block - 30  # 90 s behind it: more than the 60 s tolerance
    old = world.chain.tron.get_block(lagging)
    tamper(world, "/wallet/getnowblock", blockID=f'"{old["blockID"]}"',
           block_header__raw_data__number=str(lagging),
           block_header__raw_data__timestamp=str(
               old["block_header"]["raw_data"]["timestamp"]))
    with pytest.raises(UnreliableNode, match="below block"):
        send(world, rows)
    world.chain.control.clear_faults()
    assert send(world, rows).signed == 1
    assert settle(world).confirmed == 2


def test_the_expiration_is_never_past_the_workers_clock_plus_24_hours(world):
    """A head within the tolerance but ahead of the worker's clock: the longest expiration
    is counted from the worker's clock, not the head's."""
    rows = world.rows(world.recipients(1))
    behind = world.chain.clock() - 30  # the worker's clock 30 s behind the chain's

    sender = world.sender(expiration_s=MAX_EXPIRATION_S, clock=lambda: behind)
    head = world.node.get_now_block()
    assert send(world, rows, sender=sender).accepted == 1
    [attempt] = world.journal.batch("b1")
    assert attempt.expiration_ms == int(behind * 1000) + MAX_EXPIRATION_S * 1000
    assert attempt.expiration_ms < head.timestamp_ms + MAX_EXPIRATION_S * 1000
    assert settle(world).confirmed == 1


@pytest.mark.parametrize("answer", [
    {"kind": "tamper", "patch": {"code": '"TAPOS_ERROR"', "message": '"Tapos check error."'}},
    {"kind": "tamper", "patch": {"code": '"DUP_TRANSACTION_ERROR"'}},
    {"kind": "error", "status": 503},
], ids=["tapos", "duplicate", "no-answer"])
def test_an_expired_attempt_whose_bytes_are_not_refused_as_expired_is_not_signed_anew(
        world, answer):
    """Proof of expiry: past it on a solidified block read by number, no receipt there,
    and the old bytes offered again refused as expired. Any other answer: wait."""
    rows = world.rows(world.recipients(2))
    never = LostAnswers(world.node, delivered=False)
    send(world, rows, node=never, expiration_s=30)
    old = {a.identity: a.txid for a in world.journal.batch("b1")}
    world.chain.blocks(32)  # a solidified block is past the expiration
    world.chain.control.fault(path="/wallet/broadcasthex", **answer)
    waiting = send(world, rows)
    assert (waiting.signed, waiting.count(Step.WAIT)) == (0, 2)
    assert all(a.attempt == 1 and a.state.in_flight() for a in world.journal.batch("b1"))
    world.chain.control.clear_faults()
    fresh = send(world, rows)
    assert fresh.signed == 2
    assert settle(world).confirmed == 2
    for identity, txid in old.items():
        history = world.journal.history(identity)
        assert [a.state for a in history] == [PayoutState.EXPIRED, PayoutState.CONFIRMED]
        assert history[0].txid == txid and "refused the bytes as expired" in history[0].note
    assert world.successes_per_recipient() == Counter(r.recipient for r in rows)


def test_a_confirming_node_that_disagrees_keeps_the_attempt_waiting(world):
    """With a second node: it must see a solidified block past the expiration too. One
    that lags (its solidified block older, coherent by number) holds the new signature."""
    rows = world.rows(world.recipients(2))
    second = TronNodeClient(world.chain.sandbox.root_url, api_key="second-node",
                            usdt_contract=USDT, max_retries=0)
    try:
        never = LostAnswers(world.node, delivered=False)
        send(world, rows, node=never, expiration_s=30)
        lagging = world.node.get_solid_block()
        world.chain.blocks(32)
        fault = tamper(world, "/walletsolidity/getnowblock", api_key="second-node",
                       blockID=f'"{lagging.block_id}"',
                       block_header__raw_data__number=str(lagging.number),
                       block_header__raw_data__timestamp=str(lagging.timestamp_ms))
        assert world.node.get_solid_block().number > lagging.number  # the first one's is real
        waiting = send(world, rows, confirm_node=second)
        assert (waiting.signed, waiting.count(Step.WAIT), waiting.unreliable) == (0, 2, 2)
        assert all(a.state.in_flight() for a in world.journal.batch("b1"))
        world.chain.control.call("DELETE", f"/faults/{fault}")
        fresh = send(world, rows, confirm_node=second)
        assert fresh.signed == 2
        assert settle(world).confirmed == 2
        assert all("confirming node agrees" in (h[0].note or "") for h in (
            world.journal.history(r.identity) for r in rows))
        assert world.successes_per_recipient() == Counter(r.recipient for r in rows)
    finally:
        second.close()


def test_a_replica_a_block_behind_is_still_believed(world):
    """Nodes behind one load balancer differ by a block or two: a head one block below the
    newest journaled reference is within the tolerance, not a lie."""
    rows = world.rows(world.recipients(2))
    send(world, rows[:1])
    [first] = world.journal.batch("b1")
    assert first.ref_block is not None
    old = world.chain.tron.get_block(first.ref_block - 1)
    tamper(world, "/wallet/getnowblock", blockID=f'"{old["blockID"]}"',
           block_header__raw_data__number=str(first.ref_block - 1),
           block_header__raw_data__timestamp=str(
               old["block_header"]["raw_data"]["timestamp"]))
    assert send(world, rows).signed == 1
    world.chain.control.clear_faults()
    assert settle(world).confirmed == 2
    assert world.successes_per_recipient() == Counter(r.recipient for r in rows)
