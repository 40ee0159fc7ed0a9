"""The package's rooms import only what docs/architecture.md's "Layers" table allows, and no
module imports itself back through others; the table allows nothing no import uses, lists
the rooms from the top floor down, and says truly which rooms import Airflow and which may
raise its exceptions (the domain rooms raise the provider's errors only).

Every import is read with ``ast``: at module level, inside functions, and under
``TYPE_CHECKING`` (an annotation is an arrow a reader follows too). The table is the rule,
written once in the docs; this test only reads it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "airflow_provider_tronenergy"
NAME = PACKAGE.name
# The sandbox is a distribution of its own (sandbox/, the package tronenergy_sandbox), read
# here as the room "sandbox": its imports of the provider follow the table, and a module of
# the provider that imports it breaks the table (no row may import it).
SANDBOX = ROOT / "sandbox" / "tronenergy_sandbox"
SANDBOX_NAME = SANDBOX.name
SANDBOX_ROOM = "sandbox"
# The code the provider and the sandbox share is a distribution of its own too (protocol/,
# the package tronenergy_protocol), read as the room "protocol": the bottom floor, which
# imports nothing of the provider or the sandbox (not even errors.py: the error root is its).
SHARED = ROOT / "protocol" / "tronenergy_protocol"
SHARED_NAME = SHARED.name
SHARED_ROOM = "protocol"
HOMES = {SANDBOX: (SANDBOX_NAME, SANDBOX_ROOM), SHARED: (SHARED_NAME, SHARED_ROOM)}
ARCHITECTURE = ROOT / "docs" / "architecture.md"
ROW = re.compile(r"^\| `(?P<room>[\w.]+?)(?:/|\.py)?` \|(?P<allowed>[^|\n]*)\|"
                 r"(?P<airflow>[^|\n]*)\|", re.MULTILINE)
TOP = "__init__"

def module_name(path: Path) -> str:
    """``client.aio`` for the package's client/aio.py; ``sandbox.chain.wire`` for the
    sandbox's tronenergy_sandbox/chain/wire.py; ``protocol.address`` for
    protocol/tronenergy_protocol/address.py."""
    for home, (_, home_room) in HOMES.items():
        if path.is_relative_to(home):
            parts = (home_room, *path.relative_to(home).with_suffix("").parts)
            break
    else:
        parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(
    [*PACKAGE.rglob("*.py"), *SANDBOX.rglob("*.py"), *SHARED.rglob("*.py")])}


def in_tree(dotted: str) -> str | None:
    """A dotted import as the table names it: the package's relative to it, the sandbox's
    and the shared code's under their rooms (``tronenergy_sandbox.api`` -> ``sandbox.api``,
    ``tronenergy_protocol.codes`` -> ``protocol.codes``); None for the rest."""
    if dotted == NAME or dotted.startswith(NAME + "."):
        return dotted.removeprefix(NAME).lstrip(".")
    for package, home_room in HOMES.values():
        if dotted == package or dotted.startswith(package + "."):
            return home_room + dotted.removeprefix(package)
    return None


def room(module: str) -> str:
    """``operators.purchase`` -> ``operators``; the package's own ``__init__`` -> ``__init__``."""
    return module.split(".", maxsplit=1)[0] if module else TOP


def known(dotted: str) -> str:
    """The package module a dotted name refers to (``client.Price`` -> ``client``)."""
    while dotted and dotted not in MODULES:
        dotted = dotted.rpartition(".")[0]
    return dotted


def imports(module: str) -> Iterator[tuple[str, int]]:
    """Each package module ``module`` imports, anywhere in its body, with the line."""
    path = MODULES[module]
    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (dotted := in_tree(alias.name)) is not None:
                    yield known(dotted), node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            elif (found := in_tree(node.module or "")) is not None:
                source = found
            else:
                continue
            for alias in node.names:
                target = f"{source}.{alias.name}" if source else alias.name
                yield (target if target in MODULES else known(source)), node.lineno


GRAPH = {module: {target for target, _ in imports(module) if target != module}
         for module in MODULES}


