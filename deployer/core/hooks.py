"""Running s.yaml's ``actions`` (:mod:`deployer.config.actions`) around ``deploy up`` and
``deploy down``, as Serverless Devs runs them.

A ``run`` step runs through the shell in its ``path`` with this process's environment; its
output (stdout and stderr, merged) is streamed line by line to the progress sink as it comes.
A step that exits non-zero — or whose path is not a directory — fails its hook, unless its
``allow_failure`` allows it (Serverless Devs' codes: 101 the command failed, 100 the path is
missing); a failed hook stops the command there.

When they run (``deploy up``): the global ``pre-deploy`` steps, then each resource's, in
deploy order, before anything is packaged or planned (they usually prepare the code);
after a resource is applied its ``success-deploy`` (or, when it failed, ``fail-deploy``) and
``complete-deploy`` steps; at the end the global ``success-deploy`` or ``fail-deploy``, then
``complete-deploy``. A failed ``success`` hook fails the deploy: later resources are not
applied. ``deploy down`` does the same with the ``-remove`` hooks. ``deploy plan`` and
``deploy dev`` run none.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from deployer.config.actions import PATH_MISSING, RUN_FAILED, Hooks, RunStep
from deployer.errors import OperationError

__all__ = ["HookFailed", "HookRunner"]


class HookFailed(OperationError):
    """A hook's step failed (exit 1); the message names the step, where it is written and
    its exit status."""


@dataclass
class HookRunner:
    """The hooks of one command (``deploy`` or ``remove``); ``output`` receives every line."""

    hooks: Hooks
    command: str
    output: Callable[[str], None]

    def run(self, hook: str, resource: str | None = None) -> None:
        """Run the ``hook`` steps of ``resource`` (None: the global ones), in order."""
        for step in self.hooks.select(hook, self.command, resource):
            self._step(step)

    def run_each(self, hook: str, resources: Iterable[str]) -> None:
        for resource in resources:
            self.run(hook, resource)

    def _step(self, step: RunStep) -> None:
        owner = f"resource {step.resource}" if step.resource else "global"
        label = f"{step.hook}-{self.command} action of {owner} ({step.where})"
        if not step.path.is_dir():
            if step.allow_failure.allows(PATH_MISSING, self.command):
                self.output(f"{label}: path {step.path_text} does not exist (allowed to fail)")
                return
            raise HookFailed(f"{label}: path {step.path_text!r} is not a directory",
                             hint="fix path: in s.yaml (relative to s.yaml)")
        self.output(f"{label}: running `{step.run}` in {step.path_text}")
        code = _stream(step, self.output)
        if code == 0:
            return
        if step.allow_failure.allows(RUN_FAILED, self.command):
            self.output(f"{label}: `{step.run}` exited with {code} (allowed to fail)")
            return
        raise HookFailed(f"{label}: `{step.run}` exited with {code}",
                         hint="its output is above; fix the command, or set allow_failure: "
                              "true on the step")


def _stream(step: RunStep, output: Callable[[str], None]) -> int:
    """Run ``step.run`` in ``step.path`` through the shell; each line of its output goes to
    ``output``; the exit status (a signal: 128 + its number)."""
    try:
        process = subprocess.Popen(
            step.run, shell=True, cwd=step.path, env=dict(os.environ),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    except OSError as exc:
        raise HookFailed(f"cannot run `{step.run}`: {exc.strerror}") from None
    assert process.stdout is not None
    try:
        for raw in iter(process.stdout.readline, b""):
            output("  | " + raw.decode("utf-8", "replace").rstrip("\r\n"))
    finally:
        process.stdout.close()
        code = process.wait()
    return code if code >= 0 else 128 - code
