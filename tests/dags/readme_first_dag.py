"""The README's first DAG, as a user copies it: the first ``python`` block of its section
"A first DAG", run as this module's body, so that the README's code is what
tests/example_dags/test_readme_first_dag.py runs (airflow dag)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## A first DAG"


def section() -> str:
    """The README's section "A first DAG", up to the next section."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n{SECTION}\n")
    end = text.find("\n## ", start + len(SECTION) + 2)
    return text[start:end if end >= 0 else len(text)]


def code(language: str) -> list[str]:
    """The section's fenced blocks in ``language``, in order."""
    return re.findall(rf"```{language}\n(.*?)```", section(), re.DOTALL)


SOURCE = code("python")[0]
exec(compile(SOURCE, f"{README}:{SECTION}", "exec"))  # defines dag, buy, wait
