"""The lint step (scripts/test.sh, run by .ci/run) includes ruff's Airflow rules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

IMPLICIT_MULTIPLE_OUTPUTS = '''\
from airflow.sdk import task


@task
def plan() -> dict[str, str]:
    return {}
'''


def ruff_codes(source: str, filename: str) -> list[str]:
    """Rule ids found with the project's own configuration (pyproject.toml), as in the lint step."""
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "json",
         "--stdin-filename", filename, "-"],
        input=source, capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert result.returncode in (0, 1), result.stderr
    return [finding["code"] for finding in json.loads(result.stdout)]


def test_preview_air_rules_run_with_the_projects_config():
    for filename in ("example_dags/probe.py", "tests/dags/probe.py"):
        assert ruff_codes(IMPLICIT_MULTIPLE_OUTPUTS, filename) == ["AIR202"]


def test_explicit_multiple_outputs_passes():
    fixed = IMPLICIT_MULTIPLE_OUTPUTS.replace("@task\n", "@task(multiple_outputs=False)\n")
    assert ruff_codes(fixed, "example_dags/probe.py") == []


def test_lint_step_checks_the_dags():
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    [line] = [line for line in script.splitlines() if line.strip().startswith("ruff check")]
    assert {"tests", "example_dags"} <= set(line.split())
