# Sourced: where to find uv, the fast installer, and which Airflow releases are locked.
# find_uv prints uv's path: the one on PATH, else the project's own (.venv-tools, made here
# from PyPI the first time); it fails when neither can be had (scripts/bootstrap.sh then
# installs with pip).
LOCKED_AIRFLOW_VERSIONS="3.3.2 3.1.8"
UV_VERSION="0.13.9"
# uv never downloads a Python: the venvs use the python3 the scripts were given.
export UV_PYTHON_DOWNLOADS=never

find_uv() {
  local root tools
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  tools="$root/.venv-tools"
  if [ -z "${TRONENERGY_NO_UV:-}" ] && command -v uv >/dev/null 2>&1; then
    command -v uv
    return 0
  fi
  if [ -n "${TRONENERGY_NO_UV:-}" ]; then
    return 1
  fi
  if [ ! -x "$tools/bin/uv" ]; then
    echo "==> installing uv $UV_VERSION (from PyPI) in $tools" >&2
    rm -rf "$tools"
    { "${PYTHON:-python3}" -m venv "$tools" \
      && "$tools/bin/python" -m pip install --disable-pip-version-check -q "uv==$UV_VERSION" \
      2>&1 | grep -v "^WARNING: Location" >&2; } || true
  fi
  if [ -x "$tools/bin/uv" ]; then
    echo "$tools/bin/uv"
    return 0
  fi
  echo "uv could not be installed: installing with pip (slower)" >&2
  rm -rf "$tools"
  return 1
}
