"""The instances of every function, as bookkeeping: which one serves a request, which ones stop.

Rules (docs/runtime.md, "Instances"):

* An instance serves up to ``instance_concurrency`` requests at once (1 for the built-in
  runtimes) and is reused only for an **equal** :class:`InstanceSpec`, once it is ready (started,
  its initializer run).
* A function (account, region, name) has at most ``max_instances`` live instances; callers
  beyond wait until one has room or is gone.
* An instance idle for longer than its idle time (``idleTimeout``, else the runtime's) is
  expired: never handed out again, stopped by the next reap or by the next caller.
* Instances of an older spec for the same qualifier and version are stopped when idle.
* A **provisioned** instance (started ahead of requests, :meth:`InstancePool.open_provisioned`)
  is never expired for idleness while it stays provisioned; dropping it from the provision
  (:meth:`InstancePool.keep_provisioned`) makes it an on-demand instance that ages as others.
* Custom runtime servers listen on a port of the machine's network unless instances have
  private networks: then one instance at a time holds a port (a lease); an idle holder is
  evicted for a new instance, a busy one makes the caller wait.

Nothing here starts or stops processes: every method returns the instances to stop, and the
runtime stops them outside the lock.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from deployer.emulator.runtime.model import (
    InstanceSpec,
    RuntimeUnavailableError,
    TemporaryCredentials,
)
from deployer.emulator.runtime.worker import Worker

__all__ = ["Instance", "InstancePool", "Taken"]


@dataclass(eq=False, slots=True)
class Instance:
    """Bookkeeping of one instance (its worker is None while it starts)."""

    spec: InstanceSpec
    instance_id: str
    last_used: float
    worker: Worker | None = None
    in_flight: int = 1
    ready: bool = False  # started and initialized: may take more requests
    retired: bool = False
    initialized: bool = False
    served: int = 0  # requests answered (a preStop hook runs only after the first)
    tmp_dir: Path | None = None
    credentials: TemporaryCredentials | None = None  # the role keys the worker has
    port: int | None = None  # the port it holds a lease on (custom runtimes, shared network)
    provisioned: bool = False  # kept warm by a provision config: never idle-expired
    lock: threading.Lock = field(default_factory=threading.Lock)  # one initializer at a time

    @property
    def capacity(self) -> int:
        return max(1, self.spec.instance_concurrency)


@dataclass(slots=True)
class Taken:
    """What :meth:`InstancePool.acquire` gives: the instance, whether it is new, and the
    instances to stop first (port holders) or whenever (stale or expired ones)."""

    instance: Instance
    cold: bool
    stop_now: list[Instance]
    stop_later: list[Instance]


class InstancePool:
    """See the module docstring. Thread-safe."""

    def __init__(self, max_instances: int, idle_ttl: Callable[[InstanceSpec], float]) -> None:
        self._max = max_instances
        self._ttl = idle_ttl
        self._cond = threading.Condition()
        self._slots: dict[tuple[str, str, str], list[Instance]] = {}
        self._ports: dict[int, Instance] = {}
        self.shared_network = True  # custom runtime servers share the machine's ports
        self.closed = False

    def acquire(self, spec: InstanceSpec, now: Callable[[], float]) -> Taken:
        """A warm instance with room, or a new one (waits while the function is at its cap or
        its port is held by a busy instance); RuntimeUnavailableError once closed."""
        stop_later: list[Instance] = []
        stop_now: list[Instance] = []
        with self._cond:
            while True:
                if self.closed:
                    raise RuntimeUnavailableError("the function runtime has been closed")
                instant = now()
                slots = self._slots.setdefault(spec.function_key, [])
                stop_later.extend(self._drop_stale(slots, spec, instant))
                warm = [s for s in slots if s.ready and not s.retired and s.spec == spec
                        and s.in_flight < s.capacity]
                if warm:
                    chosen = max(warm, key=lambda s: (s.in_flight, s.last_used))
                    chosen.in_flight += 1
                    return Taken(chosen, False, stop_now, stop_later)
                port = self._port_of(spec)
                holder = self._ports.get(port) if port is not None else None
                if len(slots) < self._max and (holder is None or holder.in_flight == 0):
                    if holder is not None:
                        self._remove(holder)
                        stop_now.append(holder)
                    new = Instance(spec, _new_instance_id(), instant)
                    slots.append(new)
                    if port is not None:
                        new.port = port
                        self._ports[port] = new
                    return Taken(new, True, stop_now, stop_later)
                self._cond.wait(timeout=1.0)  # also wakes to see instances expire

    def _drop_stale(self, slots: list[Instance], spec: InstanceSpec,
                    instant: float) -> list[Instance]:
        """Idle instances that are retired, of an older spec, or past their idle time."""
        stale = [s for s in slots if s.in_flight == 0 and (
            s.retired or self._idle_out(s, instant)
            or (s.spec.instance_key == spec.instance_key and s.spec != spec))]
        for old in stale:
            self._remove(old)
        return stale

    def _idle_out(self, instance: Instance, instant: float) -> bool:
        return not instance.provisioned and instant - instance.last_used > self._ttl(
            instance.spec)

    def open_provisioned(self, spec: InstanceSpec, instant: float) -> Instance | None:
        """A new provisioned instance of ``spec`` (being started: release it once ready), or
        None when the function is at its cap or the port it needs is held by a busy or
        provisioned instance."""
        with self._cond:
            if self.closed:
                return None
            slots = self._slots.setdefault(spec.function_key, [])
            port = self._port_of(spec)
            holder = self._ports.get(port) if port is not None else None
            if len(slots) >= self._max or (holder is not None and (
                    holder.in_flight or holder.provisioned)):
                return None
            if holder is not None:
                self._remove(holder)
                holder.retired = True
            new = Instance(spec, _new_instance_id(), instant, provisioned=True)
            slots.append(new)
            if port is not None:
                new.port = port
                self._ports[port] = new
            return new

    def keep_provisioned(self, spec: InstanceSpec, target: int) -> tuple[int, list[Instance]]:
        """Keep at most ``target`` provisioned instances of ``spec``'s qualifier and version:
        those of an older spec, or beyond the target, become on-demand (retired when of an
        older spec). Returns (provisioned instances of ``spec`` left, idle ones to stop)."""
        with self._cond:
            mine = [s for s in self._slots.get(spec.function_key, []) if s.provisioned
                    and not s.retired and s.spec.instance_key == spec.instance_key]
            keep = [s for s in mine if s.spec == spec][:max(0, target)]
            stop: list[Instance] = []
            for instance in mine:
                if instance in keep:
                    continue
                instance.provisioned = False
                if instance.spec != spec:
                    instance.retired = True
                    if instance.in_flight == 0:
                        self._remove(instance)
                        stop.append(instance)
            return len(keep), stop

    def _port_of(self, spec: InstanceSpec) -> int | None:
        return spec.custom.port if spec.custom is not None and self.shared_network else None

    def _remove(self, instance: Instance) -> None:
        slots = self._slots.get(instance.spec.function_key, [])
        if instance in slots:
            slots.remove(instance)
        if instance.port is not None and self._ports.get(instance.port) is instance:
            del self._ports[instance.port]
        self._cond.notify_all()

    def mark_ready(self, instance: Instance) -> None:
        with self._cond:
            instance.ready = True
            self._cond.notify_all()

    def release(self, instance: Instance, discard: bool, instant: float) -> list[Instance]:
        """One request of ``instance`` ended; returns it when it must stop now."""
        with self._cond:
            instance.in_flight -= 1
            instance.last_used = instant
            gone = discard or instance.worker is None or (
                instance.retired and instance.in_flight == 0)
            if discard:
                instance.retired = True
            self._cond.notify_all()
            if gone and instance.in_flight == 0:
                self._remove(instance)
                return [instance]
            return []

    def retire(self, key: tuple[str, str, str], qualifier: str | None) -> list[Instance]:
        """The function's instances (of ``qualifier``, or all) take no new requests; returns
        the idle ones, to stop now (busy ones stop when their last request ends)."""
        with self._cond:
            chosen = [s for s in self._slots.get(key, [])
                      if qualifier is None or s.spec.qualifier == qualifier]
            for instance in chosen:
                instance.retired = True
            idle = [s for s in chosen if s.in_flight == 0]
            for instance in idle:
                self._remove(instance)
            return idle

    def expired(self, instant: float) -> list[Instance]:
        """Idle instances past their idle time, removed from the pool."""
        with self._cond:
            gone = [s for slots in self._slots.values() for s in slots
                    if s.in_flight == 0 and self._idle_out(s, instant)]
            for instance in gone:
                self._remove(instance)
            return gone

    def close(self) -> tuple[list[Instance], list[Instance]]:
        """(busy, idle) instances; the pool takes no more requests."""
        with self._cond:
            self.closed = True
            everything = [s for slots in self._slots.values() for s in slots]
            for instance in everything:
                instance.retired = True
            idle = [s for s in everything if s.in_flight == 0]
            for instance in idle:
                self._remove(instance)
            return [s for s in everything if s.in_flight], idle

    def provisioned_count(self, spec: InstanceSpec) -> int:
        with self._cond:
            return sum(1 for s in self._slots.get(spec.function_key, [])
                       if s.provisioned and not s.retired and s.spec == spec)

    def count(self, key: tuple[str, str, str]) -> int:
        with self._cond:
            return len(self._slots.get(key, []))

    def workers(self) -> list[Worker]:
        with self._cond:
            return [s.worker for slots in self._slots.values() for s in slots
                    if s.worker is not None]


def _new_instance_id() -> str:
    """FC's instance id shape: ``c-`` + 8 + 8 + 12 hex digits."""
    digits = uuid.uuid4().hex
    return f"c-{digits[:8]}-{digits[8:16]}-{digits[16:28]}"
