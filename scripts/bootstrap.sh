# Sourced by the other scripts: make (or reuse) the project's virtual environment.
# Needs only python3 (3.11+) on PATH. Installs the locked versions of
# requirements/airflow-$AIRFLOW_VERSION.txt (scripts/lock.sh makes them), with uv (fetched
# from PyPI into .venv-tools when missing), or with pip when uv cannot be had, and this
# repository's three distributions editable: the code the other two share (protocol/,
# tronenergy-protocol), the provider (with its dev extra) and the sandbox (sandbox/,
# tronenergy-sandbox), which the tests, benches and main job run against. None is in the
# lock: they are this checkout. Variables:
#   VENV_DIR         where the venv lives (default .venv)
#   AIRFLOW_VERSION  the Airflow release to install (default 3.3.2, the tested one; a
#                    release without a lock file installs unpinned, with a warning)
#   TRONENERGY_NO_UV set: install with pip even where uv is at hand
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV_DIR="${VENV_DIR:-$ROOT/.venv}"
AIRFLOW_VERSION="${AIRFLOW_VERSION:-3.3.2}"
PYTHON="${PYTHON:-python3}"
LOCK_FILE="$ROOT/requirements/airflow-$AIRFLOW_VERSION.txt"
source "$ROOT/scripts/uv.sh"

say() {  # bold on a terminal only: no colour codes in a file or with NO_COLOR
  if [ -t 2 ] && [ -z "${NO_COLOR:-}" ]; then
    printf '\033[1m==> %s\033[0m\n' "$*" >&2
  else
    printf '==> %s\n' "$*" >&2
  fi
}

stamp_of() {
  # Reinstall only when what we install, or how, changed: a pyproject.toml, the lock,
  # the release, this script.
  cat "$ROOT/pyproject.toml" "$ROOT/protocol/pyproject.toml" "$ROOT/sandbox/pyproject.toml" \
    "$LOCK_FILE" \
    "$ROOT/scripts/bootstrap.sh" 2>/dev/null \
    | "$PYTHON" -c "import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read() + b'$AIRFLOW_VERSION').hexdigest())"
}

quiet_pip() {  # pip's noise about this machine's unused index locations stays out
  grep -v "^WARNING: Location" >&2 || true
}

ensure_venv() {
  local stamp_file="$VENV_DIR/.tronenergy-stamp" want uv pins=()
  want="$(stamp_of)"
  if [ -x "$VENV_DIR/bin/python" ] && [ "$(cat "$stamp_file" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  if [ -f "$LOCK_FILE" ]; then
    pins=(-r "$LOCK_FILE")
  else
    say "no lock for Airflow $AIRFLOW_VERSION (requirements/): installing the newest versions pyproject.toml admits"
    pins=("apache-airflow==$AIRFLOW_VERSION")
  fi
  if uv="$(find_uv)"; then
    # A fresh venv each time what we install changed: uv makes it in seconds, and it then
    # holds the lock exactly (nothing left over from an earlier install).
    if [ -f "$VENV_DIR/pyvenv.cfg" ]; then
      rm -rf "$VENV_DIR"
    fi
    say "creating virtual environment in $VENV_DIR (uv)"
    "$uv" venv --quiet --seed --python "$PYTHON" "$VENV_DIR"
    say "installing Airflow $AIRFLOW_VERSION and the provider with uv (${LOCK_FILE#"$ROOT"/})"
    # --compile-bytecode, as pip does: without .pyc files (and with PYTHONDONTWRITEBYTECODE
    # set) every Airflow process compiles its ~2,000 modules again, some 30 s of CPU each.
    "$uv" pip install --quiet --compile-bytecode --python "$VENV_DIR/bin/python" \
      "${pins[@]}" -e "$ROOT/protocol" -e "$ROOT[dev]" -e "$ROOT/sandbox"
  else
    if [ ! -x "$VENV_DIR/bin/python" ]; then
      say "creating virtual environment in $VENV_DIR"
      "$PYTHON" -m venv "$VENV_DIR"
    fi
    say "installing Airflow $AIRFLOW_VERSION and the provider with pip (first run: a few minutes)"
    "$VENV_DIR/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip 2>&1 | quiet_pip
    "$VENV_DIR/bin/python" -m pip install --disable-pip-version-check -q \
      "${pins[@]}" -e "$ROOT/protocol" -e "$ROOT[dev]" -e "$ROOT/sandbox" 2>&1 | quiet_pip
  fi
  "$VENV_DIR/bin/python" -c \
    "import airflow_provider_tronenergy, tronenergy_protocol, tronenergy_sandbox, airflow" \
    >/dev/null 2>&1 \
    || { echo "installation failed" >&2; exit 1; }
  echo "$want" > "$stamp_file"
}

ensure_venv
export PATH="$VENV_DIR/bin:$PATH"
cd "$ROOT"
