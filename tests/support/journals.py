"""The journals a test opens where the operators open them: one SQLite file in tmp_path."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

S = TypeVar("S")


def opened(store: Callable[[str], S], tmp_path: Any, monkeypatch: Any) -> Iterator[S]:
    """``store`` on ``$TRONENERGY_PURCHASE_JOURNAL``, a SQLite file in tmp_path, closed after."""
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    monkeypatch.setenv("TRONENERGY_PURCHASE_JOURNAL", url)
    held = store(url)
    yield held
    held.close()  # type: ignore[attr-defined]
