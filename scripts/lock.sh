#!/usr/bin/env bash
# Refresh the locked environments: requirements/airflow-X.txt for each Airflow release CI
# runs, exact versions of everything scripts/bootstrap.sh installs (the provider's
# dependencies and the dev extra), resolved by uv for every platform (--universal). The
# sandbox's (sandbox/pyproject.toml) are the provider's own, in the same ranges, and the
# shared code's (protocol/) none: tests/packaging/test_locks.py fails when one is not locked.
# Versions already locked stay unless pyproject.toml's ranges exclude them; `--upgrade`
# (passed on to uv) moves everything to the newest releases the ranges admit. Run the
# suite on both (CI does) before committing new locks.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/uv.sh"
UV="$(find_uv)" || { echo "uv is needed to refresh the locks" >&2; exit 1; }
cd "$ROOT"
for version in $LOCKED_AIRFLOW_VERSIONS; do
  # A constraint at a fixed path: the lock's annotations name it, so it must not change.
  constraint="requirements/airflow-$version.constraint"
  echo "apache-airflow==$version" > "$constraint"
  # The shared code (protocol/) comes from the checkout (pyproject.toml's [tool.uv.sources])
  # and, like the provider, stays out of the lock: bootstrap.sh installs it editable.
  "$UV" pip compile pyproject.toml --extra dev --constraint "$constraint" --universal \
    --python-version 3.11 --quiet --custom-compile-command "bash scripts/lock.sh" \
    --no-emit-package tronenergy-protocol \
    --output-file "requirements/airflow-$version.txt" "$@" || { rm -f "$constraint"; exit 1; }
  rm -f "$constraint"
  echo "requirements/airflow-$version.txt" >&2
done
