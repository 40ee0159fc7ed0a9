"""The README's main-job command keeps working: run it as a user would and read its report,
then check what it says against the sandbox chain's own records and the deposit ledger."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import requests
from tronpy.keys import PrivateKey

from support.ports import release_port, reserve_port

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / ".main-job"
RUN_RECORDING_THE_KEY = """
import runpy, sys
from pathlib import Path
from tronpy import keys

record, script = Path(sys.argv[1]), sys.argv[2]
generate = keys.PrivateKey.random

def random():
    key = generate()
    record.write_text(key.hex())
    return key

keys.PrivateKey.random = staticmethod(random)
sys.argv, sys.path[0] = [script], str(Path(script).parent)
runpy.run_path(script, run_name="__main__")
"""
"""``python scripts/main_job.py``, except that the key the job generates is also written to
the test's own file, so the test can look for it everywhere the job wrote."""
SENT_ROW = re.compile(r"^    (?P<recipient>T\w{33}) +(?P<tx>[0-9a-f]{16})\.\.\. +(?P<block>\d+) +"
                      r"(?P<charged>[\d,]+) +(?P<stake>[\d,]+) +(?P<burned>[\d,]+) +"
                      r"(?P<trx>[\d.]+)  (?P<state>\w+)$", re.MULTILINE)


def number(text: str) -> int:
    return int(text.replace(",", ""))


