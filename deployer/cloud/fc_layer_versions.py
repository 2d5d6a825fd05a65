"""Typed client for FC 3.0 layer versions (ListLayerVersions, CreateLayerVersion): what a
deploy needs to publish a layer from a local directory; the same calls on both targets."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass

from deployer.cloud.connection import ServiceClient
from deployer.cloud.errors import CloudNotFoundError

__all__ = ["LayerVersionClient", "RemoteLayerVersion"]


@dataclass(frozen=True, slots=True)
class RemoteLayerVersion:
    name: str
    version: int
    arn: str
    code_checksum: str


class LayerVersionClient(ServiceClient):
    """FC 3.0's layer versions of one connection."""

    SERVICE = "Function Compute"

    def latest(self, name: str) -> RemoteLayerVersion | None:
        """The newest version of layer ``name`` (None: the layer has none)."""
        from alibabacloud_fc20230330 import models

        newest: RemoteLayerVersion | None = None
        start: int | None = None
        while True:
            request = models.ListLayerVersionsRequest(limit=100, start_version=start)
            try:
                body = self._call("ListLayerVersions", lambda r=request: (
                    self._conn.fc.list_layer_versions(name, r))).body
            except CloudNotFoundError:
                return newest
            for layer in body.layers or []:
                found = RemoteLayerVersion(name, int(layer.version or 0),
                                           layer.layer_version_arn or "",
                                           str(layer.code_checksum or ""))
                if newest is None or found.version > newest.version:
                    newest = found
            if not body.next_version:
                return newest
            start = int(body.next_version)

    def publish(self, name: str, zip_bytes: bytes, runtimes: Sequence[str],
                description: str) -> RemoteLayerVersion:
        from alibabacloud_fc20230330 import models

        body = models.CreateLayerVersionInput(
            code=models.InputCodeLocation(zip_file=base64.b64encode(zip_bytes).decode()),
            compatible_runtime=list(runtimes), description=description)
        answer = self._call("CreateLayerVersion", lambda: self._conn.fc.create_layer_version(
            name, models.CreateLayerVersionRequest(body=body))).body
        return RemoteLayerVersion(name, int(answer.version or 0),
                                  answer.layer_version_arn or "",
                                  str(answer.code_checksum or ""))
