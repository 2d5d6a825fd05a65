"""`customDomain` in s.yaml: `deploy up` routes each function's path on the shared domain
(a `custom-domain` action per function, merged into the domain), prints the route's local
URL, and a request whose Host is the domain reaches the handler; dropping the prop takes the
function's route off (the domain goes with its last route); `domainName: auto` names a
`.localhost` domain on the emulator and is refused for Alibaba Cloud."""

from __future__ import annotations

import json
import textwrap
import urllib.request
from pathlib import Path
from typing import Any

from alibabacloud_fc20230330 import models as fc
from click.testing import CliRunner, Result

from deployer.cli.main import cli
from deployer.testing import mock_cloud

HANDLER = """\
import json

def handler(event, context):
    e = json.loads(event)
    return {"statusCode": 200, "body": context.function.name + " " + e["rawPath"] + " "
            + e["requestContext"]["domainName"]}
"""


def _function(name: str, domain: str, path: str) -> str:
    extra = f"customDomain: {{domainName: {domain}, route: {{path: '{path}'}}}}" if domain \
        else ""
    return textwrap.dedent(f"""\
          {name}:
            component: fc3
            props:
              region: cn-hangzhou
              functionName: {name}
              runtime: python3.10
              code: ./code
              handler: index.handler
              triggers:
                - {{triggerName: web, triggerType: http,
                   triggerConfig: {{authType: anonymous, methods: [GET, POST]}}}}
              {extra}
        """)


def _project(root: Path, *functions: str) -> Path:
    (root / "code").mkdir(parents=True, exist_ok=True)
    (root / "code" / "index.py").write_text(HANDLER)
    (root / "s.yaml").write_text("edition: 3.0.0\nname: shop\nresources:\n"
                                 + "".join(textwrap.indent(f, "  ") for f in functions))
    return root


def _run(root: Path, *args: str, target: str = "aliyun") -> Result:
    extra = ["--yes"] if args[0] == "up" else []
    return CliRunner().invoke(cli, ["-C", str(root), *args, "--target", target, "--output",
                                    "json", *extra], catch_exceptions=False)


def _deploy(root: Path, *args: str, target: str = "aliyun") -> Any:
    result = _run(root, *args, target=target)
    assert result.exit_code == 0, result.stderr + result.stdout
    return json.loads(result.stdout)


def _domains(out: Any) -> dict[str, tuple[str, str | None]]:
    return {r["name"]: (r["action"], r.get("url")) for r in out["resources"]
            if r["type"] == "custom-domain"}


def _get(endpoint: str, path: str, host: str) -> str:
    request = urllib.request.Request(f"http://{endpoint}{path}", headers={"Host": host})
    with urllib.request.urlopen(request, timeout=20) as answer:
        return answer.read().decode()


def test_functions_share_a_custom_domain_served_by_host(tmp_path: Path) -> None:
    with mock_cloud() as cloud:
        root = _project(tmp_path, _function("orders", "api.example.com", "/orders/*"),
                        _function("admin", "api.example.com", "/admin/*"))
        first = _deploy(root, "up", target="local")
        orders = _get(cloud.endpoint, "/orders/7", "api.example.com")
        admin = _get(cloud.endpoint, "/admin/users", "api.example.com")
        again = _deploy(root, "plan", target="local")
        _project(root, _function("orders", "api.example.com", "/orders/*"),
                 _function("admin", "", ""))
        dropped = _deploy(root, "up")
        routes = cloud.fc_client().get_custom_domain(
            "api.example.com").body.route_config.routes
        _project(root, _function("orders", "", ""), _function("admin", "", ""))
        last = _deploy(root, "up")
        listed = cloud.fc_client().list_custom_domains(
            fc.ListCustomDomainsRequest()).body.custom_domains
    port = cloud.endpoint.rsplit(":", 1)[1]
    assert _domains(first) == {
        "orders/api.example.com": ("create", f"http://api.example.com:{port}/orders/"),
        "admin/api.example.com": ("update", f"http://api.example.com:{port}/admin/")}
    assert orders == "orders /orders/7 api.example.com"
    assert admin == "admin /admin/users api.example.com"
    assert again["changes"] is False
    assert _domains(dropped) == {"orders/api.example.com": ("no-change",
                                                           "http://api.example.com/orders/"),
                                 "admin/api.example.com": ("delete", None)}
    assert [(r.path, r.function_name) for r in routes] == [("/orders/*", "orders")]
    assert _domains(last) == {"orders/api.example.com": ("delete", None)}
    assert listed == []


def test_domain_name_auto_is_a_localhost_name_on_the_emulator_only(tmp_path: Path) -> None:
    with mock_cloud() as cloud:
        root = _project(tmp_path, _function("Quotes_V2", "auto", "/*"))
        refused = _run(root, "up")
        up = _deploy(root, "up", target="local")
        answer = _get(cloud.endpoint, "/q", "quotes-v2.cn-hangzhou.fc.localhost")
    assert refused.exit_code != 0
    assert "customDomain.domainName: auto" in refused.stderr
    port = cloud.endpoint.rsplit(":", 1)[1]
    assert _domains(up) == {"Quotes_V2/quotes-v2.cn-hangzhou.fc.localhost": (
        "create", f"http://quotes-v2.cn-hangzhou.fc.localhost:{port}/")}
    assert answer == "Quotes_V2 /q quotes-v2.cn-hangzhou.fc.localhost"


def test_a_path_held_by_another_function_is_refused_at_plan(tmp_path: Path) -> None:
    with mock_cloud():
        root = _project(tmp_path, _function("orders", "api.example.com", "/*"))
        _deploy(root, "up")
        _project(root, _function("orders", "api.example.com", "/*"),
                 _function("admin", "api.example.com", "/*"))
        clash = _run(root, "plan")
    assert clash.exit_code == 3
    assert "path /* is routed to function orders, not admin" in clash.stderr


def test_removed_functions_take_their_routes_off_and_down_leaves_no_domain(tmp_path: Path
                                                                          ) -> None:
    with mock_cloud() as cloud:
        client = cloud.fc_client()
        client.create_custom_domain(fc.CreateCustomDomainRequest(body=fc.CreateCustomDomainInput(
            domain_name="other.example.com", protocol="HTTP",
            route_config=fc.RouteConfig(routes=[fc.PathConfig(path="/*",
                                                              function_name="elsewhere")]))))
        root = _project(tmp_path, _function("orders", "api.example.com", "/orders/*"),
                        _function("admin", "api.example.com", "/admin/*"),
                        _function("report", "report.example.com", "/*"))
        _deploy(root, "up", target="local")
        _project(root, _function("orders", "api.example.com", "/orders/*"))  # two dropped
        _deploy(root, "up", target="local")
        kept = client.get_custom_domain("api.example.com").body.route_config.routes
        after_drop = sorted(d.domain_name for d in client.list_custom_domains(
            fc.ListCustomDomainsRequest()).body.custom_domains)
        down = _deploy(root, "down", "--yes", target="local")
        after_down = [d.domain_name for d in client.list_custom_domains(
            fc.ListCustomDomainsRequest()).body.custom_domains]
    assert [(r.path, r.function_name) for r in kept] == [("/orders/*", "orders")]
    assert after_drop == ["api.example.com", "other.example.com"]
    assert {r["name"] for r in down["resources"]} >= {"orders"}
    assert after_down == ["other.example.com"]  # another project's domain is left alone
