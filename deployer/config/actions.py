"""``actions`` in s.yaml: the commands Serverless Devs runs around a deploy or a remove.

As Serverless Devs v3 documents them (docs/zh/yaml.md, "行为描述"), at the top level (global)
and on a resource::

    actions:
      pre-deploy:                    # before; a failure stops here
        - run: pip install -r requirements.txt -t .
          path: ./functions/start_job   # default ./, relative to s.yaml
      success-deploy: [...]          # after it succeeded
      fail-deploy: [...]             # after it failed
      complete-deploy: [...]         # after either (post-deploy: the old name)

and the same four for ``remove`` (``deploy down``). A ``run`` step runs its command through
the shell in ``path``; a non-zero exit fails the step unless ``allow_failure`` is ``true``, or
``{exit_code: [...], command: [...]}`` lists Serverless Devs' code for it (101: the command
failed, 100: its path does not exist) and the command (deploy, remove). Hook names may use
``${regex('...')}`` for the command (``pre-${regex('.')}``: before every command).

Carried out besides ``run``: an fc3 resource's ``success-deploy`` steps ``component: fc3
version publish`` / ``component: fc3 alias publish`` (:mod:`deployer.config.releases`). Refused,
by name: ``plugin`` steps, other ``component`` steps, and hooks of other commands.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deployer.config.paths import BROKEN, Path_
from deployer.config.problems import ProblemLog
from deployer.config.variables import Resolver

__all__ = ["HOOK_COMMANDS", "HOOK_TYPES", "AllowFailure", "Hooks", "RunStep", "hook_matches",
           "split_hook"]

HOOK_TYPES = ("pre", "success", "fail", "complete")
HOOK_COMMANDS = ("deploy", "remove")
#: Serverless Devs' codes for a failed ``run`` step (engine EXIT_CODE): matched by
#: ``allow_failure.exit_code``.
RUN_FAILED, PATH_MISSING = 101, 100
_REGEX_HOOK = re.compile(r"""^(?P<type>[a-z]+)-\$\{\s*regex\(\s*(['"])(?P<re>.*)\2\s*\)\s*\}$""")


@dataclass(frozen=True, slots=True)
class AllowFailure:
    """When a failed step does not fail the hook."""

    always: bool = False
    exit_codes: tuple[int, ...] | None = None
    commands: tuple[str, ...] | None = None

    def allows(self, code: int, command: str) -> bool:
        if self.always:
            return True
        if self.exit_codes is None and self.commands is None:
            return False
        return (self.exit_codes is None or code in self.exit_codes) and (
            self.commands is None or command in self.commands)


@dataclass(frozen=True, slots=True)
class RunStep:
    """One ``run`` step of a hook: ``hook`` is ``pre``/``success``/``fail``/``complete``,
    ``resource`` None for a global action; ``where`` is its place in s.yaml (``file:line``)."""

    hook: str
    commands: tuple[str, ...]  # the commands it runs for (deploy, remove)
    run: str
    path: Path
    path_text: str
    allow_failure: AllowFailure
    resource: str | None
    where: str


@dataclass(frozen=True, slots=True)
class Hooks:
    """Every ``run`` step of s.yaml, in file order."""

    steps: tuple[RunStep, ...] = ()

    def select(self, hook: str, command: str, resource: str | None) -> tuple[RunStep, ...]:
        """The steps of ``hook`` for ``command``, global (``resource`` None) or a resource's."""
        return tuple(s for s in self.steps if s.hook == hook and command in s.commands
                     and s.resource == resource)

    def __bool__(self) -> bool:
        return bool(self.steps)


def split_hook(name: str) -> tuple[str, tuple[str, ...]] | None:
    """``pre-deploy`` -> ``('pre', ('deploy',))``; ``post-deploy`` -> ``complete`` (its old
    name); ``pre-${regex('.')}`` -> every command the pattern matches; None when the name
    is not ``<type>-<command>``."""
    m = _REGEX_HOOK.match(name)
    if m:
        try:
            pattern = re.compile(m["re"])
        except re.error:
            return None
        hook_type = "complete" if m["type"] == "post" else m["type"]
        return hook_type, tuple(c for c in HOOK_COMMANDS if pattern.search(c))
    hook_type, dash, command = name.partition("-")
    if not dash or not command:
        return None
    return ("complete" if hook_type == "post" else hook_type), (command,)


def hook_matches(name: str) -> bool:
    """Whether ``name`` is a hook this toolkit runs (its type known, its command ours)."""
    parsed = split_hook(name)
    return parsed is not None and parsed[0] in HOOK_TYPES and all(
        c in HOOK_COMMANDS for c in parsed[1]) and bool(parsed[1])


def allow_failure(value: Any) -> AllowFailure | str:
    """An ``allow_failure`` value, or the problem with it."""
    if value is None:
        return AllowFailure()
    if isinstance(value, bool):
        return AllowFailure(always=value)
    if not isinstance(value, Mapping):
        return "must be true, false or {exit_code: [...], command: [...]}"
    unknown = set(value) - {"exit_code", "command"}
    if unknown:
        return f"unknown key(s) {', '.join(sorted(map(str, unknown)))}: use exit_code, command"
    codes, commands = value.get("exit_code"), value.get("command")
    if codes is not None and not (isinstance(codes, list) and all(
            isinstance(c, int) and not isinstance(c, bool) for c in codes)):
        return "exit_code must be a list of numbers (101: the command failed, 100: its path " \
               "does not exist)"
    if commands is not None and not (isinstance(commands, list) and all(
            isinstance(c, str) for c in commands)):
        return "command must be a list of command names (deploy, remove)"
    return AllowFailure(False, None if codes is None else tuple(codes),
                        None if commands is None else tuple(commands))


@dataclass(frozen=True, slots=True)
class ComponentStep:
    """A ``component:`` step of a resource's hook (``fc3 version publish`` ...)."""

    hook: str
    where: Path_
    command: str


def parse_actions(node: Any, where: Path_, *, resolver: Resolver, log: ProblemLog,
                  base_dir: Path, resource: str | None) -> tuple[list[RunStep],
                                                                 list[ComponentStep]]:
    """The ``run`` and ``component`` steps of one ``actions`` map (global when ``resource``
    is None); every problem goes to ``log``."""
    runs: list[RunStep] = []
    components: list[ComponentStep] = []
    if node is None:
        return runs, components
    if not isinstance(node, Mapping):
        log.error(where, "must be a map of hooks such as pre-deploy: [steps]")
        return runs, components
    for name, steps in node.items():
        at = (*where, name)
        parsed = split_hook(str(name))
        if parsed is None or parsed[0] not in HOOK_TYPES:
            log.error(at, f"unknown hook {name!r}: hooks are pre-, success-, fail- and "
                          "complete-<command>")
            continue
        hook, commands = parsed
        if not commands or any(c not in HOOK_COMMANDS for c in commands):
            log.error(at, f"hook {name!r} is for a command this toolkit does not run hooks "
                          "for; hooks run around deploy (deploy up) and remove (deploy down)")
            continue
        if not isinstance(steps, list):
            log.error(at, "must be a list of steps (- run: ...)")
            continue
        for index, step in enumerate(steps):
            _step(step, (*at, index), hook, commands, resolver=resolver, log=log,
                  base_dir=base_dir, resource=resource, runs=runs, components=components)
    return runs, components


def _step(step: Any, at: Path_, hook: str, commands: tuple[str, ...], *, resolver: Resolver,
          log: ProblemLog, base_dir: Path, resource: str | None, runs: list[RunStep],
          components: list[ComponentStep]) -> None:
    if not isinstance(step, Mapping):
        log.error(at, "must be a map: run (with path), component or plugin")
        return
    if "plugin" in step:
        log.error((*at, "plugin"), f"plugin steps are not run by this toolkit (plugin "
                                   f"{step.get('plugin')!r}); use a run step")
        return
    if "component" in step:
        if resource is None:
            log.error((*at, "component"), "global actions take run and plugin steps only")
        elif set(step) - {"component"}:
            log.error(at, "a component step takes only component: (no path or allow_failure)")
        elif isinstance(step.get("component"), str):
            components.append(ComponentStep(hook, at, step["component"]))
        else:
            log.error((*at, "component"), "must be a string: <component> <command> [args]")
        return
    if "run" not in step:
        log.error(at, "a step needs run: <command> (plugin and other step kinds are not run)")
        return
    unknown = sorted(str(k) for k in set(step) - {"run", "path", "allow_failure"})
    if unknown:
        log.error((*at, unknown[0]), f"unknown step key {unknown[0]!r}: a run step takes run, "
                                     "path and allow_failure")
        return
    values = resolver.resolve(at, step)
    run, path_text = values.get("run"), values.get("path", "./")
    allowed = allow_failure(values.get("allow_failure"))
    if isinstance(allowed, str):
        log.error((*at, "allow_failure"), allowed)
        return
    if not isinstance(run, str) or not run.strip():
        if run is not BROKEN:
            log.error((*at, "run"), "must be the command line to run")
        return
    if not isinstance(path_text, str):
        if path_text is not BROKEN:
            log.error((*at, "path"), "must be a directory, relative to s.yaml")
        return
    runs.append(RunStep(hook, commands, run, (base_dir / path_text).resolve(), path_text,
                        allowed, resource, str(log.position(at))))
