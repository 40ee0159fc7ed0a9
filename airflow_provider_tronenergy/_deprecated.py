"""Old import paths that keep working after a name moved: one warning, then the new object.

A user's DAG written against an earlier release must still import; it is told,
once per use, where the name lives now. A module keeps its old names with::

    __getattr__ = moved_names(__name__, {"old_name": "package.module:new_name"})

and a class renamed in place with ``renamed(__name__, {"OldName": "NewName"})``.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def warn_moved(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn the caller's caller (by default) that ``old`` is now ``new``."""
    warnings.warn(f"{old} moved to {new}; use that instead (the old path will be removed "
                  "in a future release)", DeprecationWarning, stacklevel=stacklevel)


def moved_names(module: str, targets: Mapping[str, str],
                otherwise: Callable[[str], Any] | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` that resolves each old name to ``"module:attribute"``.

    ``otherwise`` answers the other names (a package that loads its names lazily);
    without it they are an ``AttributeError``.
    """

    def __getattr__(name: str) -> Any:
        target = targets.get(name)
        if target is None:
            if otherwise is not None:
                return otherwise(name)
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        where, _, attribute = target.partition(":")
        warn_moved(f"{module}.{name}", f"{where}.{attribute}")
        return getattr(importlib.import_module(where), attribute)

    return __getattr__


def renamed(module: str, names: Mapping[str, str]) -> dict[str, str]:
    """Targets for :func:`moved_names` of classes renamed inside ``module`` itself."""
    return {old: f"{module}:{new}" for old, new in names.items()}