@pytest.mark.slow
def test_main_job_runs_end_to_end(tmp_path: Path) -> None:
    """``bash scripts/main.sh`` minus the venv step (this suite already runs in it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "TRONENERGY"))}
    record = tmp_path / "key"
    result = subprocess.run([sys.executable, "-c", RUN_RECORDING_THE_KEY, str(record),
                             str(ROOT / "scripts" / "main_job.py")], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=900)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "transfers prepared      9" in output
    assert "recipients activated    2 (2.2 TRX)" in output
    # On chain (the sandbox is also the node): 3 x 64,285 + 4 x 130,285 = 713,995 for USDT
    # and 59,262 for the DEMO payout (its own contract's estimate; the TRX one needs none):
    # 773,257 needed, 259,262 staked on hand, so one order of the 513,995 missing,
    # confirmed in a block before publishing.
    assert "energy needed           773,257 energy (8 transfers estimated by the node)" in output
    assert "energy on hand used     259,262 energy" in output
    assert ("by token                USDT: 7 paying 1088.5, 713,995 energy; DEMO: 1 paying "
            "42.000000000000000001, 59,262 energy; TRX: 1 paying 12.5, 0 energy") in output
    assert re.search(r"energy rented\s+513,995 energy for 1 h in 1 order:", output)
    # The delegation and the payouts are confirmed on solidified blocks (the defaults),
    # and the report says so.
    assert re.search(r"confirmed on chain: tx [0-9a-f]{16}\.\.\. in block \d+ \(solidified\)",
                     output)
    assert "confirmed on  solidified blocks (final: no fork can leave them)" in output
    # 59,262 more staked for the DEMO payout in the batch (on hand, used by the plan).
    assert "energy available after  773,257 energy" in output
    assert ("burn prices             100 sun per energy (chain), 1000 sun per bandwidth byte "
            "(chain), 1.1 TRX per account (chain); USDT energy factor 34000 (chain)") in output
    # Issue 25: renting saved burning the 513,995 energy it provided (51.3995 TRX at 100 sun)
    # less its cost (0.45 per 10,000: 23.129775), not burning all 773,257 (the 259,262 on
    # hand were never rented).
    assert "PREDICTED by batch_payout_preparation" in output
    assert re.search(r"money, predicted\s+TRX  what it compares", output)
    assert re.search(r"paid for energy\s+23\.129775  ", output)
    assert re.search(r"burning instead\s+51\.3995  the 513,995 energy renting provided", output)
    assert re.search(r"saved by renting\s+28\.269725  .*\(burning costs 2\.22x as much\)", output)
    assert re.search(r"renting it all\s+34\.796565  ", output)
    assert re.search(r"saved by energy on hand\s+11\.66679  ", output)
    assert re.search(r"burning it all\s+77\.3257  ", output)
    assert re.search(r"total spent\s+25\.329775  ", output)
    # The recipients' energy cost sums to what was paid (not to renting it all), and every
    # table says its units.
    assert re.search(r"recipient\s+amount\s+energy\s+energy cost\s+activated\n\s+USDT\s+"
                     r"energy\s+TRX\n", output)
    assert re.search(r"\n    total\s+1088\.5\s+773,257\s+23\.129775\s+2\n", output)
    # The purchase's log line shows the exact cost, as the report does.
    assert re.search(r"bought 513,995 energy for T\w+ \(1 h\): order \w+, 23\.129775 TRX "
                     r"\(burning would cost 51\.3995 TRX", output)
    # No colour codes and no raw log lines in the report (its output is a pipe, not a tty).
    assert "\x1b[" not in output
    assert "loc=" not in output and "[info" not in output
    assert "Returned value was" not in output

    # The hot wallet is the key the job generated.
    key = PrivateKey(bytes.fromhex(record.read_text()))
    sender = key.public_key.to_base58check_address()
    assert re.search(rf"hot wallet {sender}: a key generated by this job", output)
    sent = sent_section(output)
    chain = chain_transactions(sender)
    # One transfer per recipient on chain, each confirmed in the report with the chain's tx,
    # block and receipt figures: the seven USDT payouts, one of the sandbox's 18-decimal DEMO
    # token and one of TRX, all prepared from one sheet, each exact to its smallest unit.
    assert sorted(chain) == sorted(sent) and len(sent) == 9
    tokens = Counter(tx["token"] for tx in chain.values())
    demo = next(tx for tx in chain.values() if tx["token"] not in ("USDT", "TRX"))
    trx = next(tx for tx in chain.values() if tx["token"] == "TRX")
    assert tokens == {"USDT": 7, demo["token"]: 1, "TRX": 1}
    assert demo["amount"] == "42000000000000000001" and trx["amount"] == "12500000"
    assert trx["info"]["fee"] == 1_100_000  # its recipient's account created (1 + 0.1 TRX)
    assert "payouts by token        7 USDT, 1 DEMO, 1 TRX (the first run's transactions on " \
        "chain)" in output
    for recipient, row in sent.items():
        tx = chain[recipient]
        receipt = tx["info"]["receipt"]
        assert row["state"] == "confirmed"
        assert tx["txid"].startswith(row["tx"]) and number(row["block"]) == tx["block"]
        assert number(row["charged"]) == receipt.get("energy_usage_total", 0)
        assert (number(row["charged"]) > 0) == (tx["token"] != "TRX")
        assert number(row["stake"]) == receipt.get("energy_usage", 0)
        assert number(row["burned"]) == 0 and "energy_fee" not in receipt
        assert Decimal(row["trx"]) == Decimal(tx["info"].get("fee", 0)) / 10**6
    fees = sum(Decimal(tx["info"].get("fee", 0)) for tx in chain.values()) / 10**6
    # The batch, measured on chain against the preparation's prediction.
    assert re.search(r"energy rented\s+513,995\s+-\s+energy  ", output)
    assert re.search(r"energy charged\s+773,257\s+773,257\s+energy  ", output)
    assert re.search(r"charged / rented\s+1\.5044\s+-\s+ratio  ", output)
    assert re.search(r"from the rental\s+513,995\s+513,995\s+energy  ", output)
    assert re.search(rf"TRX burned anyway\s+{re.escape(str(fees.normalize()))}\s+-\s+TRX  ",
                     output) and fees > 0  # bandwidth beyond the free bytes
    assert re.search(r"rental cost\s+23\.129775\s+-\s+TRX  ", output)
    assert re.search(r"burning the rental used\s+51\.3995\s+51\.3995\s+TRX  ", output)
    assert re.search(r"saved by renting\s+28\.269725\s+28\.269725\s+TRX\s+TRX: "
                     r"burn_cost_of_rental_used - rental_cost.*measured on chain", output)
    # The second send run made no transaction, counted on the chain.
    assert re.search(r"first run of batch_payout_send: 9 new transactions from the hot wallet "
                     r"on chain \(0 before, 9 after", output)
    assert re.search(r"second run of batch_payout_send: 0 new transactions from the hot wallet "
                     r"on chain \(9 before, 9 after", output)
    assert "transactions sent       9 by the first run, 0 by the second" in output
    # The payout to the deposit address was credited once, from the payout's own transaction.
    (deposit,) = re.findall(r"the payout to deposit address (T\w{33}) arrives", output)
    assert deposit in sent
    with sqlite3.connect(WORK / "deposits.db") as db:
        credited = db.execute("SELECT tx_hash, amount, token, to_address "
                              "FROM credited_deposits").fetchall()
    assert credited == [(chain[deposit]["txid"], "155.5", "USDT", deposit)]
    assert (f"deposits credited       1: 155.5 USDT to {deposit} (tx "
            f"{chain[deposit]['txid'][:16]}..., the payout to it)") in output
    assert "second run credited 0" in output
    # The key is in no output and no file the job wrote.
    secrets = [key.hex().encode(), key.hex().upper().encode(), bytes.fromhex(key.hex())]
    assert not any(s.decode("latin-1") in output for s in secrets)
    written = [p for p in WORK.rglob("*") if p.is_file()]
    assert len(written) > 10 and any(p.name == "dag-send-1.log" for p in written)
    for path in written:
        content = path.read_bytes()
        assert not any(s in content for s in secrets), path
    # The closing lines say where the same figures are in the Airflow UI, and they are there.
    assert "see it in the Airflow UI: `bash scripts/ui.sh`" in output
    assert "<[api] base_url>/tronenergy-ui/energy (docs/energy-page.md" in output
    page = energy_page_of_the_job(env)
    totals = page["spend"]["totals"]
    assert (totals["spent_trx"], totals["saving_trx"], totals["energy"],
            totals["activations"]) == ("25.329775", "28.269725", 513_995, 2)
    assert (page["chain"]["energy_rented"], page["chain"]["energy_charged"],
            Decimal(page["chain"]["trx_burned"])) == (513_995, 773_257, fees)
    [batch] = page["batches"]["batches"]
    assert batch["sender"] == sender and batch["recipients"] == 9  # one sheet: 7 + DEMO + TRX
    assert batch["sent"]["states"] == {"confirmed": 9}
    assert page["waiting"] == {"purchases": {"count": 0, "listed": []},
                               "payouts": {"count": 0, "listed": []}}
    assert [c["behind"] for c in page["deposits"]["lag"]["consumers"]] == [0, 0]
    # Everything it started is stopped: the sandbox and the receiver no longer answer.
    urls = re.findall(r"listening on (http://\S+)", output)
    assert len(urls) == 2, urls
    for url in urls:
        with pytest.raises(requests.ConnectionError):
            requests.get(url, timeout=2)


def sent_section(output: str) -> dict[str, dict[str, str]]:
    """The report's per-recipient rows of what the chain measured, by recipient."""
    section = output.split("MEASURED on chain by batch_payout_send", 1)[1]
    section = section.split("\n    total ", 1)[0]
    return {m["recipient"]: m.groupdict() for m in SENT_ROW.finditer(section)}


