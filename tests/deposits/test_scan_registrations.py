"""Where the deposit scan starts: the registrations the provider recorded (issue 45).

On the sandbox's chain over real HTTP, into SQLite and PostgreSQL ledgers: a first run
starts at the earliest registration of its addresses (no start given), the earlier of it
and a given start otherwise; an address given to the scan after its checkpoint passed the
address's registration is read back to it once (a backfill), paged, resumable after a
killed worker, never repeated; a registration time becomes the first block at or after it
less the margin, exactly.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy.deposits import registrations
from airflow_provider_tronenergy.deposits.ledger import DepositLedger
from airflow_provider_tronenergy.deposits.registrations import MARGIN_MS, first_block_at
from airflow_provider_tronenergy.deposits.scan.checkpoint import BACKFILLS, Checkpoints
from airflow_provider_tronenergy.deposits.scan.core import DepositScan, ScanSettings
from support.control import Control
from tronenergy_protocol.address import random_address

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
SCOPE = f"USDT:{USDT}"
FAST = {"max_requests_per_second": 1000, "max_concurrency": 4}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def ledger(request, tmp_path):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'ledger.db'}"
    else:
        schema = request.getfixturevalue("pg_schema")
        url = sa.engine.make_url(request.getfixturevalue("postgres_url")).update_query_dict(
            {"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
    with DepositLedger(url) as ledger:
        yield ledger


def place(chain, transfers):
    return Control(chain.sandbox).post("/chain/blocks/transfers",
                                       {"transfers": transfers})["transactions"]


def keys(ledger):
    return sorted((c.tx_hash, c.log_index) for c in ledger.credits())


@pytest.mark.parametrize("start", ["solid", "before", "after"])
def test_a_first_run_starts_at_the_earliest_registration_of_its_addresses(chain, node, ledger,
                                                                         start):
    """Registered, paid, every callback lost, before the scan's first run: credited with
    no start given ("solid"); a given start earlier than the registration wins, a later
    one does not."""
    watched, elsewhere = random_address(), random_address()
    solid = node.get_solid_block().number
    registered = solid - 50
    ledger.register([watched], block=registered, registered_by="register-run")
    ledger.register([elsewhere], block=solid - 90)  # not watched by this scan: no say
    placed = place(chain, [{"block": solid - 30, "to": watched, "units": 4_000_000}])
    given = {"solid": "solid", "before": registered - 10, "after": registered + 5}[start]
    report = DepositScan(ledger, node, [watched],
                         settings=ScanSettings(start=given, **FAST)).run()
    assert report.first_block == min(registered, registered - 10 if start == "before"
                                     else registered)
    assert [t.tx_hash for t in report.credited] == [placed[0]["txid"]]
    assert report.backfill_blocks == 0 and report.backfill_pending == 0


def test_an_address_added_after_the_checkpoint_is_backfilled_once(chain, node, ledger):
    """B registered at block R, paid between R and the checkpoint of a scan that did not
    watch it yet: the scan given B reads R to that checkpoint for B alone, once; a
    transfer into B before R is not looked for; the next run credits nothing again."""
    a, b = random_address(), random_address()
    solid = node.get_solid_block().number
    scan_a = DepositScan(ledger, node, [a], settings=ScanSettings(start=solid - 100, **FAST))
    assert scan_a.run().last_block == solid
    registered = solid - 60
    ledger.register([b], block=registered)
    before, between, later = place(chain, [
        {"block": registered - 5, "to": b, "units": 1},  # before it was registered
        {"block": solid - 40, "to": b, "units": 2_000_000},
        {"block": solid + 5, "to": b, "units": 3_000_000}])
    chain.blocks(30)
    both = DepositScan(ledger, node, [a, b], settings=ScanSettings(page_blocks=25, **FAST))
    report = both.run(credited_by="scan-2")
    assert report.first_block == solid + 1  # the checkpoint goes on as before
    assert report.backfill_blocks == solid - registered + 1
    assert report.backfill_pending == 0
    assert sorted(t.tx_hash for t in report.credited) == sorted(
        [between["txid"], later["txid"]])
    assert before["txid"] not in {k for k, _ in keys(ledger)}
    chain.blocks(5)
    again = both.run()
    assert again.credited == () and again.backfill_blocks == 0
    assert keys(ledger) == sorted([(between["txid"], 0), (later["txid"], 0)])
    assert {c.source for c in ledger.credits()} == {"scan"}


def test_a_long_backfill_is_paged_within_the_runs_block_limit_and_goes_on(chain, node,
                                                                          ledger):
    """A backfill longer than ``max_blocks_per_run`` reads that many blocks a run and the
    next run goes on where the last page ended, each deposit credited once; a deposit
    the callback path credited first is not credited again."""
    a, b = random_address(), random_address()
    solid = node.get_solid_block().number
    DepositScan(ledger, node, [a], settings=ScanSettings(start=solid - 5, **FAST)).run()
    ledger.register([b], block=solid - 150)
    placed = place(chain, [{"block": solid - 150 + 12 * i, "to": b, "units": 10 + i}
                           for i in range(12)])
    first_callback = node.get_block_token_transfers(solid - 150, solidified=True).transfers
    assert ledger.credit(first_callback, token="USDT", source="callback") != []
    settings = ScanSettings(max_blocks_per_run=60, page_blocks=20, **FAST)
    runs = [DepositScan(ledger, node, [a, b], settings=settings).run() for _ in range(4)]
    assert [r.backfill_blocks for r in runs] == [60, 60, 31, 0]
    assert [r.backfill_pending for r in runs] == [1, 1, 0, 0]
    assert sum(len(r.credited) for r in runs) == 11
    assert keys(ledger) == sorted((p["txid"], 0) for p in placed)
    with ledger.engine.connect() as conn:
        assert conn.execute(sa.select(BACKFILLS.c.next_block, BACKFILLS.c.to_block).where(
            BACKFILLS.c.address == b)).one() == (solid + 1, solid)


def test_registering_again_keeps_the_earliest_and_removal_leaves_it(ledger):
    address = random_address()
    ledger.register([address], block=500, registered_by="first")
    ledger.register([address], block=900, registered_by="second")
    ledger.register([address], at_ms=2_000_000)
    ledger.register([address], at_ms=3_000_000)
    [row] = ledger.registrations([address, random_address()]).values()
    assert (row.block, row.at_ms, row.at_block, row.registered_by) == (
        500, 2_000_000, None, "first")
    registrations.resolved(ledger.db, {2_000_000: 450})
    ledger.register([address], at_ms=2_500_000)  # later: the resolved block stays
    assert ledger.registrations([address])[address].first_block() == 450
    ledger.register([address], at_ms=1_000_000)  # earlier: read as a block again
    row = ledger.registrations([address])[address]
    assert (row.at_ms, row.at_block, row.first_block()) == (1_000_000, None, 500)
    with pytest.raises(ValueError, match="exactly one"):
        ledger.register([address], block=1, at_ms=1)


def test_a_registration_time_is_the_first_block_at_or_after_it_less_the_margin(chain, node,
                                                                              ledger):
    """No node at registration: the worker's time. The scan reads it as the first block
    whose timestamp is at or after the time less ``MARGIN_MS``, checked here against the
    blocks on either side; a deposit after it is credited by a first run."""
    address, ahead = random_address(), random_address()
    solid = node.get_solid_block().number
    at_ms = node.get_block(solid - 300, solidified=True).block.timestamp_ms + 1
    ledger.register([address], at_ms=at_ms)
    ledger.register([ahead], at_ms=at_ms + 2 * MARGIN_MS + 3_600_000)  # a clock far ahead
    placed = place(chain, [{"block": solid - 299, "to": address, "units": 7}])
    report = DepositScan(ledger, node, [address, ahead],
                         settings=ScanSettings(**FAST)).run()
    assert ledger.registrations([ahead])[ahead].at_block is None  # read again next run
    with ledger.engine.connect() as conn:
        assert conn.execute(sa.select(BACKFILLS.c.address)).scalars().all() == [address]
    resolved = ledger.registrations([address])[address].at_block
    assert resolved is not None and report.first_block == resolved
    assert node.get_block(resolved, solidified=True).block.timestamp_ms >= at_ms - MARGIN_MS
    assert node.get_block(resolved - 1, solidified=True).block.timestamp_ms < at_ms - MARGIN_MS
    assert [t.tx_hash for t in report.credited] == [placed[0]["txid"]]
    assert Checkpoints(ledger.db).read(SCOPE) == report.last_block


@pytest.mark.parametrize(("times", "at_ms", "expected"), [
    ([100, 200, 300, 900, 1200], 900 + MARGIN_MS, 4),  # exactly a block's time
    ([100, 200, 300, 900, 1200], 301 + MARGIN_MS, 4),  # between two blocks: the later
    ([100, 200, 300, 900, 1200], 50 + MARGIN_MS, 1),  # before the first: the first
    ([100, 200, 300, 900, 1200], 1201 + MARGIN_MS, None),  # after the tip: not yet
    ([5], 5 + MARGIN_MS, 1),
])
def test_first_block_at_is_exact(times, at_ms, expected):
    reads: list[int] = []

    def timestamp_of(number: int) -> int:
        reads.append(number)
        return times[number - 1]

    assert first_block_at(timestamp_of, at_ms, len(times), times[-1]) == expected
    assert len(reads) <= 3
