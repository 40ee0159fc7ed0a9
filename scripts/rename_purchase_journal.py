"""Rename the purchase journal's room, ``journal/`` -> ``purchase_journal/``, on any branch.

Run from a worktree's root: ``python3 scripts/rename_purchase_journal.py``. Re-runnable:
a second run changes nothing. It moves the package and its tests with ``git mv`` (when
still at the old place), then rewrites every tracked text file but CHANGELOG.md:

* ``airflow_provider_tronenergy.journal`` (imports, patch targets, entry points) and the
  paths ``airflow_provider_tronenergy/journal/``, ``tests/journal/``;
* the short forms ``journal/`` and ``journal.<module>`` (``journal.store``, ...): in
  Markdown wherever no word, ``.``, ``/`` or ``-`` comes before them (so
  ``payout/journal.py`` and ``payout.journal`` stay), in Python only inside quotes or
  backticks (a variable ``journal.store(...)`` stays);
* the room's name in the layering test's list of domain rooms, and the diagram's line
  in docs/architecture.md (kept inside its box).

In ``payout/`` and ``sandbox/`` only import lines change; any other line there that
would change is printed. Then: ``ruff check --fix --select I`` (import order).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

OLD, NEW = "journal", "purchase_journal"
PKG = "airflow_provider_tronenergy"
MODULES = "store|identity|figures|quoted|policy|verify|cli"
TEXT = (".py", ".md", ".toml", ".cfg", ".sh", ".yml", ".yaml", ".txt", ".ini", ".json")
SKIP = ("CHANGELOG.md", "scripts/rename_purchase_journal.py")
GUARDED = (f"{PKG}/payout/", f"{PKG}/sandbox/")

EVERYWHERE = [
    (re.compile(rf"\b{PKG}\.{OLD}\b"), f"{PKG}.{NEW}"),
    (re.compile(rf"\b{PKG}/{OLD}\b"), f"{PKG}/{NEW}"),
    (re.compile(rf"(?<![\w./-])tests/{OLD}\b"), f"tests/{NEW}"),
]
MARKDOWN = [
    (re.compile(r"──► journal/ \(SQLite or PostgreSQL\)       │"),
     "──► purchase_journal/ (SQLite, PostgreSQL)│"),
    (re.compile(rf"(?<![\w./-]){OLD}/"), f"{NEW}/"),
    (re.compile(rf"(?<![\w./-]){OLD}\.({MODULES})\b"), rf"{NEW}.\1"),
]
PYTHON = [
    (re.compile(rf"(?<=[`'\"]){OLD}/"), f"{NEW}/"),
    (re.compile(rf"(?<=[`'\"]){OLD}\.({MODULES})\b"), rf"{NEW}.\1"),
]
ONE_FILE = {
    "tests/packaging/test_layering.py": [
        (re.compile(r'"keeper", "journal", "deposits"'),
         '"keeper", "purchase_journal", "deposits"')],
}


def git(*args: str) -> str:
    command = [shutil.which("git") or "git", *args]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def move() -> None:
    for old, new in ((f"{PKG}/{OLD}", f"{PKG}/{NEW}"), (f"tests/{OLD}", f"tests/{NEW}")):
        if Path(old).is_dir() and not Path(new).exists():
            git("mv", old, new)


def rules(path: str) -> list[tuple[re.Pattern[str], str]]:
    kind = MARKDOWN if path.endswith(".md") else PYTHON if path.endswith(".py") else []
    return [*EVERYWHERE, *kind, *ONE_FILE.get(path, [])]


def rewrite(path: str) -> bool:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (UnicodeDecodeError, FileNotFoundError):
        return False
    guarded, in_import, lines = path.startswith(GUARDED), False, []
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        is_import = in_import or stripped.startswith(("from ", "import "))
        if stripped.startswith("from ") and stripped.rstrip().endswith("("):
            in_import = True
        elif in_import and stripped.startswith(")"):
            in_import = False
        new = line
        for pattern, replacement in rules(path):
            new = pattern.sub(replacement, new)
        if new != line and guarded and not is_import:
            print(f"left as it is (not an import line): {path}: {line.strip()}")
            new = line
        lines.append(new)
    if "".join(lines) == text:
        return False
    Path(path).write_text("".join(lines), encoding="utf-8")
    return True


def main() -> None:
    move()
    for path in git("ls-files").split():
        if path.endswith(TEXT) and path not in SKIP and rewrite(path):
            print(f"rewritten: {path}")


if __name__ == "__main__":
    main()
