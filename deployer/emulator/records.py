"""The values the emulator's store keeps and its services hand out: plain frozen records, with
no SQL and no wire names.

The store writes and reads them (``emulator/store/``), the services return them, and the API
modules and the console shape them for their answers without reaching into the store (contract
``emulator-api-not-store``; ``tests/unit/test_layer_values.py`` checks that no value an API
module takes from the services is defined in the store).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["AsyncTaskRow", "ExecutionLinks", "FlowRecord", "HistoryRow", "InvocationRecord",
           "LayerVersionRow", "MapRunRow", "ScheduleKey", "ScheduleRow", "TriggerKey",
           "TriggerRow"]


@dataclass(frozen=True, slots=True)
class FlowRecord:
    account_id: str
    region: str
    name: str
    flow_id: str
    definition: str
    description: str
    type: str
    role_arn: str
    execution_mode: str
    environment: dict[str, Any] | None
    resource_group_id: str
    external_storage: str
    created_at: float
    modified_at: float


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One history event as stored; ``detail`` is the event's detail JSON text."""

    event_id: int
    schedule_event_id: int
    type: str
    step_name: str
    time: str
    detail: str


@dataclass(frozen=True, slots=True)
class InvocationRecord:
    account_id: str
    region: str
    function_name: str
    request_id: str
    invoked_at: float
    invocation_type: str  # Sync | Async | PreStop | Initializer (hooks outside invocations)
    status: str  # Succeeded | Failed | Running
    error_type: str | None
    duration_ms: float | None
    log: str
    instance_id: str = ""
    cold_start: bool = False
    seq: int = 0  # its place in the order of recording (0 until stored)


ScheduleKey = tuple[str, str, str, str]
"""(account_id, region, flow_name, schedule name)."""


@dataclass(frozen=True, slots=True)
class ScheduleRow:
    account_id: str
    region: str
    flow_name: str
    name: str
    schedule_id: str
    cron: str
    payload: str
    description: str
    enable: bool
    created_at: float
    modified_at: float
    next_fire_at: float | None
    last_fired_at: float | None = None
    last_execution: str = ""
    fire_count: int = 0

    @property
    def key(self) -> ScheduleKey:
        return (self.account_id, self.region, self.flow_name, self.name)


@dataclass(frozen=True, slots=True)
class ExecutionLinks:
    """What links an execution to others and to its mocks (``store/link_repos.py``): its mock
    test case, the parent execution and Task that started it, StartExecution's
    ``CallbackFnFTaskToken`` and the Distributed Map run it is an iteration of; the empty value
    links nothing."""

    mock_case: str = ""
    parent_seq: int = 0
    parent_task_id: str = ""
    callback_token: str = ""
    map_run: str = ""

    @property
    def empty(self) -> bool:
        return not (self.mock_case or self.parent_seq or self.parent_task_id
                    or self.callback_token or self.map_run)


TriggerKey = tuple[str, str, str, str]
"""(account_id, region, function_name, trigger name)."""


@dataclass(frozen=True, slots=True)
class TriggerRow:
    account_id: str
    region: str
    function_name: str
    name: str
    trigger_id: str
    trigger_type: str
    qualifier: str
    description: str
    source_arn: str
    invocation_role: str
    config: dict[str, Any]
    url_prefix: str
    created_at: float
    modified_at: float
    next_fire_at: float | None = None
    last_fired_at: float | None = None
    fire_count: int = 0

    @property
    def key(self) -> TriggerKey:
        return (self.account_id, self.region, self.function_name, self.name)


@dataclass(frozen=True, slots=True)
class LayerVersionRow:
    account_id: str
    region: str
    name: str
    version: int
    description: str
    license: str
    compatible_runtimes: tuple[str, ...]
    code_checksum: str
    code_size: int
    created_at: float
    public: bool = False

    @property
    def arn(self) -> str:
        return (f"acs:fc:{self.region}:{self.account_id}:layers/{self.name}/versions/"
                f"{self.version}")


@dataclass(frozen=True, slots=True)
class AsyncTaskRow:
    account_id: str
    region: str
    function_name: str
    task_id: str
    qualifier: str
    request_id: str
    status: str
    payload: bytes
    return_payload: bytes | None = None
    error_message: str = ""
    retries: int = 0
    destination_status: str = ""
    instance_id: str = ""
    created_at: float = 0.0
    started_at: float | None = None
    ended_at: float | None = None
    duration_ms: float | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.account_id, self.region, self.function_name, self.task_id)


@dataclass(frozen=True, slots=True)
class MapRunRow:
    """A distributed Map's map run as stored (``store/map_run_repos.py``)."""

    parent_seq: int
    name: str
    task_id: str
    concurrency: int
    tolerated_count: int | None
    tolerated_percentage: float | None
    total: int
    status: str
    started_at: float
    stopped_at: float | None
