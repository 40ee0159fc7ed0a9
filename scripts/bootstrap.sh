# Sourced by the other scripts: make (or reuse) the project's virtual environment.
# Needs only python3 (3.10+) on PATH. Variables:
#   VENV_DIR         where the venv lives (default .venv)
#   AIRFLOW_VERSION  the Airflow release to install (default 3.3.2, the tested one)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV_DIR="${VENV_DIR:-$ROOT/.venv}"
AIRFLOW_VERSION="${AIRFLOW_VERSION:-3.3.2}"
PYTHON="${PYTHON:-python3}"

say() {  # bold on a terminal only: no colour codes in a file or with NO_COLOR
  if [ -t 2 ] && [ -z "${NO_COLOR:-}" ]; then
    printf '\033[1m==> %s\033[0m\n' "$*" >&2
  else
    printf '==> %s\n' "$*" >&2
  fi
}

stamp_of() {
  # Reinstall only when what we install changed.
  cat "$ROOT/pyproject.toml" | "$PYTHON" -c "import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read() + b'$AIRFLOW_VERSION').hexdigest())"
}

ensure_venv() {
  local stamp_file="$VENV_DIR/.tronenergy-stamp" want
  want="$(stamp_of)"
  if [ -x "$VENV_DIR/bin/python" ] && [ "$(cat "$stamp_file" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  if [ ! -x "$VENV_DIR/bin/python" ]; then
    say "creating virtual environment in $VENV_DIR"
    "$PYTHON" -m venv "$VENV_DIR"
  fi
  say "installing apache-airflow==$AIRFLOW_VERSION and the provider (first run: about a minute)"
  "$VENV_DIR/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip 2>&1 \
    | grep -v "^WARNING: Location" >&2 || true
  "$VENV_DIR/bin/python" -m pip install --disable-pip-version-check -q \
    "apache-airflow==$AIRFLOW_VERSION" -e "$ROOT[dev]" 2>&1 | grep -v "^WARNING: Location" >&2 || true
  "$VENV_DIR/bin/python" -c "import airflow_provider_tronenergy, airflow" \
    || { echo "installation failed" >&2; exit 1; }
  echo "$want" > "$stamp_file"
}

ensure_venv
export PATH="$VENV_DIR/bin:$PATH"
cd "$ROOT"
