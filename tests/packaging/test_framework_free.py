"""The framework-free rooms stay free of Airflow, so the lowest Airflow's CI run may leave
their tests out (``-m "not framework_free"``, ``.ci/run``) without losing a code path.

``tests/support/framework_free.py`` names the rooms and tells which test files are theirs;
this holds both to it: read with ``ast`` (every import, in functions too), then imported in
a fresh interpreter, where Airflow must not appear in ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from support.framework_free import (
    ALWAYS_FREE,
    ROOMS,
    SOURCES,
    TESTS,
    file_is_free,
    imports_nothing_of_airflow,
    is_framework_free,
    module_of,
    package_room,
    room_paths,
)

ROOT = Path(__file__).resolve().parents[2]


def room_modules() -> list[Path]:
    """Every module of the framework-free rooms (the sandbox's distribution among them), and
    of what every room may import."""
    found = [path for name in sorted(ROOMS | ALWAYS_FREE) for path in room_paths(name)]
    assert all(path.is_file() for path in found), found
    assert all(any(path.is_relative_to(home) for path in found) for home in SOURCES.values())
    return found


def free_tests() -> list[Path]:
    return [path for path in sorted(TESTS.rglob("test_*.py")) if is_framework_free(path)]


def test_no_framework_free_room_imports_airflow():
    """A new ``import airflow`` there (even in a function) fails here: move the code up a
    room, or take the room out of ROOMS (its tests then run on every Airflow)."""
    modules = room_modules()
    assert len(modules) > 20, modules  # the rooms were found
    wrong = [str(path.relative_to(ROOT)) for path in modules
             if not imports_nothing_of_airflow(path)]
    assert wrong == [], f"these import Airflow or a room that does: {wrong}"


def test_their_tests_are_found_and_marked(request):
    tests = free_tests()
    rooms = {path.relative_to(TESTS).parts[0] for path in tests}
    assert {"client", "protocol", "sandbox", "node", "signer"} <= rooms, rooms
    # A test file of a free room that imports Airflow (a hook's) is not theirs: it runs on
    # every Airflow.
    assert not is_framework_free(TESTS / "client" / "test_ascii_numbers_boundaries.py")
    assert not is_framework_free(Path(__file__))
    assert request.node.get_closest_marker("framework_free") is None


def test_the_reader_sees_an_import_in_a_function(tmp_path):
    source = tmp_path / "test_x.py"
    source.write_text("def f():\n    from airflow.sdk import DAG\n")
    assert not file_is_free(source)
    source.write_text("import airflow_provider_tronenergy.hooks.tronenergy\n")
    assert not file_is_free(source)
    source.write_text("from airflow_provider_tronenergy.client import TronEnergyClient\n")
    assert file_is_free(source)
    # The sandbox's distribution is the room "sandbox", a free one.
    assert package_room("tronenergy_sandbox.chain.wire") == "sandbox"
    assert package_room("tronenergy_sandboxes") is None
    # So is the shared code's, the room "protocol".
    assert package_room("tronenergy_protocol.serving") == "protocol"


def test_importing_them_loads_no_airflow():
    """What ``ast`` cannot see (a dependency that imports Airflow): a fresh interpreter
    imports every module of the rooms and every test file marked, then looks."""
    modules = [module_of(path) for path in room_modules()
               if path.name != "__main__.py"]  # it would run
    paths = [str(path) for path in free_tests()]
    script = textwrap.dedent(f"""
        import importlib, importlib.util, json, sys
        sys.path[:0] = {json.dumps([str(ROOT), *(str(home.parent) for home in SOURCES.values()),
                                    str(TESTS)])}
        modules, paths = json.loads(sys.argv[1]), json.loads(sys.argv[2])
        for name in modules:
            importlib.import_module(name)
            if "airflow" in sys.modules:
                sys.exit("importing " + name + " imported Airflow")
        for number, path in enumerate(paths):
            spec = importlib.util.spec_from_file_location(f"_free_{{number}}", path)
            module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            if "airflow" in sys.modules:
                sys.exit("importing " + path + " imported Airflow")
        print(len(modules) + len(paths))
    """)
    result = subprocess.run([sys.executable, "-c", script, json.dumps(modules), json.dumps(paths)],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert int(result.stdout.split()[-1]) == len(modules) + len(paths)
