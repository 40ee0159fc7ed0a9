"""The sandbox as a child process (the launcher is part of the package)."""

from __future__ import annotations

from tronenergy_sandbox.process import SandboxProcess, start_sandbox

__all__ = ["SandboxProcess", "start_sandbox"]
