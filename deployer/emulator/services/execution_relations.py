"""An execution's parent and children, as DescribeExecution shows them (docs/emulator.md,
"Sub-flows and map runs on the wire").

* ``parent``: the execution whose Task started this one (a sub-flow, ``FNF:StartExecution``,
  or an iteration of a distributed Map), with the map run's name for the latter;
* ``children``: the sub-flow executions this one started (a map run's children are not
  listed one by one: ``ListExecutions`` with ``MapRunName`` pages through them);
* ``map_runs``: the names of the map runs this execution started (for DescribeMapRun).
"""

from __future__ import annotations

from dataclasses import dataclass

from deployer.emulator.store.flow_repos import FlowRepo
from deployer.emulator.store.link_repos import LinkRepo
from deployer.emulator.store.map_run_repos import MapRunRepo

__all__ = ["ExecutionRef", "ExecutionRelations", "Relations"]

#: At most this many sub-flow children are listed (oldest first).
MAX_CHILDREN = 100


@dataclass(frozen=True, slots=True)
class ExecutionRef:
    """Another execution, by flow and name."""

    flow_name: str
    name: str


@dataclass(frozen=True, slots=True)
class Relations:
    parent: ExecutionRef | None = None
    map_run: str = ""  # the parent's map run this execution is an iteration of
    children: tuple[ExecutionRef, ...] = ()
    map_runs: tuple[str, ...] = ()


class ExecutionRelations:
    """Reads an execution's links (``execution_links``, ``map_runs``)."""

    def __init__(self, links: LinkRepo, repo: FlowRepo, map_runs: MapRunRepo) -> None:
        self._links = links
        self._repo = repo
        self._map_runs = map_runs

    def of(self, seq: int) -> Relations:
        """The relations of execution ``seq`` (empty when it has none)."""
        links = self._links.links(seq)
        parent = None
        if links.parent_seq:
            row = self._repo.execution_by_seq(links.parent_seq)
            parent = None if row is None else ExecutionRef(row.flow_name, row.name)
        children = []
        for child in self._links.subflow_children(seq, MAX_CHILDREN):
            row = self._repo.execution_by_seq(child)
            if row is not None:
                children.append(ExecutionRef(row.flow_name, row.name))
        return Relations(parent, links.map_run, tuple(children),
                         tuple(self._map_runs.of_execution(seq)))
