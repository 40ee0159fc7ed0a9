"""Tests of the modules of airflow_provider_tronenergy.callbacks.store (the store itself:
../test_store*.py)."""
