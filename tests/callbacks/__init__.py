"""Tests of airflow_provider_tronenergy.callbacks, one test_<module>.py per module tested."""
