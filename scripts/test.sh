#!/usr/bin/env bash
# The whole test suite: pytest (unit, sandbox over HTTP, Airflow, PostgreSQL), ruff and
# mypy. Creates and reuses its own virtual environment (.venv, the locked versions).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k sandbox`. pytest runs on
# one worker per core (pytest-xdist), then the end-to-end deployments alone, one after
# another (tests/support/serial.py; SERIAL_WORKERS=2: two deployments at once, a test
# module each); PYTEST_WORKERS=0 runs it all in this process,
# PYTEST_WORKERS=4 on four workers. SERIAL_ARGS, when set, are the serial part's pytest
# arguments instead of the same ones (CI's lowest-Airflow real deployment).
# PARTS=workers or PARTS=serial runs only that part. LINT=0 skips ruff and mypy.
# The deployments use about one core of two: ruff and mypy run beside them, at a lower
# priority (nice 10), and so does ALONGSIDE_SERIAL, a command (.ci/run: the lowest Airflow
# release's venv, tests and real deployment); their output is printed after the
# deployments, their failure fails the run. Tests beside the deployments cannot take their
# ports: servers told a port get one reserved below the ephemeral range, across processes
# (tests/support/ports.py), and a deployment checks its API server is its own
# (tests/support/own_api.py).
set -euo pipefail
source "$(dirname "$0")/bootstrap.sh"

lint() {
  local failed=0
  say "ruff (pyproject.toml's rules, Airflow's AIR rules among them)"
  ruff check airflow_provider_tronenergy protocol sandbox tests bench scripts example_dags \
    hatch_build.py || failed=1
  say "mypy"
  mypy airflow_provider_tronenergy protocol/tronenergy_protocol sandbox/tronenergy_sandbox \
    || failed=1
  return "$failed"
}

# start_beside NAME COMMAND...: COMMAND in the background at nice 10, its output in a file.
beside_names=() beside_pids=() beside_logs=()
start_beside() {
  local name="$1" log
  shift
  log="$(mktemp "${TMPDIR:-/tmp}/tronenergy-$name.XXXXXX")"
  nice -n 10 "$@" > "$log" 2>&1 &
  beside_names+=("$name") beside_pids+=("$!") beside_logs+=("$log")
}

status=0
parts="${PARTS:-all}"
say "pytest (Airflow $AIRFLOW_VERSION)"
workers="${PYTEST_WORKERS:-auto}"
lint_done=0
if [ "$workers" = "0" ]; then
  python -m pytest "$@" || status=$?
else
  # The rest on the workers, then the end-to-end deployments one after another (they start
  # schedulers, triggerers, API servers and Celery workers of their own: no other test of
  # this run beside them, only what runs at a lower priority).
  if [ "$parts" != "serial" ]; then
    python -m pytest -n "$workers" --dist loadgroup --serial=skip "$@" || status=$?
  else
    status=5
  fi
  if [ "${LINT:-1}" = "1" ]; then
    start_beside lint bash -c "$(declare -f say lint); lint"
    lint_done=1
  fi
  if [ -n "${ALONGSIDE_SERIAL:-}" ] && [ "$parts" != "workers" ]; then
    start_beside alongside env -u ALONGSIDE_SERIAL bash -c "$ALONGSIDE_SERIAL"
  fi
  [ "$parts" = "workers" ] || say "pytest: the end-to-end deployments, one after another"
  if [ -n "${SERIAL_ARGS:-}" ]; then
    read -r -a serial_args <<< "$SERIAL_ARGS"
  else
    serial_args=("$@")
  fi
  if [ "$parts" = "workers" ]; then
    serial_status=5
  elif [ "${SERIAL_WORKERS:-1}" = "1" ]; then
    python -m pytest --serial=only "${serial_args[@]}" || serial_status=$?
  else  # one module (one deployment) per worker, SERIAL_WORKERS of them at once
    python -m pytest -n "$SERIAL_WORKERS" --dist loadscope --serial=only "${serial_args[@]}" \
      || serial_status=$?
  fi
  serial_status="${serial_status:-0}"
  for i in "${!beside_pids[@]}"; do
    beside_status=0
    wait "${beside_pids[$i]}" || beside_status=$?
    say "beside the deployments: ${beside_names[$i]} (exit $beside_status)"
    cat "${beside_logs[$i]}"
    rm -f "${beside_logs[$i]}"
    if [ "$beside_status" -ne 0 ]; then
      # what failed beside the deployments fails the run
      serial_status=$([ "$serial_status" -eq 0 ] || [ "$serial_status" -eq 5 ] \
        && echo 1 || echo "$serial_status")
    fi
  done
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
if [ "${LINT:-1}" = "1" ] && [ "$lint_done" = "0" ]; then
  lint || status=1
fi
if [ "$status" -ne 0 ]; then
  say "FAILED"
else
  say "all checks passed"
fi
exit "$status"
