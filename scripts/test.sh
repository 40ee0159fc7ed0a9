#!/usr/bin/env bash
# The whole test suite: pytest (unit, sandbox over HTTP, Airflow, PostgreSQL), then ruff
# and mypy. Creates and reuses its own virtual environment (.venv, the locked versions).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k sandbox`. pytest runs on
# one worker per core (pytest-xdist), then the end-to-end deployments alone, one after
# another (tests/support/serial.py; SERIAL_WORKERS=2: two deployments at once, a test
# module each); PYTEST_WORKERS=0 runs it all in this process,
# PYTEST_WORKERS=4 on four workers. SERIAL_ARGS, when set, are the serial part's pytest
# arguments instead of the same ones (CI's lowest-Airflow run: the rest without slow
# tests, then the real deployment alone). LINT=0 skips ruff and mypy.
set -euo pipefail
source "$(dirname "$0")/bootstrap.sh"

status=0
say "pytest (Airflow $AIRFLOW_VERSION)"
workers="${PYTEST_WORKERS:-auto}"
if [ "$workers" = "0" ]; then
  python -m pytest "$@" || status=$?
else
  # The rest on the workers, then the end-to-end deployments alone (they start schedulers,
  # triggerers, API servers and Celery workers of their own: the whole machine is theirs).
  python -m pytest -n "$workers" --dist loadgroup --serial=skip "$@" || status=$?
  say "pytest: the end-to-end deployments, one after another"
  if [ -n "${SERIAL_ARGS:-}" ]; then
    read -r -a serial_args <<< "$SERIAL_ARGS"
  else
    serial_args=("$@")
  fi
  if [ "${SERIAL_WORKERS:-1}" = "1" ]; then
    python -m pytest --serial=only "${serial_args[@]}" || serial_status=$?
  else  # one module (one deployment) per worker, SERIAL_WORKERS of them at once
    python -m pytest -n "$SERIAL_WORKERS" --dist loadscope --serial=only "${serial_args[@]}" \
      || serial_status=$?
  fi
  serial_status="${serial_status:-0}"
  # No test collected (5) fails only when neither part had one.
  if [ "$status" -eq 5 ] && [ "$serial_status" -eq 5 ]; then
    status=5
  elif [ "$status" -eq 5 ] || [ "$status" -eq 0 ]; then
    status=$([ "$serial_status" -eq 5 ] && echo 0 || echo "$serial_status")
  fi
fi
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
