"""examples/serverless_devs_init.py fills a Serverless Devs application template as ``s init``
does: parameters from publish.yaml, values.yaml placeholders for resources of other
components, and layers that cannot exist offline turned into local layer directories."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "serverless_devs_init.py"

PUBLISH = """\
Parameters:
  type: object
  properties:
    region: {type: string, default: cn-hangzhou}
    name: {type: string, default: "app-${default-suffix}"}
    roleArn:
      type: string
      default: ""
      x-role: {name: AliyunFCDefaultRole, service: FC}
"""

S_YAML = """\
edition: 3.0.0
name: demo
access: "{{ access }}"
vars:
  region: "{{ region }}"
resources:
  db:
    component: rds
    props: {region: "${vars.region}"}
  worker:
    component: fc3
    props:
      region: ${vars.region}
      functionName: "{{ name }}-worker"
      role: "{{ roleArn }}"
      runtime: python3.10
      handler: index.handler
      code: ./code
      environmentVariables:
        DB_HOST: ${resources.db.output.host}
      layers:
        - acs:fc:${vars.region}:official:layers/Python3-Flask2x/versions/2
        - acs:fc:${vars.region}:1482204413454255:layers/langchain/versions/1
        - acs:fc:${vars.region}:1234567890123456:layers/mine/versions/3
"""


def test_template_filled_with_local_layers_and_values(tmp_path: Path) -> None:
    template = tmp_path / "template"
    (template / "src" / "code").mkdir(parents=True)
    (template / "publish.yaml").write_text(PUBLISH, encoding="utf-8")
    (template / "src" / "s.yaml").write_text(S_YAML, encoding="utf-8")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, str(SCRIPT), str(template), str(out),
                           "--account-id", "1234567890123456"],
                          capture_output=True, text=True, timeout=60, check=True)
    assert "layers/Python3-Flask2x, layers/langchain" in done.stdout
    manifest = YAML(typ="safe").load((out / "s.yaml").read_text(encoding="utf-8"))
    props = manifest["resources"]["worker"]["props"]
    assert manifest["access"] == "default" and manifest["vars"]["region"] == "cn-hangzhou"
    assert props["functionName"] == "app-demo-worker"
    assert props["role"] == "acs:ram::1234567890123456:role/aliyunfcdefaultrole"
    # official and foreign layers become directories; the account's own ARN stays
    assert props["layers"] == ["./layers/Python3-Flask2x", "./layers/langchain",
                               "acs:fc:${vars.region}:1234567890123456:layers/mine/versions/3"]
    readme = (out / "layers" / "langchain" / "README.md").read_text(encoding="utf-8")
    assert "acs:fc:${vars.region}:1482204413454255:layers/langchain/versions/1" in readme
    assert not (out / "layers" / "mine").exists()
    values = YAML(typ="safe").load((out / "values.yaml").read_text(encoding="utf-8"))
    assert values == {"resources": {"db": {"output": {"host": "127.0.0.1"}}}}


def test_roles_name_the_deploying_account_by_default(tmp_path: Path) -> None:
    template = tmp_path / "template"
    (template / "src").mkdir(parents=True)
    (template / "publish.yaml").write_text(PUBLISH, encoding="utf-8")
    (template / "src" / "s.yaml").write_text(S_YAML, encoding="utf-8")
    subprocess.run([sys.executable, str(SCRIPT), str(template), str(tmp_path / "out")],
                   capture_output=True, text=True, timeout=60, check=True)
    manifest = YAML(typ="safe").load((tmp_path / "out" / "s.yaml").read_text(encoding="utf-8"))
    props = manifest["resources"]["worker"]["props"]
    assert props["role"] == "acs:ram::${config('AccountID')}:role/aliyunfcdefaultrole"
    assert props["layers"][2] == "./layers/mine"  # another account's than the deploying one