def rows() -> list[re.Match[str]]:
    """The Layers table's rows, from the top floor down."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index("## Layers"):]
    section = section[:section.index("\n## ", 1)] if "\n## " in section[1:] else section
    return list(ROW.finditer(section))


def allowed() -> dict[str, set[str]]:
    """The Layers table: each room and the rooms it may import (``errors`` for every room
    but the shared code's, which holds the error root errors.py builds on)."""
    table = {}
    for row in rows():
        names = re.findall(r"`([\w.]+?)(?:/|\.py)?`", row["allowed"])
        everyone = {"errors"} if row["room"] != SHARED_ROOM else set()
        table[row["room"]] = {*names, *everyone} - {row["room"]}
    return table


TABLE = allowed()
FLOORS = [row["room"] for row in rows()]
AIRFLOW = {row["room"]: row["airflow"].strip() for row in rows()}


def test_every_room_is_in_the_table() -> None:
    rooms = {room(module) for module in MODULES}
    assert rooms - set(TABLE) == set(), "place the new room in docs/architecture.md's Layers"
    assert set(TABLE) - rooms == set(), "the Layers table names a room that does not exist"
    for name, targets in TABLE.items():
        assert targets <= set(TABLE), f"{name} may import unknown rooms {targets - set(TABLE)}"


def test_the_table_has_no_loop() -> None:
    """Rooms form layers: no room may import, through others, a room that imports it."""
    seen: dict[str, bool] = {}

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"the Layers table loops: {' -> '.join((*path, name))}"
        if name in seen:
            return
        for target in TABLE[name] - {name}:
            visit(target, (*path, name))
        seen[name] = True

    for name in TABLE:
        visit(name, ())


def test_every_import_follows_the_table() -> None:
    wrong = []
    for module in MODULES:
        for target, line in imports(module):
            source_room, target_room = room(module), room(target)
            if source_room != target_room and target_room not in TABLE.get(source_room, set()):
                wrong.append(f"{module}:{line} imports {target} ({source_room} may not "
                             f"import {target_room})")
    assert wrong == [], "\n".join(wrong)


def cycles(graph: dict[str, set[str]] | None = None) -> list[frozenset[str]]:
    """The import loops between modules (strongly connected components of two or more)."""
    graph = GRAPH if graph is None else graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, set()):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in graph:
        if node not in index:
            connect(node)
    return found


def test_no_import_loops_between_modules() -> None:
    loops = [sorted(loop) for loop in cycles()]
    assert loops == [], f"modules that import each other: {loops}"


