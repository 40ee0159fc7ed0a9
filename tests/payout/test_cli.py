"""tronenergy-payouts: list, show with receipts, and a person's decision on a failed payout."""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.payout.cli import main
from airflow_provider_tronenergy.payout.journal import Claim, PayoutJournal, PayoutState, Signed

SENDER = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
TO = "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"


@pytest.fixture
def url(tmp_path):
    url = f"sqlite:///{tmp_path / 'j.db'}"
    journal = PayoutJournal(url)
    [a], _ = journal.claim([Claim("id:p1", None, "b", 0, SENDER, TO, "USDT", 5)], "w1")
    journal.record_signed([Signed(a, "ab" * 32, 10, 1, 1000, {"txID": "ab" * 32})])
    journal.record_outcomes([(journal.batch("b")[0], False, 77, {
        "result": "OUT_OF_ENERGY", "energy_total": 100000, "energy_from_stake": 0,
        "energy_burned": 100000, "trx_burned": "10", "bandwidth": 345})])
    journal.close()
    return url


def test_list_failed_and_show_the_receipt(url, capsys):
    assert main(["--journal", url, "list", "--failed"]) == 0
    out = capsys.readouterr().out
    assert "FAILED" in out and "id:p1" in out and "OUT_OF_ENERGY" in out
    assert main(["--journal", url, "show", "id:p1"]) == 0
    assert "block 77" in capsys.readouterr().out
    assert main(["--journal", url, "show", "id:nope"]) == 1


def test_resend_lets_the_next_run_sign_it_once(url, capsys):
    assert main(["--journal", url, "resolve", "id:p1", "--resend", "--reason", "energy "
                 "refilled", "--by", "ops"]) == 0
    assert "new transaction" in capsys.readouterr().out
    journal = PayoutJournal(url)
    [a] = journal.history("id:p1")
    assert (a.state, a.resolved_by, a.note) == (PayoutState.RESEND, "ops", "energy refilled")
    assert main(["--journal", url, "resolve", "id:p1", "--cancel", "--reason", "x"]) == 1
    assert "nothing to resolve" in capsys.readouterr().err
    journal.close()


def test_a_reason_is_required(url, capsys):
    with pytest.raises(SystemExit):
        main(["--journal", url, "resolve", "id:p1", "--cancel"])
    assert main(["--journal", url, "resolve", "id:p1", "--cancel", "--reason", " "]) == 2


def test_show_names_each_payouts_token_and_the_trx_burned_by_kind(tmp_path, capsys):
    from support.journaled import journaled, receipt

    url = f"sqlite:///{tmp_path / 'tokens.db'}"
    journal = PayoutJournal(url)
    contract = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
    journaled(journal, [("TRX", 2_500_000, receipt(1_100_000, 100_000, 0), 1),
                        ("USDT", 1_500_000, receipt(13_345_000, 345_000, 13_000_000), 1),
                        (contract, 10 ** 20 + 1, receipt(345_000, 345_000, 0), 1)])
    journal.close()
    assert main(["--journal", url, "show", "id:b-0"]) == 0
    out = capsys.readouterr().out
    assert "2.5 TRX to" in out
    assert "TRX burned 1.1 (bandwidth 0.1, account_creation 1)" in out
    assert main(["--journal", url, "show", "id:b-1"]) == 0
    out = capsys.readouterr().out
    assert "1.5 USDT to" in out and "(energy 13, bandwidth 0.345)" in out
    assert main(["--journal", url, "show", "id:b-2"]) == 0  # the journal keeps no decimals
    assert f"{10 ** 20 + 1} units of token {contract} to" in capsys.readouterr().out
