"""Injected faults: which calls fail (or slow down), how often, and with what.

A :class:`FaultSpec` selects calls by service (``fc``, ``cloudflow``, ``ram``, ``sts``) and,
optionally, by action (``InvokeFunction``, ``DescribeExecution``...), function and flow; it
fires on the next ``times`` matching calls (every one when ``times`` is None), each with
``probability`` (a ``seed`` makes the draws repeatable). What it does is its ``kind``:

* ``ERROR``: the call is refused with the cloud error ``code`` (the API layer answers it in the
  product's wire shape) **before it runs**: nothing is created, started or invoked.
* ``FUNCTION_ERROR`` / ``TIMEOUT`` (Function Compute invocations only): the handler is **not
  run** and the answer is what FC sends when a handler raised or timed out (a pure response
  substitution; no invocation is recorded).
* ``LATENCY``: the call waits ``seconds`` of real time, then runs normally.

A call meets at most one failing fault (the first that fires, in the order they were added) and
the latencies of every latency fault that fires. Matching is done for requests reaching the API
(:mod:`deployer.emulator.api.faults`) and for the FC invocations of flow Tasks
(:mod:`deployer.emulator.services.fc_tasks`). The registry lives in memory: a restarted
emulator starts without faults, and ``reset`` clears them.
"""

from __future__ import annotations

import enum
import itertools
import json
import random
import threading
from dataclasses import dataclass, field, replace

from deployer.emulator.services.errors import InvalidValue, Resource, ResourceNotFound

__all__ = [
    "SERVICES",
    "Fault",
    "FaultCall",
    "FaultEffect",
    "FaultKind",
    "FaultService",
    "FaultSpec",
    "injected_failure_body",
]

SERVICES = ("fc", "cloudflow", "ram", "sts")
INVOKE = "InvokeFunction"
MAX_LATENCY = 600.0
MAX_FAULTS = 1000


class FaultKind(enum.Enum):
    ERROR = "error"
    FUNCTION_ERROR = "function_error"
    TIMEOUT = "timeout"
    LATENCY = "latency"


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """What to inject and where; ``""`` selectors match anything. ``status`` and
    ``retry_after_ms`` are how the API layer answers an ``ERROR`` (resolved when the fault is
    added); ``error_type`` is the ``errorType`` of a ``FUNCTION_ERROR``."""

    service: str
    kind: FaultKind
    action: str = ""
    function: str = ""
    flow: str = ""
    code: str = ""
    message: str = ""
    status: int = 0
    retry_after_ms: int | None = None
    error_type: str = ""
    seconds: float = 0.0
    times: int | None = None
    probability: float = 1.0
    seed: int | None = None

    def validate(self) -> None:
        """Raise :class:`InvalidValue` naming the first rule this spec breaks."""
        def bad(field_name: str, message: str) -> InvalidValue:
            return InvalidValue(message, field=field_name)

        if self.service not in SERVICES:
            raise bad("service", f"service must be one of {', '.join(SERVICES)}; got "
                                 f"{self.service!r}")
        if self.times is not None and not 1 <= self.times <= 1_000_000:
            raise bad("times", f"times must be a whole number in 1-1000000, got {self.times}")
        if not 0.0 < self.probability <= 1.0:
            raise bad("probability", f"probability must be in (0, 1], got {self.probability}")
        if self.function and self.service != "fc":
            raise bad("function", "function selects Function Compute calls: use it with "
                                  "service fc")
        if self.flow and self.service != "cloudflow":
            raise bad("flow", "flow selects CloudFlow calls: use it with service cloudflow")
        if self.kind in (FaultKind.FUNCTION_ERROR, FaultKind.TIMEOUT) and (
                self.service != "fc" or self.action not in ("", INVOKE)):
            raise bad("kind", f"a {self.kind.value} fault applies to Function Compute "
                                  "InvokeFunction (and flow Tasks): use service fc and action "
                                  "InvokeFunction (or none)")
        if self.kind is FaultKind.LATENCY and not 0.0 < self.seconds <= MAX_LATENCY:
            raise bad("seconds", f"latency seconds must be in (0, {MAX_LATENCY:g}], got "
                                 f"{self.seconds}")
        if self.kind is FaultKind.ERROR and not self.code:
            raise bad("code", "an error fault needs the error code to answer with")

    def matches(self, call: FaultCall) -> bool:
        return (self.service == call.service
                and (not self.action or self.action.lower() == call.action.lower())
                and (not self.function or self.function == call.function)
                and (not self.flow or self.flow == call.flow)
                and (self.kind not in (FaultKind.FUNCTION_ERROR, FaultKind.TIMEOUT)
                     or call.action == INVOKE))


