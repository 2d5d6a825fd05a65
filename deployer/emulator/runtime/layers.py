"""A function's layers as one ``/opt`` tree, as Function Compute mounts them.

FC unpacks every layer of a function into ``/opt``, merging them in reverse order of the
function's ``layers`` list, so the first layer listed wins when two hold the same file (FC docs,
"Create a custom layer": 多个层按照层配置的逆序合并; CONFIRMED). :class:`LayerTrees` builds that
merged tree once per distinct list of layer contents, under ``<work_dir>/code/opt-<digest>/``:
zips are unpacked by the code cache first, then every file is hard-linked (copied across file
systems) into a staging directory that is renamed into place, read-only like the code.

Inside an instance the tree is bind-mounted on ``/opt`` when the sandbox has a private mount
namespace (``sandbox.py``); otherwise the worker uses the tree where it is, and paths a handler
builds from ``/opt`` literally do not reach it (docs/runtime.md, "Layers").

What each runtime puts on its search paths: ``layer_paths.py``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from deployer.emulator.runtime.codecache import CodeCache, CodePackageError, make_read_only
from deployer.emulator.runtime.layer_paths import search_paths
from deployer.emulator.runtime.model import LayerSource

__all__ = ["LayerTrees", "search_paths"]


class LayerTrees:
    """Merged ``/opt`` trees of layer lists, content-addressed. Thread-safe."""

    def __init__(self, code: CodeCache, root: Path) -> None:
        self._code = code
        self._root = Path(root)
        self._lock = threading.Lock()

    def tree(self, layers: Sequence[LayerSource]) -> Path | None:
        """The merged tree of ``layers`` (None without layers); raises CodePackageError naming
        the layer whose content cannot be read."""
        if not layers:
            return None
        sources = [self._content(layer) for layer in layers]
        digest = hashlib.sha256("\0".join(
            f"{layer.checksum}\0{source}" for layer, source in zip(layers, sources, strict=True))
            .encode()).hexdigest()[:32]
        target = self._root / f"opt-{digest}"
        if target.is_dir():
            return target
        with self._lock:
            if not target.is_dir():
                self._merge(sources, target)
        return target

    def _content(self, layer: LayerSource) -> Path:
        if not layer.checksum and str(layer.path) in ("", "."):
            raise CodePackageError(
                f"layer version {layer.arn} does not exist in the local emulator",
                hint="publish the layer to the emulator first; official layers and layers of "
                     "other accounts cannot be fetched offline")
        path = Path(layer.path)
        if path.is_dir():
            return path
        if not path.is_file():
            raise CodePackageError(f"the content of layer {layer.arn} is missing ({path})")
        try:
            return self._code.ensure(layer.checksum, path)
        except CodePackageError as exc:
            raise CodePackageError(f"layer {layer.arn}: {exc.message}") from exc

    def _merge(self, sources: list[Path], target: Path) -> None:
        self._root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".opt-", dir=self._root))
        try:
            for source in reversed(sources):  # the first layer listed is written last: it wins
                _overlay(source, staging)
            make_read_only(staging)
            os.rename(staging, target)
            target.chmod(0o555)
        except FileExistsError:
            pass
        except OSError as exc:
            raise CodePackageError(f"cannot merge the function's layers: {exc}") from exc
        finally:
            if staging.exists():
                for directory, _dirs, _files in os.walk(staging):
                    with contextlib.suppress(OSError):
                        os.chmod(directory, 0o755)
                shutil.rmtree(staging, ignore_errors=True)


def _overlay(source: Path, target: Path) -> None:
    """Put every file of ``source`` into ``target``, replacing what is there."""
    for directory, dirnames, filenames in os.walk(source):
        relative = os.path.relpath(directory, source)
        into = target if relative == "." else target / relative
        if into.is_symlink() or (into.exists() and not into.is_dir()):
            into.unlink()
        into.mkdir(parents=True, exist_ok=True)
        for name in filenames:
            destination = into / name
            if destination.is_dir() and not destination.is_symlink():
                shutil.rmtree(destination)
            elif destination.exists() or destination.is_symlink():
                destination.unlink()
            src = os.path.join(directory, name)
            try:
                os.link(src, destination)
            except OSError:
                shutil.copy2(src, destination)
        for name in dirnames:
            path = into / name
            if path.exists() and not path.is_dir():
                path.unlink()
