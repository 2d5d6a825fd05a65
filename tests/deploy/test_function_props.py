"""Nothing accepted is dropped: every fc3 prop `deploy validate` accepts reaches
CreateFunction/UpdateFunction (here through the cloud target's code path, answered by the
emulator's wire) and comes back from GetFunction; the plan names each one that changes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from alibabacloud_fc20230330 import models
from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.config.fc3 import prop_status
from deployer.core.ownership import PROJECT_TAG
from deployer.testing import mock_cloud

#: A value for every prop fc3 accepts, and what GetFunction must then hold (API names).
SAMPLES: dict[str, tuple[str, Any]] = {
    "region": ("cn-hangzhou", None),
    "functionName": ("orders", None),
    "runtime": ("custom.debian10", "custom.debian10"),
    "code": ("./code", None),
    "handler": ("main.handler", "main.handler"),
    "description": ("every prop", "every prop"),
    "memorySize": ("1024", 1024),
    "timeout": ("30", 30),
    "cpu": ("0.5", 0.5),
    "diskSize": ("10240", 10240),
    "instanceConcurrency": ("4", 4),
    "internetAccess": ("false", False),
    "environmentVariables": ("{MODE: prod}", {"MODE": "prod"}),
    "role": ("auto", "acs:ram::{account}:role/aliyunfcdefaultrole"),
    "logConfig": ("{project: orders-logs, logstore: fc-logs}",
                  {"project": "orders-logs", "logstore": "fc-logs"}),
    "layers": ("[acs:fc:cn-hangzhou:{account}:layers/deps/versions/1]",
               [{"arn": "acs:fc:cn-hangzhou:{account}:layers/deps/versions/1"}]),
    "instanceLifecycleConfig": (
        "{initializer: {handler: main.init, timeout: 5}, preStop: {handler: main.stop}}",
        {"initializer": {"handler": "main.init", "timeout": 5},
         "preStop": {"handler": "main.stop", "timeout": 3}}),
    "tags": ("[{key: team, value: orders}]", [{"Key": "team", "Value": "orders"}]),
    "customRuntimeConfig": ("{command: [python3, server.py], port: 9001}",
                            {"command": ["python3", "server.py"], "port": 9001}),
    "vpcConfig": ("{vpcId: vpc-1, vSwitchIds: [vsw-1], securityGroupId: sg-1}",
                  {"vpcId": "vpc-1", "vSwitchIds": ["vsw-1"], "securityGroupId": "sg-1"}),
    "nasConfig": ("{userId: 10003, groupId: 10003, mountPoints: [{serverAddr: 'n.nas.aliyuncs"
                  ".com:/orders', mountDir: /mnt/orders}]}",
                  {"userId": 10003, "mountPoints": [{"serverAddr": "n.nas.aliyuncs.com:/orders",
                                                     "mountDir": "/mnt/orders"}]}),
    "ossMountConfig": ("{mountPoints: [{bucketName: orders-bucket, mountDir: /mnt/oss, "
                       "readOnly: true}]}",
                       {"mountPoints": [{"bucketName": "orders-bucket", "mountDir": "/mnt/oss",
                                         "readOnly": True}]}),
    "customDNS": ("{nameServers: [10.0.0.2]}", {"nameServers": ["10.0.0.2"]}),
    "tracingConfig": ("{type: Jaeger, params: 'http://tracing'}",
                      {"type": "Jaeger", "params": "http://tracing"}),
    "sessionAffinity": ("HEADER_FIELD", "HEADER_FIELD"),
    "sessionAffinityConfig": ("'{\"affinityHeaderFieldName\":\"x-session\"}'",
                              '{"affinityHeaderFieldName":"x-session"}'),
    "instanceIsolationMode": ("SESSION_EXCLUSIVE", "SESSION_EXCLUSIVE"),
    "enableLongLiving": ("true", True),
    "resourceGroupId": ("rg-orders", "rg-orders"),
    # not a Function field: a trigger of its own (checked through ListTriggers below)
    "triggers": ("[{triggerName: web, triggerType: http, triggerConfig: {authType: function, "
                 "methods: [GET, POST]}}]", None),
    # FC's own resources of the function (checked through their Get actions below)
    "asyncInvokeConfig": ("{maxAsyncRetryAttempts: 1, maxAsyncEventAgeInSeconds: 600, "
                          "destinationConfig: {onFailure: {destination: 'acs:fc:cn-hangzhou:"
                          "{account}:functions/orders-dlq'}}}", None),
    "concurrencyConfig": ("{reservedConcurrency: 7}", None),
    # target 0: this function's server never listens, so no instance is kept started here
    # (tests/deploy/test_provisioned_functions.py starts some)
    "provisionConfig": ("{defaultTarget: 0, scheduledActions: [{name: night, target: 2, "
                        "scheduleExpression: 'cron(0 0 2 * * *)'}]}", None),
    "scalingConfig": ("{minInstances: 0}", None),
    "customDomain": ("{domainName: orders.example.com, protocol: HTTP, route: {path: '/*', "
                     "methods: [GET]}}", None),
}


def _project(root: Path, props: dict[str, str]) -> Path:
    code = root / "code"
    code.mkdir(parents=True, exist_ok=True)
    (code / "server.py").write_text("print('serving')\n")
    lines = "".join(f"      {k}: {v}\n" for k, v in props.items())
    (root / "s.yaml").write_text(textwrap.dedent("""\
        edition: 3.0.0
        name: props
        resources:
          orders:
            component: fc3
            props:
        """) + lines)
    return root


def _publish_layer(cloud: Any) -> None:
    """Version 1 of the layer ``deps`` the samples name (functions name existing layers)."""
    import io
    import zipfile

    from deployer.emulator.services.layers import LayerInput

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("python/deps.py", "VALUE = 1\n")
    cloud.server.emulator.layers.create_version(cloud.account_id, "cn-hangzhou", "deps",
                                                LayerInput(buffer.getvalue()))


def _deploy(root: Path, *args: str) -> Any:
    extra = ["--yes"] if args[0] == "up" else []
    result = CliRunner().invoke(cli, ["-C", str(root), *args, "--target", "aliyun", "--output",
                                      "json", *extra], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr + result.stdout
    return json.loads(result.stdout)


def _covers(actual: Any, expected: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(_covers(actual.get(k), v)
                                                for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(
            _covers(a, e) for a, e in zip(actual, expected, strict=True))
    return bool(actual == expected)


def _fill(value: Any, account: str) -> Any:
    return json.loads(json.dumps(value).replace("{account}", account))


def _get(cloud: Any, name: str) -> dict[str, Any]:
    return dict(cloud.fc_client().get_function(name, models.GetFunctionRequest()).body.to_map())


def test_every_accepted_prop_has_a_sample() -> None:
    accepted = {name for name, status in prop_status().items()
                if status in ("deployed", "recorded")}
    assert accepted == set(SAMPLES)


def test_every_accepted_prop_round_trips_through_get_function(tmp_path: Path) -> None:
    with mock_cloud() as cloud:
        account = cloud.account_id
        props = {k: v.replace("{account}", account) for k, (v, _) in SAMPLES.items()}
        root = _project(tmp_path, props)
        _publish_layer(cloud)
        first = _deploy(root, "up")
        wire = _get(cloud, "orders")
        wire["tags"] = [t for t in wire.get("tags") or () if t["Key"] != PROJECT_TAG]
        missing = [k for k, (_, expected) in SAMPLES.items()
                   if expected is not None and not _covers(wire.get(k), _fill(expected, account))]
        again = _deploy(root, "plan")
        client = cloud.fc_client()
        (trigger,) = client.list_triggers("orders", models.ListTriggersRequest()).body.triggers
        async_config = client.get_async_invoke_config(
            "orders", models.GetAsyncInvokeConfigRequest()).body
        reserved = client.get_concurrency_config("orders").body.reserved_concurrency
        provision = client.get_provision_config("orders",
                                                models.GetProvisionConfigRequest()).body
        scaling = client.get_scaling_config("orders", models.GetScalingConfigRequest()).body
        (route,) = client.get_custom_domain("orders.example.com").body.route_config.routes
    assert [r["action"] for r in first["resources"] if r["type"] == "function"] == ["create"]
    assert (trigger.trigger_name, trigger.trigger_type) == ("web", "http")
    assert json.loads(trigger.trigger_config)["authType"] == "function"
    assert (async_config.max_async_retry_attempts, reserved) == (1, 7)
    assert (provision.default_target, provision.scheduled_actions[0].target) == (0, 2)
    assert (scaling.min_instances, scaling.current_instances) == (0, 0)
    assert (route.path, route.function_name, route.methods) == ("/*", "orders", ["GET"])
    assert async_config.destination_config.on_failure.destination.endswith("/orders-dlq")
    assert missing == [], {k: wire.get(k) for k in missing}
    assert wire["functionArn"] == f"acs:fc:cn-hangzhou:{account}:functions/orders"
    assert again["changes"] is False


#: Props deployed as resources of their own (actions of their own type; their removal deletes
#: them).
OWN_RESOURCES = ("triggers", "asyncInvokeConfig", "concurrencyConfig", "provisionConfig",
                 "scalingConfig", "customDomain")
#: Props whose removal from s.yaml the next deploy carries out (the rest are required, or
#: cannot be taken back: a role once set, a log config kept as it is, a resource group).
REMOVABLE = [k for k in SAMPLES if k not in (
    "region", "functionName", "runtime", "code", "handler", "customRuntimeConfig", "role",
    "logConfig", "resourceGroupId", "tags", *OWN_RESOURCES)]


def test_removed_props_are_planned_and_cleared(tmp_path: Path) -> None:
    with mock_cloud() as cloud:
        account = cloud.account_id
        props = {k: v.replace("{account}", account) for k, (v, _) in SAMPLES.items()}
        root = _project(tmp_path, props)
        _publish_layer(cloud)
        _deploy(root, "up")
        _project(root, {k: v for k, v in props.items()
                        if k not in REMOVABLE and k not in OWN_RESOURCES})
        plan = _deploy(root, "plan")
        (function,) = [r for r in plan["resources"] if r["type"] == "function"]
        _deploy(root, "up")
        after = _deploy(root, "plan")
        wire = _get(cloud, "orders")
        leftovers = [r["type"] for r in plan["resources"] if r["action"] == "delete"]
        wire["tags"] = [t for t in wire.get("tags") or () if t["Key"] != PROJECT_TAG]
    assert function["action"] == "update"
    changed = {c.split(".")[0] for c in function["changes"]}
    assert set(REMOVABLE) <= changed, set(REMOVABLE) - changed
    assert after["changes"] is False, after
    assert sorted(leftovers) == ["async-invoke-config", "concurrency-config", "custom-domain",
                                 "provision-config", "scaling-config", "trigger"]
    kept = [k for k in REMOVABLE if SAMPLES[k][1] is not None
            and _covers(wire.get(k), _fill(SAMPLES[k][1], account))]
    assert kept == [], {k: wire.get(k) for k in kept}
