"""The corpus of legacy-dialect flows the tests run (tests/fixtures/flows/legacy/): each flow
with its mock file and the cases run against it (case, execution input, expected status)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "flows" / "legacy"


@dataclass(frozen=True)
class Case:
    flow: str
    case: str
    input: Any
    status: str

    @property
    def id(self) -> str:
        return f"{self.flow}-{self.case}"


CASES = (
    Case("orders", "Happy", {"order": {"items": ["a"], "currency": "CNY"},
                             "customer": {"name": "Ann"}}, "Succeeded"),
    Case("review", "High", {"id": 1}, "Succeeded"),
    Case("review", "Trusted", {"id": 1}, "Succeeded"),
    Case("review", "Low", {"id": 1}, "Failed"),
    Case("review", "Middle", {"id": 1}, "Succeeded"),
    Case("review", "Escalate", {"id": 1}, "Succeeded"),
    Case("batch", "Three", {"bucket": "b"}, "Succeeded"),
    Case("batch", "None", {"bucket": "b"}, "Succeeded"),
    Case("booking", "Booked", {"order_id": "o-1"}, "Succeeded"),
    Case("booking", "HotelFails", {"order_id": "o-1"}, "Succeeded"),
    Case("booking", "TrainFails", {"order_id": "o-1"}, "Failed"),
    Case("booking", "TimesOut", {"order_id": "o-1"}, "Failed"),
    Case("approval", "Yes", {"pause": 3, "not_before": "1970-01-01T00:00:20Z",
                             "request": "r"}, "Succeeded"),
    Case("approval", "No", {"pause": 3, "not_before": "1970-01-01T00:00:20Z",
                            "request": "r"}, "Failed"),
    Case("integrations", "All", {"key": "k", "image": "http://x"}, "Succeeded"),
    Case("poll_job", "Quick", {"delay": 9}, "Succeeded"),
    Case("poll_job", "Never", {"delay": 1000}, "Failed"),
)


def flow_text(name: str, **variables: Any) -> str:
    """The corpus flow ``name`` (a template is rendered with ``variables`` and defaults)."""
    template = FIXTURES / f"{name}.yaml.j2"
    if not template.exists():
        return (FIXTURES / f"{name}.yaml").read_text(encoding="utf-8")
    values = {"region": "cn-hangzhou", "account_id": "1234567890123456",
              "start_job_function": "StartJob", "get_job_status_function": "GetJobStatus",
              **variables}
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(template.read_text(encoding="utf-8")).render(**values)


def mocks_file(name: str) -> Path:
    return FIXTURES / f"{name}-mocks.yaml"