def chain_transactions(sender: str) -> dict[str, dict[str, Any]]:
    """The sandbox chain's executed transactions from ``sender``, by recipient (its state file:
    the sandbox is stopped)."""
    with sqlite3.connect(WORK / "sandbox.sqlite") as db:
        rows = db.execute("SELECT txid, to_address, block_number, status, info, token, amount "
                          "FROM chain_transactions WHERE owner = ?", (sender,)).fetchall()
    assert all(row[3] == "executed" for row in rows), rows
    found = {row[1]: {"txid": row[0], "to": row[1], "block": row[2],
                      "info": json.loads(row[4]), "token": row[5], "amount": str(row[6])}
             for row in rows}
    assert len(found) == len(rows)  # one per recipient
    return found


def energy_page_of_the_job(env: dict[str, str]) -> dict[str, Any]:
    """``bash scripts/ui.sh`` minus the venv step: the page's figures (``energy.json``), read
    as the UI's own sign-in (all admins there) gets them."""
    port = reserve_port()  # main_ui.py's api-server binds it (support.ports)
    root = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "main_ui.py"),
                               "--port", str(port)], cwd=ROOT, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if requests.get(f"{root}/api/v2/version", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "no API server"
            time.sleep(0.5)
        token = requests.get(f"{root}/auth/token", timeout=10).json()["access_token"]
        answer = requests.get(f"{root}/tronenergy-ui/energy.json", timeout=30,
                              headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.text[:2000]
        return dict(answer.json())
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        release_port(port)
