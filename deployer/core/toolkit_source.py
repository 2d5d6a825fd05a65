"""Where a new project's CI installs this toolkit from: a source that exists.

``deploy init`` writes ``requirements-dev.txt`` for the generated workflow and tests. Which
line it writes depends on how the running toolkit was installed (its PEP 610
``direct_url.json``):

* from a version control URL: ``cloudflow-deployer @ git+<url>@<commit>`` (that commit);
* from a package index (no ``direct_url.json``, not a checkout):
  ``cloudflow-deployer==<version>``;
* from a local directory or file (a checkout, an editable install, a wheel on disk): no index
  or URL would serve it, so ``deploy init`` writes a wheel of the running toolkit into the
  project, ``wheels/cloudflow_deployer-<version>-py3-none-any.whl`` (pure Python, built from
  the installed files; deterministic: the same files give the same bytes), and the line
  ``./wheels/<that wheel>``. Commit the wheel with the project.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

__all__ = ["ToolkitSource", "toolkit_source", "write_wheel"]

DIST = "cloudflow-deployer"
_STAMP = (2024, 1, 1, 0, 0, 0)
_SKIP = ("__pycache__", ".pyc", ".pyo")


@dataclass(frozen=True, slots=True)
class ToolkitSource:
    """The requirement line, and the wheel to write beside it (None: none needed)."""

    requirement: str
    wheel_name: str | None = None


def _direct_url() -> dict[str, object] | None:
    """The PEP 610 record of the installed toolkit (a checkout's own ``*.egg-info`` beside
    the sources has none; the installed ``*.dist-info`` has it)."""
    for dist in metadata.distributions(name=DIST):
        raw = dist.read_text("direct_url.json")
        if raw:
            found = json.loads(raw)
            return found if isinstance(found, dict) else None
    return None


def _from_checkout() -> bool:
    """Whether the running package sits in a source checkout of this toolkit."""
    import deployer

    pyproject = Path(deployer.__file__).resolve().parent.parent / "pyproject.toml"
    try:
        return f'name = "{DIST}"' in pyproject.read_text(encoding="utf-8")
    except OSError:
        return False


def toolkit_source() -> ToolkitSource:
    """How a new project installs this toolkit (see the module docstring)."""
    from deployer import __version__

    info = _direct_url()
    vcs = info.get("vcs_info") if info else None
    if info and isinstance(vcs, dict) and info.get("url"):
        commit = vcs.get("commit_id") or vcs.get("requested_revision") or ""
        suffix = f"@{commit}" if commit else ""
        return ToolkitSource(f"{DIST} @ {vcs.get('vcs', 'git')}+{info['url']}{suffix}")
    if not info and not _from_checkout():
        return ToolkitSource(f"{DIST}=={__version__}")
    name = f"cloudflow_deployer-{__version__}-py3-none-any.whl"
    return ToolkitSource(f"./wheels/{name}", name)


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _add(archive: zipfile.ZipFile, name: str, data: bytes, record: list[str]) -> None:
    entry = zipfile.ZipInfo(name, _STAMP)
    entry.compress_type = zipfile.ZIP_DEFLATED
    entry.external_attr = 0o644 << 16
    archive.writestr(entry, data)
    record.append(_record_line(name, data))


def write_wheel(target: Path) -> Path:
    """Write a wheel of the running toolkit to ``target`` (a file path) and return it."""
    import deployer
    from deployer import __version__

    package = Path(deployer.__file__).resolve().parent
    dist_info = f"cloudflow_deployer-{__version__}.dist-info"
    dist = metadata.distribution(DIST)
    record: list[str] = []
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(p for p in package.rglob("*") if p.is_file()):
            rel = path.relative_to(package.parent).as_posix()
            if any(part.endswith(_SKIP) or part in _SKIP for part in rel.split("/")):
                continue
            _add(archive, rel, path.read_bytes(), record)
        metadata_text = dist.read_text("METADATA") or f"Metadata-Version: 2.1\nName: {DIST}\n" \
            f"Version: {__version__}\n"
        _add(archive, f"{dist_info}/METADATA", metadata_text.encode(), record)
        _add(archive, f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: cloudflow-deployer"
             b" init\nRoot-Is-Purelib: true\nTag: py3-none-any\n", record)
        entry_points = dist.read_text("entry_points.txt") or ""
        _add(archive, f"{dist_info}/entry_points.txt", entry_points.encode(), record)
        _add(archive, f"{dist_info}/top_level.txt", b"deployer\n", record)
        record.append(f"{dist_info}/RECORD,,")
        _add(archive, f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode(), [])
    return target
