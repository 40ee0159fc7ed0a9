"""What parsing each example DAG file costs, next to an empty DAG with the same Airflow imports.

The DAG processor parses every file again and again, each time in a fresh
process, so what a DAG file imports is paid on every parse. Each file is parsed
in a fresh interpreter, in turn with the same file of an earlier release
(``--baseline``, a git revision, checked out into a temporary folder) and with
its "empty twin" (the same Airflow imports and one empty DAG, nothing of the
provider), ``--rounds`` times; the medians are printed side by side.

Aim (issue 11): no example file parses slower than at the baseline (within
``--tolerance``; about 0.25 s on an idle 2-core machine, most of it
``airflow.sdk``), and none loads the receiver (Starlette, uvicorn), the async
client or tronpy (the node hook's library, issue 12) at parse time.

    .venv/bin/python bench/dag_parse_cost.py [--rounds 9] [--baseline 4482020]
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "example_dags").glob("*.py"))
HEAVY = ("starlette", "uvicorn", "airflow_provider_tronenergy.client.aio", "tronpy")

TIMER = """
import sys, time
start = time.perf_counter()
import runpy
runpy.run_path(sys.argv[1], run_name="dag_file")
elapsed = time.perf_counter() - start
print(elapsed, ",".join(m for m in {heavy!r} if m in sys.modules))
"""


def empty_twin(path: Path, folder: Path) -> Path:
    """The file's Airflow imports (and pendulum) with one empty DAG: the floor of its parse."""
    tree = ast.parse(path.read_text())
    keep = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
            and (getattr(node, "module", None) or node.names[0].name).split(".")[0]
            in ("airflow", "pendulum", "__future__")]
    body = ast.unparse(ast.Module(body=keep, type_ignores=[]))
    twin = folder / f"empty_{path.name}"
    twin.write_text(body + "\nfrom airflow.sdk import DAG as _DAG\n\n"
                    "with _DAG(dag_id='empty_twin', schedule=None):\n    pass\n")
    return twin


def checkout(revision: str, folder: Path) -> Path:
    """The package and example DAGs of ``revision``, extracted into ``folder``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision,
                              "airflow_provider_tronenergy", "example_dags"],
                             capture_output=True, check=True).stdout
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def parse_once(path: Path, env: dict[str, str]) -> tuple[float, str]:
    # Run beside the file, not in the checkout: ``python -c`` puts its working folder first
    # on sys.path, and from the repository's root that is this checkout's package, which
    # would shadow the baseline's PYTHONPATH.
    out = subprocess.run([sys.executable, "-c", TIMER.format(heavy=HEAVY), str(path)],
                         capture_output=True, text=True, env=env, check=True,
                         cwd=path.parent).stdout.split()
    return float(out[0]), (out[1] if len(out) > 1 else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--baseline", default="4482020",
                        help="git revision to compare with (default: before issue 11)")
    parser.add_argument("--tolerance", type=float, default=1.05)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="tronenergy-parse-"))
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False"}
    base = checkout(args.baseline, home / "baseline")
    base_env = {**env, "PYTHONPATH": str(base)}
    parse_once(EXAMPLES[0], env)  # warm the disk cache and Airflow's first-run set-up
    print(f"{'file':30} {'now s':>7} {args.baseline[:10] + ' s':>13} {'empty twin s':>13} "
          f"{'now/base':>9}  heavy modules now (baseline)")
    met = True
    for path in EXAMPLES:
        twin, old = empty_twin(path, home), base / "example_dags" / path.name
        runs: dict[str, list[float]] = {"now": [], "base": [], "twin": []}
        heavy = base_heavy = ""
        for _ in range(args.rounds):
            seconds, heavy = parse_once(path, env)
            runs["now"].append(seconds)
            if old.exists():
                seconds, base_heavy = parse_once(old, base_env)
                runs["base"].append(seconds)
            runs["twin"].append(parse_once(twin, env)[0])
        now, twin_s = statistics.median(runs["now"]), statistics.median(runs["twin"])
        was = statistics.median(runs["base"]) if runs["base"] else float("nan")
        ok = not heavy and not now > was * args.tolerance
        met = met and ok
        print(f"{path.name:30} {now:7.3f} {was:13.3f} {twin_s:13.3f} {now / was:9.2f}  "
              f"{heavy or '-'} ({base_heavy or '-'})  {'meets' if ok else 'BELOW'}")
    print(f"aim: every file parses no slower than at {args.baseline} (x{args.tolerance}) and "
          f"loads none of {', '.join(HEAVY)}: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
