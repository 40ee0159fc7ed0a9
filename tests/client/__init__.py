"""Tests of airflow_provider_tronenergy.client, one test_<module>.py per module tested."""
