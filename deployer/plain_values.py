"""Settings as plain data: the same value, read from s.yaml (ruamel's commented maps and
sequences) or from an SDK answer, compares equal once its maps are dicts with string keys and
its sequences lists."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["plain_data"]


def plain_data(value: Any) -> Any:
    """``value`` with every mapping a ``dict`` (string keys) and every list or tuple a
    ``list``, recursively; anything else as it is."""
    if isinstance(value, Mapping):
        return {str(k): plain_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_data(v) for v in value]
    return value
