"""Log Service projects and logstores on the emulator (what ``logConfig: auto`` creates),
through the official SLS SDK: at the cloud's own endpoint (routed into the in-process
emulator) and at the emulator's loopback endpoint, as the deployer's two targets call it."""

from __future__ import annotations

import pytest

from deployer.cloud.connection import CloudConnection, Endpoints, StaticKeys
from deployer.cloud.errors import CloudClientError
from deployer.cloud.log_admin import LogStoreAdmin
from deployer.testing import mock_cloud


def _admin(cloud, endpoints: Endpoints, headers: dict[str, str] | None = None) -> LogStoreAdmin:
    return LogStoreAdmin(CloudConnection(
        region="cn-hangzhou", endpoints=endpoints, headers=headers,
        credential=StaticKeys(cloud.access_key_id, cloud.access_key_secret)))


@pytest.mark.parametrize("where", ["cloud endpoint", "loopback"])
def test_projects_and_logstores_are_created_once_and_found(where: str) -> None:
    with mock_cloud() as cloud:
        admin = _admin(cloud, Endpoints.for_region("cn-hangzhou")) if where == "cloud endpoint" \
            else _admin(cloud, Endpoints.single(cloud.endpoint),
                        {"x-deployer-region": "cn-hangzhou"})
        assert not admin.project_exists("auto-logs")
        with pytest.raises(CloudClientError) as missing:
            admin.create_logstore("auto-logs", "default-logs")
        admin.create_project("auto-logs", "created by a test")
        admin.create_project("auto-logs", "again")  # ProjectAlreadyExist: left as it is
        assert admin.project_exists("auto-logs")
        assert not admin.logstore_exists("auto-logs", "default-logs")
        admin.create_logstore("auto-logs", "default-logs")
        admin.create_logstore("auto-logs", "default-logs")
        assert admin.logstore_exists("auto-logs", "default-logs")
        assert not admin.project_exists("other-logs")
    assert missing.value.code == "ProjectNotExist"


def test_bad_names_are_the_clouds_parameter_error() -> None:
    with mock_cloud() as cloud:
        admin = _admin(cloud, Endpoints.for_region("cn-hangzhou"))
        with pytest.raises(CloudClientError) as bad:
            admin.create_project("Bad_Name", "x")
    assert bad.value.code == "ParameterInvalid" and "projectName" in str(bad.value)


def test_a_state_directory_that_made_the_logstore_table_on_first_use_keeps_its_projects(
        tmp_path) -> None:
    """Earlier versions created ``log_stores`` on first use, outside the migrations; opening
    such a state directory migrates it (migration 15) and keeps what it holds, and a new
    state directory has the table before any Log Service call."""
    import sqlite3

    from deployer.emulator.store.db import Database
    from deployer.emulator.store.log_repos import LogStoreRepo

    old = tmp_path / "old.db"
    Database.open(old, durable=False).close()
    conn = sqlite3.connect(old)
    conn.execute("DELETE FROM schema_version WHERE version >= 15")
    conn.execute("DROP TABLE log_stores")
    conn.execute("CREATE TABLE log_stores (account_id TEXT NOT NULL, region TEXT NOT NULL, "
                 "project TEXT NOT NULL, logstore TEXT NOT NULL, created_at REAL NOT NULL, "
                 "PRIMARY KEY (account_id, region, project, logstore))")
    conn.execute("INSERT INTO log_stores VALUES ('1', 'cn-hangzhou', 'p', '', 0)")
    conn.commit()
    conn.close()
    db = Database.open(old, durable=False)
    assert db.schema_version() >= 15
    assert LogStoreRepo(db).exists("1", "cn-hangzhou", "p")
    db.close()

    fresh = Database.open(tmp_path / "new.db", durable=False)
    with fresh.read() as conn:
        tables = {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table'")}
    assert "log_stores" in tables
    fresh.close()
