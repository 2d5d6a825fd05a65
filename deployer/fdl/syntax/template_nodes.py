"""AST nodes of templates: constructors (``InputConstructor``...) and Task ``Parameters``.

A :class:`Template` is a read-only mapping keyed by the key *as written* (``job_id.$``), with
these evaluation rules (carried out by :mod:`deployer.fdl.expressions.constructors`):

* a key ending in ``.$`` is an *expression key*: its value is an :class:`Expr` (when the YAML value
  is a string) and it produces the key without the suffix (:attr:`TemplateField.output_key`);
* a mapping whose only key is ``$`` evaluates to the value of that expression itself
  (:attr:`Template.root_expression`), at the top of a constructor or at any depth;
* other values are literals; nested mappings are walked recursively, lists are
  :class:`TemplateList` whose mapping elements are walked and whose strings stay literal.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Union

from deployer.fdl.expressions.constructors import (
    EXPRESSION_SUFFIX,
    ROOT_EXPRESSION_KEY,
    is_expression_key,
)
from deployer.fdl.syntax.positions import Expr, Position

__all__ = [
    "EXPRESSION_SUFFIX",
    "ROOT_EXPRESSION_KEY",
    "Template",
    "TemplateField",
    "TemplateList",
    "TemplateValue",
    "is_expression_key",
]

TemplateValue = Union[None, bool, int, float, str, Expr, "Template", "TemplateList"]


@dataclass(frozen=True, slots=True)
class TemplateField:
    """One key of a template. ``value`` is an :class:`Expr` when the key is an expression key
    and the YAML value is a string; anything else under an expression key is kept as written
    (and reported by the validator)."""

    key: str
    value: TemplateValue
    position: Position
    value_position: Position

    @property
    def is_expression(self) -> bool:
        """True for ``name.$`` keys and for the root key ``$``."""
        return is_expression_key(self.key)

    @property
    def output_key(self) -> str:
        """The key this field produces: ``job_id.$`` -> ``job_id``; ``$`` -> ``""`` (root)."""
        if self.key == ROOT_EXPRESSION_KEY:
            return ""
        if self.key.endswith(EXPRESSION_SUFFIX):
            return self.key[: -len(EXPRESSION_SUFFIX)]
        return self.key


@dataclass(frozen=True, slots=True)
class Template(Mapping[str, TemplateValue]):
    """A constructor or parameter mapping: a read-only mapping keyed by the keys as written."""

    fields: tuple[TemplateField, ...]
    position: Position

    def __getitem__(self, key: str) -> TemplateValue:
        for item in self.fields:
            if item.key == key:
                return item.value
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (item.key for item in self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def field(self, key: str) -> TemplateField | None:
        """The field written as ``key``, or None."""
        return next((item for item in self.fields if item.key == key), None)

    def to_plain(self) -> dict[str, object]:
        """The template as plain data (keys as written, expressions as their text): the shape
        ``deployer.fdl.expressions.constructors.build_value`` takes."""
        return {item.key: _plain(item.value) for item in self.fields}

    @property
    def root_expression(self) -> Expr | None:
        """The expression of a mapping whose only key is ``$`` (its value *is* the result)."""
        if len(self.fields) == 1 and self.fields[0].key == ROOT_EXPRESSION_KEY:
            value = self.fields[0].value
            return value if isinstance(value, Expr) else None
        return None


@dataclass(frozen=True, slots=True)
class TemplateList(Sequence[TemplateValue]):
    """A list inside a template; its strings are literals, its mappings are templates."""

    items: tuple[TemplateValue, ...]
    position: Position

    def __getitem__(self, index: int) -> TemplateValue:  # type: ignore[override]
        return self.items[index]

    def __len__(self) -> int:
        return len(self.items)


def _plain(value: TemplateValue) -> object:
    if isinstance(value, Expr):
        return value.text
    if isinstance(value, Template):
        return value.to_plain()
    if isinstance(value, TemplateList):
        return [_plain(item) for item in value.items]
    return value
