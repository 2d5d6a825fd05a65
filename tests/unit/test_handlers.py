"""The seed's two handlers, run in-process with a fake context."""

from __future__ import annotations

import importlib.util
import time
import uuid
from pathlib import Path
from types import ModuleType

import pytest

from deployer.testing import FakeContext, invoke_handler

ROOT = Path(__file__).resolve().parents[2]


def load(name: str) -> ModuleType:
    path = ROOT / "functions" / name / "index.py"
    spec = importlib.util.spec_from_file_location(f"fn_{name}_{uuid.uuid4().hex}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_start_job_returns_a_uuid_job_id():
    result = invoke_handler(load("start_job").handler, b"")
    assert set(result) == {"job_id"}
    assert str(uuid.UUID(result["job_id"])) == result["job_id"]


def test_start_job_ids_differ_per_call():
    handler = load("start_job").handler
    assert invoke_handler(handler, b"{}")["job_id"] != invoke_handler(handler, b"{}")["job_id"]


def test_get_job_status_is_running_within_delay_and_counts_tries():
    module = load("get_job_status")
    out = invoke_handler(module.handler, {"job_id": "j-1", "try_count": 2, "delay": 30})
    assert out == {"job_id": "j-1", "job_status": "running", "try_count": 3}


def test_get_job_status_succeeds_once_delay_elapsed_since_instance_start(monkeypatch):
    module = load("get_job_status")
    # the instance started 31 s ago: elapsed 31 > delay 30
    monkeypatch.setattr(module, "start_time", int(time.time()) - 31)
    out = invoke_handler(module.handler, {"job_id": "j-1", "try_count": 3, "delay": 30})
    assert out == {"job_id": "j-1", "job_status": "success", "try_count": 4}


def test_get_job_status_boundary_is_strictly_greater(monkeypatch):
    module = load("get_job_status")
    now = int(time.time())
    monkeypatch.setattr(module.time, "time", lambda: float(now))
    monkeypatch.setattr(module, "start_time", now - 30)
    out = invoke_handler(module.handler, {"job_id": "j", "delay": 30})
    assert out["job_status"] == "running"  # 30 is not > 30


def test_get_job_status_defaults_delay_to_60_and_try_count_to_0(monkeypatch):
    module = load("get_job_status")
    monkeypatch.setattr(module, "start_time", int(time.time()) - 59)
    out = invoke_handler(module.handler, '{"job_id": "j"}')
    assert out == {"job_id": "j", "job_status": "running", "try_count": 1}


def test_get_job_status_requires_job_id():
    with pytest.raises(KeyError):
        invoke_handler(load("get_job_status").handler, {"try_count": 0}, FakeContext())
