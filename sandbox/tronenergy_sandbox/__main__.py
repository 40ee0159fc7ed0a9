from __future__ import annotations

import sys

from airflow_provider_tronenergy.sandbox.cli import main

sys.exit(main())
