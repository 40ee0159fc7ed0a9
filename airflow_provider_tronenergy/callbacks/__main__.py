"""``python -m airflow_provider_tronenergy.callbacks``: same as ``tronenergy-receiver``."""

from __future__ import annotations

import sys

from airflow_provider_tronenergy.callbacks.cli import main

sys.exit(main())
