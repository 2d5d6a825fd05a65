"""Which flow definitions already rendered and validated cleanly, so a re-deploy skips both.

Rendering a flow template and validating the result (parse, FDL checks, cross-references) —
and importing Jinja2 and the validator — cost more than the rest of a no-op ``deploy up``. Both
are pure functions of their inputs: the definition file's text, the flow's ``definitionVars``,
name, region, account and execution mode, and the deployer's own code. So a deploy stores, for
every flow that validated cleanly, the SHA-256 of those inputs with the rendered text
(``validated.json`` beside the rendered flows), and the next deploy with the same digest takes
the stored text and skips rendering and validation. The code's part of the key is the package
version plus the size and modification time of the renderer's and validator's source files, so
editing or upgrading them invalidates every entry. Only clean verdicts are stored: a flow with
errors is rendered, checked and reported every time. An entry also keeps the functions the
flow invokes (:mod:`deployer.core.invocations`), which its role's policy grants.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deployer.config.specs import FlowSpec, Manifest
    from deployer.core.validation import FlowReport

__all__ = ["PLACEHOLDER_ACCOUNT_ID", "CheckedFlow", "ValidatedFlows", "check_flow_once"]

#: The account flows are checked with before the real one is known (16 digits, like a real
#: account id, so ARN shapes still check).
PLACEHOLDER_ACCOUNT_ID = "0000000000000000"

FILE_NAME = "validated.json"
MAX_ENTRIES = 32


@functools.cache
def _code_fingerprint() -> str:
    """Version + (path, size, mtime) of every source file the text and verdict depend on."""
    import deployer

    package = Path(deployer.__file__).resolve().parent
    sources = [package / "core" / name
               for name in ("rendering.py", "template_map.py", "validation.py",
                            "invocations.py")]
    sources += sorted((package / "fdl").rglob("*.py"))
    digest = hashlib.sha256(deployer.__version__.encode())
    for path in sources:
        try:
            stat = path.stat()
        except OSError:
            continue
        digest.update(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


class ValidatedFlows:
    """Rendered definitions that validated cleanly, by input digest, stored in ``directory``.

    Reading or writing the file never fails a deploy: an unreadable file counts as empty and a
    file that cannot be written is left as it was (the flow is then checked again next time).
    """

    def __init__(self, directory: Path) -> None:
        self.path = directory / FILE_NAME
        self._entries: dict[str, Any] | None = None

    @staticmethod
    def key(spec: FlowSpec, source: str, *, region: str, account_id: str) -> str:
        """The digest of everything the rendered text and its verdict depend on."""
        variables = json.dumps(dict(spec.definition_vars), sort_keys=True, default=repr)
        digest = hashlib.sha256(_code_fingerprint().encode())
        for part in (spec.name, region, account_id, spec.execution_mode.value,
                     str(spec.is_template), variables, source):
            digest.update(b"\0" + part.encode())
        return digest.hexdigest()

    def _load(self) -> dict[str, Any]:
        if self._entries is None:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                self._entries = {k: v for k, v in data["flows"].items()
                                 if isinstance(k, str) and isinstance(v, dict)
                                 and isinstance(v.get("text"), str)
                                 and isinstance(v.get("invokes"), list)}
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                self._entries = {}
        return self._entries

    def get(self, key: str) -> tuple[str, tuple[str, ...], bool] | None:
        """The rendered text, invoked functions and whether the set is dynamic, stored under
        ``key``, if any."""
        entry = self._load().get(key)
        if entry is None:
            return None
        return entry["text"], tuple(str(a) for a in entry["invokes"]), bool(entry.get("dynamic"))

    def add(self, key: str, text: str, invokes: tuple[str, ...] = (),
            dynamic: bool = False) -> None:
        """Remember a clean verdict (the newest ``MAX_ENTRIES`` are kept)."""
        entries = {k: v for k, v in self._load().items() if k != key}
        entries[key] = {"text": text, "invokes": list(invokes), "dynamic": dynamic}
        self._entries = dict(list(entries.items())[-MAX_ENTRIES:])
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=FILE_NAME, suffix=".partial", dir=self.path.parent)
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"version": 1, "flows": self._entries}, fh)
            os.replace(tmp, self.path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)


@dataclass(frozen=True, slots=True)
class CheckedFlow:
    """A flow's rendered definition, its report (None: validated cleanly before), and the
    functions it invokes."""

    text: str
    report: FlowReport | None
    invokes: tuple[str, ...] = ()
    dynamic: bool = False


def check_flow_once(manifest: Manifest, spec: FlowSpec, *, region: str, account_id: str,
                    rendered_dir: Path) -> CheckedFlow:
    """The rendered definition of ``spec`` and its validation report — or None for the report
    when these exact inputs already rendered and validated cleanly (see the module docstring).

    A report with errors is returned as is (the caller refuses to deploy); when the definition
    cannot be read or rendered the validator reports it as a diagnostic and the text is "".
    """
    if spec.document is not None:
        source: str | None = spec.document
    else:
        try:
            source = spec.definition.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            source = None  # the validator names the problem
    validated = ValidatedFlows(rendered_dir)
    key = "" if source is None else ValidatedFlows.key(spec, source, region=region,
                                                        account_id=account_id)
    known = validated.get(key) if key else None
    if known is not None:
        return CheckedFlow(known[0], None, known[1], known[2])
    from deployer.core.invocations import flow_invocations  # imports the FDL parser
    from deployer.core.rendering import render_flow  # imports Jinja2
    from deployer.core.validation import check_one_flow  # imports the FDL validator

    report = check_one_flow(manifest, spec, region=region, account_id=account_id,
                            rendered_dir=rendered_dir)
    if not report.ok:
        return CheckedFlow("", report)
    text = render_flow(spec, region=region, account_id=account_id,
                       project_dir=manifest.project_dir).text
    found = flow_invocations(text, region=region, account_id=account_id)
    if key:
        validated.add(key, text, found.arns, found.dynamic)
    return CheckedFlow(text, report, found.arns, found.dynamic)
