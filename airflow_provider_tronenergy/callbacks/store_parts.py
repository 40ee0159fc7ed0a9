"""What the callback store's parts (writes, offsets) may use of the store they are part of."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine


class StoreParts:
    """Declarations only: ``CallbackStore`` sets these up and defines the methods."""

    url: URL
    backend: str
    engine: Engine
    transfers: sa.Table
    offsets: sa.Table

    if TYPE_CHECKING:
        def _write(self, *, ordered: bool = True) -> AbstractContextManager[Connection]: ...

        def _read(self) -> AbstractContextManager[Connection]: ...

        def ensure_schema(self) -> None: ...

        def max_id(self) -> int: ...
