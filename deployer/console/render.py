"""Jinja2 pages from view-models: autoescape on everywhere (inputs and outputs are user data).

This environment is separate from the flow-template renderer (which must not escape YAML).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import jinja2

__all__ = ["render_fragment", "render_page"]


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("deployer.console", "templates"),
        autoescape=True, trim_blocks=True, lstrip_blocks=True,
        undefined=jinja2.StrictUndefined)
    env.filters["js"] = _script_json
    return env


def _script_json(value: Any) -> str:
    """JSON safe inside ``<script type="application/json">`` (no ``</``, no ``<!--``)."""
    from markupsafe import Markup

    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e")
                  .replace("&", "\\u0026").replace("\u2028", "\\u2028")
                  .replace("\u2029", "\\u2029"))


def render_page(template: str, **context: Any) -> str:
    """A whole page (``templates/<template>``)."""
    return _environment().get_template(template).render(**context)


def render_fragment(template: str, macro: str, *args: Any) -> str:
    """One macro of a template, for the live updates (same markup as the page)."""
    module = _environment().get_template(template).module
    return str(getattr(module, macro)(*args))
