"""The user docs describe the product as it is, and their walks through the code name code
that exists.

History (what a release changed, what a drill found, when a session measured what) lives
in git and CHANGELOG.md; a user doc says what the product does, why, and its limits, in
the present tense. A few words and phrases that only tell history are refused; a phrase
where such a word is present tense is allowed by name.

docs/architecture.md's walks (a payout from row to receipt, a keeper wake to a purchase)
name modules, classes, functions and files in backticks. Each is looked up in the code
with ``ast`` (nothing is imported), so a module that moves fails here, naming the
reference, until the walk follows it.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "airflow_provider_tronenergy"
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "example_dags"
ARCHITECTURE = DOCS / "architecture.md"
USER_DOCS = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
"""Every user doc: README.md and docs/*.md (CHANGELOG.md is at the root, and history)."""

HISTORY = {
    "no longer": r"\bno longer\b",
    "used to (in the past)": r"\bused to\b",
    "an issue number": r"(?<!java-tron )\bissues? \d+\b|\(#\d+\)",
    "before / after a change": r"\b(?:before|after) (?:this|the|that) (?:change|rework|fix)\b"
                               r"|\bthe commit (?:before|after)\b|\bas before\b",
    "previously / formerly": r"\b(?:previously|formerly|anymore)\b",
    "a session": r"\b(?:this|that|last|second|earlier|previous) session\b|\bsessions'",
    "a rehearsal": r"\brehears(?:al|als|ed)\b",
    "a bug fixed": r"\b(?:was|were|been|got|is now) (?:fixed|dropped|replaced|removed|renamed"
                   r"|moved|reworked|rewritten|introduced)\b|\bbug (?:story|fix)",
    "now, against the past": r"\b(?:is|are|does|do) now\b|\bnow (?:also|instead|holds?)\b",
    "what a drill found": r"\bdrilled\b|\b(?:drill|rehearsal|run) found\b",
}
"""What only history says. Kept small and precise: ``was`` alone is often present tense
("nothing was bought")."""

DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
"""A day: history outside performance.md, whose tables may say when they were measured."""

ALLOWED = {
    "docs/connection.md": ["Never used to sign requests"],
    "docs/operators.md": ["used to detect a first-time transfer"],
    "docs/energy-page.md": ["from=2026-03-01&to=2026-03-31"],
    "docs/sandbox.md": ["the row before the change"],
}
"""Phrases where a word above is present tense, or a date is an example, per doc."""


def _relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _history_in(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    for phrase in ALLOWED.get(_relative(path), []):
        assert phrase in text, f"{_relative(path)}: allowed phrase gone, drop it: {phrase!r}"
        text = text.replace(phrase, "")
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for what, pattern in HISTORY.items():
            found += [f"{_relative(path)}:{number}: {what}: {m.group(0)!r}"
                      for m in re.finditer(pattern, line, re.IGNORECASE)]
        if path.name != "performance.md":
            found += [f"{_relative(path)}:{number}: a date: {m.group(0)!r}"
                      for m in DATE.finditer(line)]
    return found


def test_the_user_docs_are_found():
    names = {path.name for path in USER_DOCS}
    assert {"README.md", "architecture.md", "decisions.md", "deployment.md"} <= names
    assert "CHANGELOG.md" not in names


def test_no_user_doc_tells_history():
    """History goes to CHANGELOG.md; a user doc says what the product is."""
    found = [line for path in USER_DOCS for line in _history_in(path)]
    assert found == [], "history in user docs (say it in the present, or move it to " \
                        "CHANGELOG.md):\n" + "\n".join(found)


def test_the_history_patterns_catch_history():
    """Each pattern catches what it is for, and leaves the present tense alone."""
    def caught(line: str) -> bool:
        return any(re.search(p, line, re.IGNORECASE) for p in HISTORY.values())
    history = ["the sender no longer signs twice", "what used to let 1,100 connections in",
               "the keeper (issue 37) reads", "before this change it took 25 s",
               "a rehearsal on a clean clone found", "the cap was fixed", "the page is now fast",
               "what that deployment was drilled with", "the holders now hold 1 USDT",
               "it works as before"]
    present = ["nothing was bought", "the request was refused before processing",
               "a fixed amount every hour", "the energy it costs now", "a dropped connection",
               "the ledger for what it found",
               "java-tron issue 3556's receipts", "no (now)"]
    assert [line for line in history if not caught(line)] == []
    assert [line for line in present if caught(line)] == []


def test_no_user_doc_cites_a_path_outside_the_repository():
    """A user reads the docs in their clone or on GitHub: /work/..., /home/... are someone's
    machine (a file in /tmp the product or an example writes is the user's own)."""
    outside = re.compile(r"(?<![\w.:/-])/(?:work|home|root|Users|mnt|srv)/[\w./-]+")
    found = [f"{_relative(path)}:{number}: {m.group(0)}"
             for path in USER_DOCS
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for m in outside.finditer(line)]
    assert found == [], "\n".join(found)


# --- the walks name code that exists --------------------------------------------------

WALKS = ("A payout batch, in order", "A payout batch against the chain",
         "Sending a payout batch", "A keeper wake, to a purchase")
"""The walks of docs/architecture.md's Data flows, by their bold opening words."""

CODE = re.compile(r"`([^`\n]+)`")
NAME = re.compile(r"[A-Za-z_]\w*")


def _walk(opening: str) -> str:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    start = text.find(f"**{opening}")
    assert start >= 0, f"docs/architecture.md has no walk opening **{opening}**"
    end = text.find("\n\n", start)
    return text[start:end if end >= 0 else len(text)]


@functools.cache
def _modules() -> dict[str, ast.Module]:
    """Every module of the package by dotted name relative to it ("payout.send")."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return modules


def _names_in(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """What a module or class body defines or imports, by name."""
    names: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update({t.id: node for t in targets if isinstance(t, ast.Name)})
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update({(a.asname or a.name).split(".")[0]: node for a in node.names})
        elif isinstance(node, (ast.If, ast.Try)):
            names.update(_names_in(node.body))
    return names


@functools.cache
def _everywhere() -> dict[str, list[ast.AST]]:
    """Every class, function and method the package defines, by its own name."""
    found: dict[str, list[ast.AST]] = {}
    for tree in _modules().values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.setdefault(node.name, []).append(node)
    return found


@functools.cache
def _words() -> frozenset[str]:
    """Every identifier and every word of a string in the package and the example DAGs:
    what a bare lower-case name (a field, a parameter, a journal state, a task id) is
    looked for in."""
    words: set[str] = set()
    examples = [ast.parse(path.read_text(encoding="utf-8"), str(path))
                for path in sorted(EXAMPLES.glob("*.py"))]
    for tree in [*_modules().values(), *examples]:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                words.add(node.id)
            elif isinstance(node, ast.Attribute):
                words.add(node.attr)
            elif isinstance(node, (ast.arg, ast.keyword)) and node.arg:
                words.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                words.add(node.name)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                words.update(NAME.findall(node.value))
    return frozenset(words | set(_modules()) | {m.rsplit(".", 1)[-1] for m in _modules()})


def _member(node: ast.AST, name: str) -> ast.AST | None:
    """``name`` in a class (its body or a base class the package defines), else None."""
    if not isinstance(node, ast.ClassDef):
        return None
    own = _names_in(node.body).get(name)
    if own is not None:
        return own
    for base in node.bases:
        base_name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
        for candidate in _everywhere().get(base_name, []):
            found = _member(candidate, name)
            if found is not None:
                return found
    return None


def _attribute_path(node: ast.AST, rest: list[str]) -> bool:
    for name in rest:
        found = _member(node, name)
        if found is None:
            return False
        node = found
    return True


def _dotted(reference: str) -> bool:
    """``payout.send.PayoutSender.send``, ``rows.amount_problem`` (a module of a room),
    ``Judge.settle``: the longest module prefix, then names inside it."""
    parts = reference.split(".")
    modules = _modules()
    rooms = ["", *sorted({name.split(".")[0] + "." for name in modules if "." in name})]
    for room in rooms:
        for cut in range(len(parts), 0, -1):
            module = room + ".".join(parts[:cut])
            if module not in modules:
                continue
            if cut == len(parts):
                return True
            node = _names_in(modules[module].body).get(parts[cut])
            if node is not None and (cut + 1 == len(parts)
                                     or _attribute_path(node, parts[cut + 1:])):
                return True
    return any(_attribute_path(node, parts[1:]) for node in _everywhere().get(parts[0], []))


def _path(reference: str) -> bool:
    """``operators/payout.py``, ``keeper/``: under the package, else under the root."""
    return any((base / reference).exists() for base in (PACKAGE, ROOT))


def resolves(reference: str) -> bool | None:
    """Whether a backticked reference names code that exists; None: it is no code reference
    (a state in quotes, a command, an identity's shape). A bare lower-case name (a field,
    a state) need only be a word of the code; a call, a class, a private helper must be
    defined; a dotted name is followed module by module, then class and member."""
    reference = reference.strip()
    if reference.endswith(".py") or reference.endswith("/") or (
            "/" in reference and " " not in reference and not reference.startswith("/")
            and "<" not in reference):
        return _path(reference)
    call = reference.endswith("()")
    name = reference[:-2] if call else reference
    if not re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", name):
        return None
    if "." in name:
        return _dotted(name)
    if call or name[0].isupper() or name.startswith("_"):
        return name in _everywhere() or any(name in _names_in(tree.body)
                                            for tree in _modules().values())
    return name in _words()


def _unresolved(text: str) -> list[str]:
    return [m.group(1) for m in CODE.finditer(text) if resolves(m.group(1)) is False]


def test_the_reference_rule_resolves_and_refuses():
    """Moved code fails; present code, and what is no code, pass."""
    assert resolves("operators/payout.py") and resolves("keeper/")
    assert resolves("payout.send.PayoutSender.send") and resolves("Judge.settle")
    assert resolves("rows.amount_problem") and resolves("as_airflow()")
    assert resolves("KeeperWatch.poll") and resolves("signing") and resolves("_rounds")
    assert resolves("keeper:<name>:<wallet>:<n>") is None
    assert resolves('"payout batch ready"') is None
    assert not resolves("operators/payout_moved.py")
    assert not resolves("payout.send.PayoutSender.sends")
    assert not resolves("payout.nowhere.PayoutSender")
    assert not resolves("NoSuchClass") and not resolves("no_such_function()")
    assert not resolves("Judge.no_such_method") and not resolves("_no_such_helper")


def test_the_walks_name_code_that_exists():
    """Each walk of docs/architecture.md can be followed in the code: every module, class,
    function, method and file it names in backticks is there."""
    missing = {opening: _unresolved(_walk(opening)) for opening in WALKS}
    missing = {opening: refs for opening, refs in missing.items() if refs}
    assert missing == {}, "docs/architecture.md's walks name code that is not there:\n" + \
        "\n".join(f"  {opening}: {', '.join(f'`{r}`' for r in refs)}"
                  for opening, refs in missing.items())
