"""Every async test here also runs with telemetry on (see tests/_telemetry_pass.py)."""

from _telemetry_pass import pytest_generate_tests, telemetry_pass

__all__ = ["pytest_generate_tests", "telemetry_pass"]
