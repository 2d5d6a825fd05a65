"""The CloudFlow engine: drives the deterministic interpreter durably.

Pipeline, one module per job:

* :mod:`.stepping` — every happening (start, task result, due timer, stop, callback report)
  becomes one interpreter ``step``; its new execution state, history events, timers and tasks
  are committed in ONE transaction (``store/steps.py``, guarded by the execution's
  ``version``) before any of its commands is carried out; then its tasks go to the pool.
  Running executions stay decoded in memory (:mod:`.live`), so a step is: interpreter step,
  one write transaction, then bookkeeping under the database lock in commit order.
* :mod:`.scheduler` — one scheduler thread and a bounded worker pool serve every execution:
  due timers (mirrored in memory by :mod:`.timers`, so the scheduler never queries for them)
  and delayed deliveries are fired on the pool; otherwise the thread waits until the next
  ``fire_at`` or until woken. No thread, process or sleep per execution. A step the database
  refuses (a full disk) is tried again after a real-time back-off until it is saved.
* :mod:`.time_jump` — when virtual time may jump to the next Wait or retry timer: only when
  the engine is exactly idle; timeouts alone never make time jump.
* :mod:`.waiters` — DescribeExecution's long poll and friends block here and are woken when an
  execution ends, testing their predicate outside every engine lock.
* :mod:`.changes` — per-execution "changed" notifications: live readers (the web console)
  wait for an execution's next committed ``version`` without holding any engine lock.
* ``emulator/ports.py`` (beside this package) — what the engine needs from services (a
  ``TaskRunner`` whose ``start`` returns at once and answers through a callback, so waiting on
  a task never holds an engine thread) and what they need from it, as Protocols: the engine
  imports no service and no service imports the engine; ``emulator/app.py`` wires them.

:class:`FlowEngine` is the one object callers hold; see its docstring for what it offers.

Durability: on :meth:`FlowEngine.start`, tasks that were dispatched but whose result was never
committed are invoked again (at-least-once, as CloudFlow's Standard mode documents); timers
are rows and simply fire when due. A result that arrives for a stale version is dropped.
"""

from __future__ import annotations

from deployer.emulator.engine.flow_engine import EngineStats, FlowEngine

__all__ = ["EngineStats", "FlowEngine"]
