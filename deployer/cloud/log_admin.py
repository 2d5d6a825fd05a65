"""Log Service projects and logstores (``alibabacloud-sls20201230``): what ``logConfig: auto``
creates before its function is deployed, as fc3 does."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from deployer.cloud.connection import ServiceClient
from deployer.cloud.errors import CloudClientError, CloudNotFoundError
from deployer.cloud.logs import PROJECT_HEADER

__all__ = ["LogStoreAdmin"]

#: How long the logstore keeps entries (SLS's default for new logstores, days).
TTL_DAYS = 30


class LogStoreAdmin(ServiceClient):
    """GetProject / CreateProject / GetLogStore / CreateLogStore on one connection."""

    SERVICE = "Log Service"

    @cached_property
    def _client(self) -> Any:
        from alibabacloud_sls20201230.client import Client

        return Client(self._conn.sdk_config(self._conn.endpoints.sls))

    def _headers(self, project: str | None) -> dict[str, str]:
        if self._conn.endpoints.sls_virtual_hosts or project is None:
            return {}
        return {"host": self._conn.endpoints.sls, PROJECT_HEADER: project}

    def project_exists(self, project: str) -> bool:
        from alibabacloud_sls20201230 import models
        from darabonba.runtime import RuntimeOptions

        try:
            self._call("GetProject", lambda: self._client.get_project_with_options(
                project, models.GetProjectRequest(), self._headers(project), RuntimeOptions()))
        except CloudNotFoundError:
            return False
        return True

    def logstore_exists(self, project: str, logstore: str) -> bool:
        from darabonba.runtime import RuntimeOptions

        try:
            self._call("GetLogStore", lambda: self._client.get_log_store_with_options(
                project, logstore, self._headers(project), RuntimeOptions()))
        except CloudNotFoundError:
            return False
        return True

    def create_project(self, project: str, description: str) -> None:
        """Create ``project``; one that exists already is left as it is."""
        from alibabacloud_sls20201230 import models
        from darabonba.runtime import RuntimeOptions

        request = models.CreateProjectRequest(project_name=project, description=description)
        try:
            self._call("CreateProject", lambda: self._client.create_project_with_options(
                request, self._headers(None), RuntimeOptions()))
        except CloudClientError as exc:
            if exc.code != "ProjectAlreadyExist":
                raise

    def create_logstore(self, project: str, logstore: str) -> None:
        """Create ``logstore`` in ``project``; one that exists already is left as it is."""
        from alibabacloud_sls20201230 import models
        from darabonba.runtime import RuntimeOptions

        request = models.CreateLogStoreRequest(logstore_name=logstore, ttl=TTL_DAYS,
                                               shard_count=2)
        try:
            self._call("CreateLogStore", lambda: self._client.create_log_store_with_options(
                project, request, self._headers(project), RuntimeOptions()))
        except CloudClientError as exc:
            if exc.code != "LogStoreAlreadyExist":
                raise
