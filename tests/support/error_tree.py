"""The provider's error tree, drawn from its classes: docs/architecture.md shows this drawing.

``python tests/support/error_tree.py`` rewrites the block in docs/architecture.md (between
the two ``error tree`` markers); ``tests/test_errors.py`` fails while the block and the
classes differ. Each class is drawn once, under its first base that is the provider's,
with its built-in base where it adds one (``ValueError``: its callers catch that) and its
module where it is not its parent's. The three verdicts (``NotRetryable``, ``Retryable``,
``NothingToDo``) come first; the rest by name.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- error tree: drawn by tests/support/error_tree.py, held by tests/test_errors.py -->"
END = "<!-- end of the error tree -->"
VERDICTS = ("NotRetryable", "Retryable", "NothingToDo")
PACKAGE = "airflow_provider_tronenergy"
SANDBOX = "tronenergy_sandbox"
"""The sandbox (sandbox/, a distribution of its own) raises under the provider's root: drawn
too, always imported, so the drawing never depends on what a test imported before."""
SHARED = "tronenergy_protocol"
"""The code the provider and the sandbox share (protocol/, a distribution of its own)
defines the root and ``ProtocolError``; the provider's errors.py re-exports them."""
HOMES = {PACKAGE: ROOT / PACKAGE, SHARED: ROOT / "protocol" / SHARED,
         SANDBOX: ROOT / "sandbox" / SANDBOX}


def _classes() -> type:
    """The root, every module of the package and the sandbox imported (so every class is
    defined)."""
    for home in (ROOT, HOMES[SHARED].parent, HOMES[SANDBOX].parent):
        if str(home) not in sys.path:
            sys.path.insert(0, str(home))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in HOMES:
            package = importlib.import_module(name)
            for info in pkgutil.walk_packages(package.__path__, name + "."):
                if not info.name.endswith("__main__"):  # a console script runs on import
                    importlib.import_module(info.name)
    root: type = importlib.import_module(f"{PACKAGE}.errors").TronEnergyProviderError
    return root


def _builtin(cls: type) -> type | None:
    """The nearest built-in exception ``cls`` derives from, below ``Exception``."""
    for base in cls.__mro__:
        if base.__module__ == "builtins" and base not in (Exception, BaseException, object):
            return base
    return None


def _where(cls: type) -> str:
    """``client/bounded.py`` for ``airflow_provider_tronenergy.client.bounded``; the other
    distributions' with their package's name, ``tronenergy_sandbox/errors.py``."""
    home = next((name for name in (SHARED, SANDBOX) if cls.__module__.startswith(name + ".")),
                PACKAGE)
    module = cls.__module__.removeprefix(PACKAGE + ".")
    path = HOMES[home].parent / module.replace(".", "/")
    if home == PACKAGE:
        path = HOMES[home] / module.replace(".", "/")
    return f"{module.replace('.', '/')}{'/__init__.py' if path.is_dir() else '.py'}"


def draw() -> str:
    """The tree, one class a line."""
    root = _classes()

    def children(parent: type) -> list[type]:
        subs = [cls for cls in parent.__subclasses__() if not cls.__name__.startswith("_")
                and next(b for b in cls.__bases__ if issubclass(b, root)) is parent]
        return sorted(subs, key=lambda c: (c.__name__ not in VERDICTS,
                                           VERDICTS.index(c.__name__)
                                           if c.__name__ in VERDICTS else 0, c.__name__))

    lines: list[tuple[str, str]] = [(root.__name__, _where(root))]

    def walk(parent: type, prefix: str) -> None:
        subs = children(parent)
        for index, cls in enumerate(subs):
            last = index == len(subs) - 1
            builtin = _builtin(cls)
            label = cls.__name__
            if builtin is not None and builtin is not _builtin(parent):
                label += f" ({builtin.__name__})"
            where = _where(cls) if cls.__module__ != parent.__module__ else ""
            lines.append((f"{prefix}{'└── ' if last else '├── '}{label}", where))
            walk(cls, prefix + ("    " if last else "│   "))

    walk(root, "")
    width = max(len(name) for name, _ in lines) + 2
    return "\n".join(f"{name:<{width}}{where}".rstrip() for name, where in lines)


def in_docs(text: str | None = None) -> str:
    """The tree as docs/architecture.md shows it (inside its code block)."""
    text = DOCS.read_text(encoding="utf-8") if text is None else text
    block = text[text.index(BEGIN) + len(BEGIN):text.index(END)]
    return block.strip().removeprefix("```").removesuffix("```").strip("\n")


def write() -> None:
    """Replace the block in docs/architecture.md with the drawing."""
    text = DOCS.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    DOCS.write_text(f"{text[:start]}\n```\n{draw()}\n```\n{text[end:]}", encoding="utf-8")


if __name__ == "__main__":
    write()
