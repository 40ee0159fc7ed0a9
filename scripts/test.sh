#!/usr/bin/env bash
# The whole test suite: pytest (unit, sandbox over HTTP, Airflow, PostgreSQL), then ruff
# and mypy. Creates and reuses its own virtual environment (.venv). Extra arguments go
# to pytest, e.g. `bash scripts/test.sh -k sandbox`. LINT=0 skips ruff and mypy.
set -euo pipefail
source "$(dirname "$0")/bootstrap.sh"

status=0
say "pytest (Airflow $AIRFLOW_VERSION)"
python -m pytest "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure here" >&2
fi
if [ "${LINT:-1}" = "1" ]; then
  say "ruff (pyproject.toml's rules, Airflow's AIR rules among them)"
  ruff check airflow_provider_tronenergy tests bench scripts example_dags hatch_build.py || status=1
  say "mypy"
  mypy airflow_provider_tronenergy || status=1
fi
if [ "$status" -ne 0 ]; then
  say "FAILED"
else
  say "all checks passed"
fi
exit "$status"
