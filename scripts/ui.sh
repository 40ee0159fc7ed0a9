#!/usr/bin/env bash
# The main job's results in the Airflow UI: an API server on its data (.main-job/), on
# 127.0.0.1:8080 (--port N for another), until Ctrl-C; the server stops with the script on
# any stop signal (SIGTERM, SIGHUP, SIGINT). Run `bash scripts/main.sh` first.
set -euo pipefail
source "$(dirname "$0")/bootstrap.sh"
exec python scripts/main_ui.py "$@"
