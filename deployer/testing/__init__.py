"""Test helpers for projects deploying to Function Compute and CloudFlow (moto-style)."""

from __future__ import annotations

import os

# The credentials chain reads this at import time; its last resort queries the ECS metadata
# address, which tests must never do.
os.environ.setdefault("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true")

from deployer.testing.handlers import FakeContext, invoke_handler

__all__ = ["FakeContext", "invoke_handler"]
