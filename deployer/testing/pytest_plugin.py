"""pytest plugin (entry point ``deployer``): fixtures for testing against the local cloud."""

from __future__ import annotations

import os

os.environ.setdefault("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true")
