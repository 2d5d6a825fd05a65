"""Flow definitions: a Jinja2 template (``*.j2``) rendered with StrictUndefined, or a plain
YAML file read verbatim.

Templates render in Jinja2's sandbox: no reaching Python internals (``__class__``...), no
ranges over 100,000, and no ``{% include %}`` or ``{% import %}`` (a flow template is one file).
Whatever fails while rendering is a TemplateError naming the template line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import jinja2.sandbox

from deployer.config.specs import FlowSpec, LineMap
from deployer.core.template_map import build_line_map
from deployer.errors import InvalidInputError, NotFoundError

__all__ = ["RenderedFlow", "TemplateError", "WrittenFlow", "render_flow", "template_context"]


class TemplateError(InvalidInputError):
    """A flow definition that cannot be read or rendered; ``line`` is 1-based (None when
    unknown) and ``reason`` the message without the file and line."""

    def __init__(self, shown: str, line: int | None, reason: str, *,
                 hint: str | None = None) -> None:
        super().__init__(f"{shown}:{line}: {reason}" if line else f"{shown}: {reason}",
                         hint=hint)
        self.file, self.line, self.reason = shown, line, reason


@dataclass(frozen=True, slots=True)
class RenderedFlow:
    """A flow definition ready for CloudFlow: its name, FDL text and the file it came from;
    ``line_map`` maps rendered positions to template ones (None for plain YAML files, or when
    the template cannot be mapped)."""

    flow: str
    text: str
    source_path: Path
    execution_mode: str = "Standard"
    line_map: LineMap | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"flow": self.flow, "definition": self.text}


@dataclass(frozen=True, slots=True)
class WrittenFlow:
    """A rendered flow written to a file (``deploy render -o FILE``)."""

    flow: str
    path: Path


def template_context(spec: FlowSpec, *, region: str, account_id: str) -> dict[str, Any]:
    """``definitionVars`` plus ``region``, ``account_id`` and ``flow_name`` (the latter win)."""
    return {**spec.definition_vars, "region": region, "account_id": account_id,
            "flow_name": spec.name}


def render_flow(
    spec: FlowSpec, *, region: str, account_id: str, project_dir: Path | None = None
) -> RenderedFlow:
    """Render ``spec.definition``; ``*.j2`` files through Jinja2, other files verbatim.

    Undefined template variables are errors (StrictUndefined). Raises InvalidInputError naming
    the template file (relative to ``project_dir`` when inside it), the line and the missing
    variable or syntax problem; NotFoundError when the definition file is missing. Pure file
    reading; no network.
    """
    shown = _display(spec.definition, project_dir)
    if spec.document is not None:  # inline or ${yaml(file())}: resolved when s.yaml loaded
        return RenderedFlow(spec.name, spec.document, spec.definition,
                            spec.execution_mode.value, spec.document_map)
    try:
        source = spec.definition.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFoundError(f"flow definition {shown} does not exist") from None
    except UnicodeDecodeError as exc:
        data = spec.definition.read_bytes()
        raise TemplateError(shown, data.count(b"\n", 0, exc.start) + 1,
                            f"not UTF-8 text (byte 0x{data[exc.start]:02x})",
                            hint="save the file as UTF-8") from None
    except OSError as exc:
        raise TemplateError(shown, None, f"cannot read the flow definition: {exc.strerror}"
                            ) from None
    text, line_map = source, None
    if spec.is_template:
        context = template_context(spec, region=region, account_id=account_id)
        text, line_map = render_mapped(source, shown, context)
    return RenderedFlow(spec.name, text, spec.definition, spec.execution_mode.value, line_map)


class _OneFileLoader(jinja2.BaseLoader):
    """Refuses every ``{% include %}``, ``{% import %}`` and ``{% extends %}``."""

    def get_source(self, environment: jinja2.Environment, template: str) -> Any:
        raise jinja2.TemplateNotFound(
            template, f"{{% include %}}, {{% import %}} and {{% extends %}} of '{template}' "
                      "are not supported: a flow template is one file")


def _environment() -> jinja2.Environment:
    return jinja2.sandbox.SandboxedEnvironment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False,
        loader=_OneFileLoader())


def render_mapped(source: str, shown: str, context: Mapping[str, Any]
                  ) -> tuple[str, LineMap | None]:
    """:func:`render_template`, plus the map from rendered to template positions (see
    :mod:`deployer.core.template_map`; None when the template cannot be mapped)."""
    text = render_template(source, shown, context)
    return text, build_line_map(_environment(), source, context, text)


def render_template(source: str, shown: str, context: Mapping[str, Any]) -> str:
    """Render Jinja2 ``source`` with ``context`` (StrictUndefined); TemplateError naming
    ``shown`` and the line on a syntax error or an undefined variable."""
    env = _environment()
    try:
        template = env.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(shown, exc.lineno, f"template syntax error: {exc.message}") from None
    try:
        return template.render(context)
    except jinja2.UndefinedError as exc:
        raise TemplateError(
            shown, _template_line(exc), f"template variable {exc.message}",
            hint="give it under definitionVars in s.yaml (region, account_id and flow_name "
                 "are provided by the deployer)",
        ) from None
    except jinja2.TemplateError as exc:
        raise TemplateError(shown, _template_line(exc), f"template error: {exc}") from None
    except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError) as exc:
        raise TemplateError(shown, _template_line(exc),
                            f"template error: {type(exc).__name__}: {exc}") from None


def _template_line(exc: BaseException) -> int | None:
    """The template line from the traceback frames Jinja2 maps back to ``<template>``."""
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _display(path: Path, project_dir: Path | None) -> str:
    if project_dir is not None:
        try:
            return str(path.resolve().relative_to(Path(project_dir).resolve()))
        except ValueError:
            pass
    return str(path)
