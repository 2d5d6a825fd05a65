"""Provisioned instances through the official Python SDK against mock_cloud() (process
runtime): Put/Get/Delete/ListProvisionConfig(s) and the scaling config's four, the target
kept started with its initializer run, and the first request answered warm."""

from __future__ import annotations

import base64
import io
import zipfile
from collections.abc import Iterator

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_tea_openapi.exceptions import ClientException

from deployer.testing import LocalCloud, mock_cloud

HANDLER = """
import os
STARTED = []

def init(context):
    STARTED.append(context.request_id)
    print("initializing")

def handler(event, context):
    return "warm" if STARTED else "cold"
"""


def _zip() -> str:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("index.py", HANDLER)
    return base64.b64encode(buf.getvalue()).decode()


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCloud]:
    with mock_cloud(state_dir=tmp_path_factory.mktemp("state"), cold_start=2.0) as local:
        yield local


def _create(cloud: LocalCloud, name: str) -> None:
    cloud.fc_client().create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name=name, runtime="python3.10", handler="index.handler", timeout=10,
        instance_lifecycle_config=fc.InstanceLifecycleConfig(
            initializer=fc.LifecycleHook(handler="index.init", timeout=5)),
        code=fc.InputCodeLocation(zip_file=_zip()))))


def _put(cloud: LocalCloud, name: str, **fields) -> fc.ProvisionConfig:
    return cloud.fc_client().put_provision_config(name, fc.PutProvisionConfigRequest(
        body=fc.PutProvisionConfigInput(**fields))).body


def test_a_provisioned_instance_is_started_initialized_and_serves_the_first_call_warm(cloud):
    _create(cloud, "prov")
    put = _put(cloud, "prov", default_target=1, always_allocate_cpu=True,
               scheduled_actions=[fc.ScheduledAction(name="night", target=0,
                                                     schedule_expression="cron(0 0 2 * * *)")])
    assert put.current == 1 and put.default_target == 1 and put.target == 1
    assert put.function_arn.endswith(":functions/prov") and put.current_error is None
    assert put.scheduled_actions[0].name == "night"  # recorded and echoed
    init = [r for r in cloud.invocations("prov") if r.invocation_type == "Initializer"]
    assert len(init) == 1 and "initializing" in init[0].log

    before = cloud.now()
    body = cloud.fc_client().invoke_function("prov", fc.InvokeFunctionRequest(body=b"{}")).body
    assert body.read() == b"warm"
    call = next(r for r in cloud.invocations("prov") if r.invocation_type == "Sync")
    assert call.cold_start is False and call.instance_id == init[0].instance_id
    assert cloud.now() - before < 2.0  # the modelled 2 s cold start was not spent

    cloud.advance(3600)  # far past the idle time: a provisioned instance is not reaped
    got = cloud.fc_client().get_provision_config(
        "prov", fc.GetProvisionConfigRequest()).body
    assert got.current == 1
    cloud.fc_client().invoke_function("prov", fc.InvokeFunctionRequest(body=b"{}"))
    latest = next(r for r in cloud.invocations("prov") if r.invocation_type == "Sync")
    assert latest.instance_id == init[0].instance_id and latest.cold_start is False


def test_list_delete_and_the_errors_of_provision_configs(cloud):
    _create(cloud, "prov2")
    _put(cloud, "prov2", default_target=0)
    listed = cloud.fc_client().list_provision_configs(
        fc.ListProvisionConfigsRequest(function_name="prov2")).body.provision_configs
    assert [(c.function_arn.rsplit("/", 1)[1], c.current) for c in listed] == [("prov2", 0)]
    with pytest.raises(ClientException) as bad:
        _put(cloud, "prov2", default_target=-1)
    assert bad.value.status_code == 400 and "defaultTarget" in bad.value.message
    with pytest.raises(ClientException) as alias:
        cloud.fc_client().put_provision_config("prov2", fc.PutProvisionConfigRequest(
            qualifier="nope", body=fc.PutProvisionConfigInput(default_target=1)))
    assert alias.value.status_code == 404
    cloud.fc_client().delete_provision_config("prov2", fc.DeleteProvisionConfigRequest())
    with pytest.raises(ClientException) as gone:
        cloud.fc_client().get_provision_config("prov2", fc.GetProvisionConfigRequest())
    assert (gone.value.code, gone.value.status_code) == ("ProvisionConfigNotFound", 404)


def test_a_scaling_config_keeps_min_instances_warm_and_lets_them_go_when_deleted(cloud):
    _create(cloud, "scaled")
    client = cloud.fc_client()
    put = client.put_scaling_config("scaled", fc.PutScalingConfigRequest(
        body=fc.PutScalingConfigInput(min_instances=1))).body
    assert (put.min_instances, put.current_instances, put.target_instances) == (1, 1, 1)
    client.invoke_function("scaled", fc.InvokeFunctionRequest(body=b"{}"))
    call = next(r for r in cloud.invocations("scaled") if r.invocation_type == "Sync")
    assert call.cold_start is False
    names = [c.function_arn.rsplit("/", 1)[1] for c in client.list_scaling_configs(
        fc.ListScalingConfigsRequest()).body.scaling_configs]
    assert "scaled" in names
    client.delete_scaling_config("scaled", fc.DeleteScalingConfigRequest())
    cloud.advance(3600)  # no longer provisioned: the instance ages out like any other
    client.invoke_function("scaled", fc.InvokeFunctionRequest(body=b"{}"))
    again = next(r for r in cloud.invocations("scaled") if r.invocation_type == "Sync")
    assert again.cold_start is True and again.instance_id != call.instance_id
    with pytest.raises(ClientException) as gone:
        client.get_scaling_config("scaled", fc.GetScalingConfigRequest())
    assert (gone.value.code, gone.value.status_code) == ("ScalingConfigNotFound", 404)


def test_deleting_the_function_deletes_its_provision_config(cloud):
    _create(cloud, "prov3")
    _put(cloud, "prov3", default_target=0)
    cloud.fc_client().delete_function("prov3")
    _create(cloud, "prov3")
    with pytest.raises(ClientException) as gone:
        cloud.fc_client().get_provision_config("prov3", fc.GetProvisionConfigRequest())
    assert gone.value.status_code == 404
