"""Sensors: tasks that wait until something at the service is finished."""