def test_the_loop_finder_finds_loops() -> None:
    """The test above could pass on a blind finder: a long loop and a short one are found."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"}}
    assert sorted(map(sorted, cycles(graph))) == [["a", "b", "c"], ["e", "f"]]


def test_the_reader_sees_every_kind_of_import() -> None:
    """Module-level, function-level, relative and TYPE_CHECKING imports all count."""
    assert "payout.params" in GRAPH["payout.onchain"]  # module level
    assert "hooks.tron_node" in GRAPH["payout.onchain"]  # TYPE_CHECKING and in a function
    assert "client.aio" in GRAPH["hooks.tronenergy"]  # in a method
    assert "protocol.errors" in GRAPH["protocol.numbers"]  # the shared distribution's
    assert "protocol.errors" in GRAPH["errors"]
    assert "protocol.codes" in GRAPH["sandbox.api"]  # the sandbox's distribution, read too
    assert "sandbox.errors" in GRAPH["sandbox.api"]
    assert in_tree("tronenergy_sandbox.chain.wire") == "sandbox.chain.wire"
    assert in_tree("tronenergy_sandboxes") is None
    assert in_tree("tronenergy_protocol.serving") == "protocol.serving"
    assert in_tree("tronenergy_protocols") is None


def test_nothing_of_the_provider_imports_the_sandbox() -> None:
    """The provider's wheel holds no sandbox: no module of it imports one, and no row of the
    table lets a room of the provider do so."""
    assert [name for name, targets in TABLE.items() if SANDBOX_ROOM in targets] == []
    wrong = [f"{module} imports {target}" for module, targets in GRAPH.items()
             if room(module) != SANDBOX_ROOM for target in targets
             if room(target) == SANDBOX_ROOM]
    assert wrong == []


def test_the_shared_code_is_the_bottom_floor() -> None:
    """The code the provider and the sandbox share imports neither (so the sandbox installs
    without the provider, hence without Airflow), and the table lists it last."""
    assert TABLE[SHARED_ROOM] == set()
    assert FLOORS[-1] == SHARED_ROOM
    wrong = [f"{module} imports {target}" for module, targets in GRAPH.items()
             if room(module) == SHARED_ROOM for target in targets
             if room(target) != SHARED_ROOM]
    assert wrong == []
    # One copy: none left in the provider.
    assert [*(PACKAGE / "protocol").glob("*.py"), *PACKAGE.glob("serving.py")] == []


def test_every_permission_is_used() -> None:
    """A permission no import uses is an arrow a reader follows for nothing: drop it."""
    used: dict[str, set[str]] = {name: set() for name in TABLE}
    for module in MODULES:
        for target, _ in imports(module):
            used[room(module)].add(room(target))
    idle = [f"{name} may import {sorted(TABLE[name] - used[name] - {'errors'})}, which no "
            "module of it does" for name in TABLE if TABLE[name] - used[name] - {"errors"}]
    assert idle == [], "\n".join(idle)


def test_the_table_lists_the_floors_from_the_top() -> None:
    """Each room is above every room it may import, as the docs say ("From the top")."""
    below = [f"{name} may import {target}, listed above it" for at, name in enumerate(FLOORS)
             for target in TABLE[name] if target in FLOORS[:at]]
    assert below == [], "\n".join(below)


def airflow_imports(module: str) -> Iterator[tuple[str, str, int]]:
    """Each name ``module`` imports from Airflow (``airflow.x`` for ``import airflow.x``)."""
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "airflow" or alias.name.startswith("airflow."):
                    yield alias.name, alias.name, node.lineno
        elif (isinstance(node, ast.ImportFrom) and not node.level and node.module
              and (node.module == "airflow" or node.module.startswith("airflow."))):
            for alias in node.names:
                yield node.module, alias.name, node.lineno


def is_airflow_exception(source: str, name: str) -> bool:
    return bool(re.fullmatch(r"Airflow\w*Exception", name)) or source == "airflow.exceptions"


# hooks.lookup catches the lookup's not-found and raises none of Airflow's: it answers it
# with the provider's ``ConnectionMissing`` (or None for a default id nobody wrote), the one
# place that does, for the hooks, the doctor and the callback receiver alike.
CATCHES_ONLY = {("hooks.lookup", "AirflowNotFoundException")}


def test_the_table_says_which_rooms_import_airflow() -> None:
    """"no": nothing of Airflow; "yes": some module does; "yes, its exceptions": the room
    may raise Airflow's exceptions, and does. Every other room raises the provider's
    errors only, which the Airflow-facing rooms translate (``airflow_errors``)."""
    wrong = []
    for name, says in AIRFLOW.items():
        found = [(module, source, imported, line) for module in MODULES
                 if room(module) == name for source, imported, line in airflow_imports(module)]
        raising = [f for f in found if is_airflow_exception(f[1], f[2])
                   and (f[0], f[2]) not in CATCHES_ONLY]
        if says not in ("no", "yes", "yes, its exceptions"):
            wrong.append(f"{name}: say no, yes or yes, its exceptions, not {says!r}")
        elif says == "no" and found:
            wrong.append(f"{name} says no, but {found[0][0]}:{found[0][3]} imports "
                         f"{found[0][1]}.{found[0][2]}")
        elif says != "no" and not found:
            wrong.append(f"{name} says {says!r}, but imports nothing of Airflow")
        elif says == "yes" and raising:
            wrong.append(f"{name} raises the provider's errors only, but {raising[0][0]}:"
                         f"{raising[0][3]} imports {raising[0][2]} (raise a class of "
                         "errors.py's tree; airflow_errors translates it)")
        elif says == "yes, its exceptions" and not raising:
            wrong.append(f"{name} says it may raise Airflow's exceptions, but imports none")
    assert wrong == [], "\n".join(wrong)


def test_airflow_not_found_is_answered_in_one_place() -> None:
    """Only hooks.lookup names Airflow's not-found; every other room reads a connection
    through it."""
    naming = sorted({module for module in MODULES for _, imported, _ in airflow_imports(module)
                     if imported == "AirflowNotFoundException"})
    assert naming == ["hooks.lookup"]


def test_the_receiver_reads_only_the_lookup_of_the_hooks() -> None:
    """The callback receiver runs without Airflow: of the hooks it imports only
    hooks.lookup, which imports nothing of the package but the errors (no hook, client or
    node code)."""
    hooks = {target for module, targets in GRAPH.items() if room(module) == "callbacks"
             for target in targets if room(target) == "hooks"}
    assert hooks == {"hooks.lookup"}
    assert GRAPH["hooks.lookup"] <= {"errors"}


def test_the_domain_rooms_raise_no_airflow_exception() -> None:
    """The rooms where money moves are not Airflow's: their errors are the provider's."""
    for name in ("purchase", "money", "keeper", "purchase_journal", "deposits", "payout"):
        assert AIRFLOW[name] == "no", name


PREPARATION = {"payout.sheet", "payout.identity", "payout.energy_plan", "payout.ready",
               "payout.onchain", "payout.params", "payout.approvals"}


def test_the_send_operator_takes_its_batch_from_the_payout_rooms_input():
    """The sender's batch id and rows are ``payout.batch.PayoutBatch``'s, checked by
    ``payout.rows``: nothing of the preparation's modules, which may change on their own."""
    assert set(MODULES) >= PREPARATION  # the names are the package's
    assert "payout.batch" in GRAPH["operators.payout"]
    assert GRAPH["operators.payout"] & PREPARATION == set()
    assert GRAPH["payout.batch"] & PREPARATION == set()
