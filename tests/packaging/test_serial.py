"""The end-to-end deployments run on one xdist worker, one after another, and only they.

They share PostgreSQL, Redis and the machine; ``tests/support/serial.py`` names them and
hands xdist a scheduler that makes them one unit of work (xdist's own ``loadgroup`` no
longer groups on pytest 9.2). Every other test is a unit of its own.
"""

from __future__ import annotations

from pathlib import Path

from support.serial import SERIAL, SerialGroupScheduling, is_serial, left_out

ROOT = Path(__file__).resolve().parents[2]


def test_the_deployments_are_one_unit_of_work_and_nothing_else_is():
    split = SerialGroupScheduling._split_scope
    e2e = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "tests" / "e2e").glob("test_*.py"))
    assert len(e2e) >= 3, e2e
    assert {split(None, f"{path}::test_x[1]") for path in e2e} == {"serial"}  # type: ignore[arg-type]
    others = ["tests/callbacks/test_limits.py::test_a", "tests/main_job/test_main_job.py::test_b"]
    assert [split(None, node) for node in others] == others  # type: ignore[arg-type]


def test_every_serial_prefix_names_a_folder_of_tests():
    assert all((ROOT / prefix).is_dir() for prefix in SERIAL)
    assert is_serial("tests/e2e/test_real_deployment.py::test_x")
    assert not is_serial("tests/e2e_like/test_x.py::test_y")



def test_the_serial_leg_collects_only_the_serial_folders_and_the_other_leg_none_of_them():
    real = "tests/e2e/test_real_deployment.py"
    assert [left_out(p, "only") for p in ("tests", "tests/e2e", real)] == [False] * 3
    assert left_out("tests/operators", "only") and left_out("tests/test_errors.py", "only")
    assert left_out("tests/e2e_like", "only")
    assert [left_out(p, "skip") for p in ("tests/e2e", real)] == [True, True]
    assert not any(left_out(p, "skip") for p in ("tests", "tests/operators", "tests/e2e_like"))
    assert not any(left_out(p, "all") for p in ("tests", "tests/e2e", real, "tests/operators"))
