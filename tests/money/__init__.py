"""Tests of airflow_provider_tronenergy.money, one test_<module>.py per module tested."""
