"""Apache Airflow provider for a TRON energy-rental and address-monitoring service."""

from __future__ import annotations

__version__ = "0.1.0"