def injected_failure_body(spec: FaultSpec, timeout: int) -> bytes:
    """What FC answers for a run a ``FUNCTION_ERROR`` or ``TIMEOUT`` fault replaces: the error
    JSON of a Python handler that raised, or of one that ran out of ``timeout`` seconds
    (docs/runtime.md)."""
    if spec.kind is FaultKind.TIMEOUT:
        return json.dumps({"errorMessage": f"Function timed out after {timeout} seconds"}
                          ).encode("utf-8")
    return json.dumps({"errorMessage": spec.message, "errorType": spec.error_type}, indent=4,
                      sort_keys=True).encode("utf-8")


@dataclass(frozen=True, slots=True)
class FaultCall:
    """One call as the faults see it: ``origin`` is ``"api"`` or ``"task"`` (a flow's Task)."""

    service: str
    action: str
    function: str = ""
    flow: str = ""
    origin: str = "api"


@dataclass(frozen=True, slots=True)
class Fault:
    """A registered fault: its spec and what it did so far."""

    fault_id: str
    spec: FaultSpec
    fired: int = 0
    matched: int = 0

    @property
    def remaining(self) -> int | None:
        return None if self.spec.times is None else max(self.spec.times - self.fired, 0)

    @property
    def active(self) -> bool:
        return self.remaining != 0


@dataclass(frozen=True, slots=True)
class FaultEffect:
    """What the faults do to one call: wait ``latency`` seconds, then fail with ``failure``
    (None: run normally)."""

    latency: float = 0.0
    failure: Fault | None = None

    @property
    def empty(self) -> bool:
        return self.latency == 0.0 and self.failure is None


NO_EFFECT = FaultEffect()


@dataclass
class _Entry:
    fault: Fault
    rng: random.Random = field(default_factory=random.Random)


class FaultService:
    """The registry of injected faults; thread-safe."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._sleeper = threading.Event()  # set on close: pending latencies end

    def add(self, spec: FaultSpec) -> Fault:
        """Register ``spec`` (validated; InvalidValue when it breaks a rule)."""
        spec.validate()
        with self._lock:
            if len(self._entries) >= MAX_FAULTS:
                raise InvalidValue(f"at most {MAX_FAULTS} faults can be registered; "
                                   "clear some first")
            fault = Fault(f"fault-{next(self._ids)}", spec)
            self._entries[fault.fault_id] = _Entry(fault, random.Random(spec.seed))
            return fault

    def list(self) -> list[Fault]:
        with self._lock:
            return [entry.fault for entry in self._entries.values()]

    def get(self, fault_id: str) -> Fault:
        with self._lock:
            entry = self._entries.get(fault_id)
        if entry is None:
            raise ResourceNotFound(f"fault {fault_id!r} does not exist",
                                   Resource.FAULT, name=fault_id)
        return entry.fault

    def remove(self, fault_id: str) -> Fault:
        with self._lock:
            entry = self._entries.pop(fault_id, None)
        if entry is None:
            raise ResourceNotFound(f"fault {fault_id!r} does not exist",
                                   Resource.FAULT, name=fault_id)
        return entry.fault

    def clear(self) -> int:
        """Remove every fault; how many there were."""
        with self._lock:
            count = len(self._entries)
            self._entries.clear()
            return count

    def reset(self) -> None:
        """Remove every fault and number the next ones from ``fault-1`` again, as in a new
        emulator (a reset forgets everything; clearing keeps the numbering, so an id once
        given never names another fault until then)."""
        with self._lock:
            self._entries.clear()
            self._ids = itertools.count(1)

    @property
    def empty(self) -> bool:
        return not self._entries

    def effect(self, call: FaultCall) -> FaultEffect:
        """Decide what the faults do to ``call`` (counting the ones that fire)."""
        if not self._entries:
            return NO_EFFECT
        latency, failure = 0.0, None
        with self._lock:
            for entry in self._entries.values():
                fault = entry.fault
                if not fault.active or not fault.spec.matches(call):
                    continue
                is_latency = fault.spec.kind is FaultKind.LATENCY
                if not is_latency and failure is not None:
                    continue
                matched = fault.matched + 1
                fires = entry.rng.random() < fault.spec.probability
                entry.fault = replace(fault, matched=matched,
                                      fired=fault.fired + (1 if fires else 0))
                if not fires:
                    continue
                if is_latency:
                    latency += fault.spec.seconds
                else:
                    failure = entry.fault
        return FaultEffect(latency, failure) if latency or failure else NO_EFFECT

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of real time (cut short when the emulator closes)."""
        self._sleeper.wait(seconds)

    def close(self) -> None:
        self._sleeper.set()

