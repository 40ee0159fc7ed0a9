#!/usr/bin/env bash
# The main job: the batch-payout DAG end to end against the embedded sandbox.
# Creates and reuses its own virtual environment (.venv), then runs scripts/main_job.py.
set -euo pipefail
source "$(dirname "$0")/bootstrap.sh"
say "main job"
exec python scripts/main_job.py "$@"
