"""Tests of airflow_provider_tronenergy.ui, one test_<module>.py per module tested."""
