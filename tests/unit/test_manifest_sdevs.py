"""Serverless Devs v3 projects as people write them: file()/json()/yaml(), this, extend,
outputs of other resources, resources of other components, values files, actions."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deployer.config.expressions import (
    MagicSyntaxError,
    find_magic,
    parse_magic,
    reference_path,
)
from deployer.config.manifest import ManifestError, load_manifest
from deployer.config.outputs import auto_log_project, name_uuid
from deployer.config.values import ExternalValues, parse_var, read_values_file
from deployer.errors import InvalidInputError

ACCOUNT = "1234567890123456"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("a", "b"):
        (tmp_path / "code" / name).mkdir(parents=True)
        (tmp_path / "code" / name / "index.py").write_text("def handler(e, c):\n    return 1\n")
    return tmp_path


def write(project: Path, text: str, name: str = "s.yaml") -> Path:
    path = project / name
    path.write_text(textwrap.dedent(text))
    return path


def load(path: Path, **kwargs: object):  # type: ignore[no-untyped-def]
    kwargs.setdefault("env", {})
    kwargs.setdefault("account_id", ACCOUNT)
    return load_manifest(path, **kwargs)  # type: ignore[arg-type]


def problems(path: Path, **kwargs: object) -> list[str]:
    with pytest.raises(ManifestError) as info:
        load(path, **kwargs)
    return [p.format() for p in info.value.problems]


def fn(name: str, code: str, extra: str = "") -> str:
    body = f"""\
  {name}:
    component: fc3
    props:
      region: cn-hangzhou
      functionName: {name}-fn
      runtime: python3.10
      code: ./code/{code}
      handler: index.handler
"""
    return body + textwrap.indent(textwrap.dedent(extra), "      ")


HEAD = "edition: 3.0.0\nname: demo\nvars:\n  stage: prod\nresources:\n"


# --- file(), json(), yaml() ---------------------------------------------------------------------


def test_file_json_and_yaml_read_files_beside_s_yaml(project: Path) -> None:
    (project / "desc.txt").write_text("from a file")
    (project / "env.json").write_text('{"MODE": "${vars.stage}", "N": 3}')
    (project / "limits.yaml").write_text("memory: 1024\ntimeout: 60\n")
    text = HEAD + fn("a", "a", """\
        description: ${file('./desc.txt')}
        environmentVariables: ${json(file('env.json'))}
        memorySize: ${yaml(file('limits.yaml')).memory}
        timeout: ${yaml(file('limits.yaml'))['timeout']}
        """)
    (spec,) = load(write(project, text)).functions
    assert spec.description == "from a file"
    assert dict(spec.environment_variables) == {"MODE": "prod", "N": "3"}  # variables inside
    assert (spec.memory_size, spec.timeout) == (1024, 60)


def test_a_problem_inside_a_loaded_document_names_its_file_and_line(project: Path) -> None:
    (project / "env.yaml").write_text("A: ok\nB: ${vars.nope}\n")
    text = HEAD + fn("a", "a", "environmentVariables: ${yaml(file('env.yaml'))}\n")
    assert problems(write(project, text)) == [
        "env.yaml:2:1: B: ${vars.nope}: vars.nope is not defined"]


def test_a_missing_file_names_the_reference(project: Path) -> None:
    text = HEAD + fn("a", "a", "description: ${file('gone.txt')}\n")
    (found,) = problems(write(project, text))
    assert "${file('gone.txt')}: file 'gone.txt' does not exist" in found


def test_path_is_absolute(project: Path) -> None:
    text = HEAD + fn("a", "a", "description: ${path('./code')}\n")
    assert load(write(project, text)).functions[0].description == str(project / "code")


# --- env, config, this ----------------------------------------------------------------------------


def test_env_forms_and_config_keys(project: Path) -> None:
    text = HEAD + fn("a", "a", """\
        description: ${env.STAGE}-${env('MISSING', 'dflt')}-${config('AccountID')}
        environmentVariables:
          KEY_ID: ${config('AccessKeyID')}
          SECRET: ${config('AccessKeySecret')}
        """)
    spec = load(write(project, text), env={"STAGE": "beta"},
                config={"AccessKeyID": "LTAIid", "AccessKeySecret": "s3cret"}).functions[0]
    assert spec.description == f"beta-dflt-{ACCOUNT}"
    assert dict(spec.environment_variables) == {"KEY_ID": "LTAIid", "SECRET": "s3cret"}


def test_secret_config_keys_only_in_environment_variables(project: Path) -> None:
    text = HEAD + fn("a", "a", "description: ${config('AccessKeySecret')}\n")
    (found,) = problems(write(project, text), config={"AccessKeySecret": "s"})
    assert "resources.a.props.description: config('AccessKeySecret') and " \
           "config('SecurityToken') are secrets" in found


def test_this_names_the_resource_it_is_written_in(project: Path) -> None:
    text = "edition: 3.0.0\nname: demo\naccess: team\nresources:\n" + fn("a", "a", """\
        description: ${this.name} ${this.component} ${this.access} ${this.props.functionName}
        """)
    assert load(write(project, text)).functions[0].description == "a fc3 team a-fn"


# --- extend / template ------------------------------------------------------------------------


TEMPLATE = """\
edition: 3.0.0
name: demo
template:
  python:
    region: cn-hangzhou
    runtime: python3.10
    handler: index.handler
    memorySize: 1024
    timeout: 99
resources:
  a:
    component: fc3
    extend:
      name: python
      ignore: [timeout]
    props:
      functionName: a-fn
      code: ./code/a
      memorySize: 256
"""


def test_extend_merges_the_template_under_the_props(project: Path) -> None:
    (spec,) = load(write(project, TEMPLATE)).functions
    assert (spec.runtime, spec.memory_size, spec.timeout) == ("python3.10", 256, 3)


def test_a_problem_in_an_inherited_prop_points_at_the_template(project: Path) -> None:
    text = TEMPLATE.replace("memorySize: 1024", "diskSize: 999")
    assert problems(write(project, text)) == [
        "s.yaml:8:5: resources.a.props.diskSize: must be 512 or 10240 (got 999)"]


def test_extend_of_an_unknown_template(project: Path) -> None:
    (found,) = problems(write(project, TEMPLATE.replace("name: python", "name: pyhton")))
    assert "resources.a.extend.name: no template named 'pyhton'" in found
    assert "did you mean 'python'?" in found


# --- outputs of other resources ---------------------------------------------------------------


def test_outputs_resolve_in_dependency_order(project: Path) -> None:
    text = HEAD + fn("a", "a", """\
        logConfig: ${resources.b.output.logConfig}
        environmentVariables:
          PEER: ${resources.b.output.functionArn}
        """) + fn("b", "b", "logConfig: auto\nrole: auto\n")
    manifest = load(write(project, text))
    assert manifest.order == ("b", "a")  # b first: a uses its output
    specs = {f.resource: f for f in manifest.functions}
    a, b = specs["a"], specs["b"]
    project_name = auto_log_project("cn-hangzhou", ACCOUNT)
    assert b.log_auto and b.role_auto and b.role == f"acs:ram::{ACCOUNT}:role/aliyunfcdefaultrole"
    assert dict(a.log_config) == dict(b.log_config) == {  # type: ignore[arg-type]
        "project": project_name, "logstore": "default-logs", "enableRequestMetrics": True,
        "enableInstanceMetrics": True, "logBeginRule": "DefaultRegex"}
    assert a.environment_variables["PEER"] == f"acs:fc:cn-hangzhou:{ACCOUNT}:functions/b-fn"
    assert {(c.consumer, c.resource, c.keys) for c in manifest.consumed} == {
        ("a", "b", ("logConfig",)), ("a", "b", ("functionArn",))}


def test_a_cycle_between_resources_is_an_error_naming_it(project: Path) -> None:
    text = HEAD + fn("a", "a", "description: ${resources.b.output.functionArn}\n") + \
        fn("b", "b", "description: ${resources.a.output.functionArn}\n")
    (found,) = problems(write(project, text))
    assert "reference cycle between resources: a -> b -> a" in found


def test_an_output_key_that_does_not_exist(project: Path) -> None:
    text = HEAD + fn("a", "a", "description: ${resources.b.output.url}\n") + fn("b", "b")
    (found,) = problems(write(project, text))
    assert "${resources.b.output.url}: the output of b has no url (it has: cpu," in found


def test_auto_log_project_is_derived_from_the_account() -> None:
    assert name_uuid("x") == name_uuid("x") != name_uuid("y")
    assert len(name_uuid("1")) == 36 and name_uuid("1")[14] == "5"
    assert auto_log_project("cn-hangzhou", "1").startswith("serverless-cn-hangzhou-")


# --- other components, values ---------------------------------------------------------------------

OTHERS = HEAD + """\
  db:
    component: rds
    props:
      region: cn-hangzhou
      username: cap
""" + fn("a", "a", """\
    environmentVariables:
      HOST: ${resources.db.output.host}
      USER: ${resources.db.props.username}
    """)


def test_other_components_are_listed_not_deployed(project: Path) -> None:
    manifest = load(write(project, OTHERS), values=parse_var("resources.db.output.host=10.0.0.5"))
    (db,) = manifest.undeployed
    assert (db.resource, db.component) == ("db", "rds")
    assert "component rds is not deployed by this toolkit" in db.reasons[0]
    assert dict(manifest.functions[0].environment_variables) == {"HOST": "10.0.0.5",
                                                                 "USER": "cap"}


def test_a_reference_into_another_component_needs_a_value(project: Path) -> None:
    (found,) = problems(write(project, OTHERS))
    assert "resources.a.props.environmentVariables.HOST: ${resources.db.output.host} needs a " \
           "value: db is not deployed by this toolkit (component rds)" in found
    assert "--var resources.db.output.host=VALUE" in found


def test_strict_makes_every_resource_not_deployed_an_error(project: Path) -> None:
    values = parse_var("resources.db.output.host=h")
    (found,) = problems(write(project, OTHERS), values=values, strict=True)
    assert "s.yaml:6:3: resources.db: --strict: db is not deployed: component rds" in found


def test_values_file_and_var(project: Path) -> None:
    path = project / "values.yaml"
    path.write_text("resources:\n  db:\n    output:\n      host: 10.0.0.9\n      port: 5432\n")
    values = read_values_file(path).merged(parse_var("resources.db.output.port=6543"))
    assert values.get("db", "output", ["host"]) == (True, "10.0.0.9")
    assert values.get("db", "output", ["port"]) == (True, 6543)
    with pytest.raises(InvalidInputError, match=r"expected resources\.<name>\.output\.<key>"):
        parse_var("vars.x=1")
    with pytest.raises(InvalidInputError, match="expected PATH=VALUE"):
        parse_var("resources.db.output.host")


def test_a_value_for_a_deployed_resource_is_refused(project: Path) -> None:
    values = ExternalValues({"a": {"output": {"x": 1}}, "db": {"output": {"host": "h"}}}, "v.yaml")
    (found,) = problems(write(project, OTHERS), values=values)
    assert "v.yaml: a value is given for a, which this toolkit deploys" in found


def test_pending_props_and_runtimes_list_the_function_by_name(project: Path) -> None:
    text = HEAD + fn("a", "a", "gpuConfig: {gpuType: fc.gpu.tesla.1}\n") + fn("b", "b").replace(
        "python3.10", "java11")
    manifest = load(write(project, text))
    reasons = {u.resource: u.reasons for u in manifest.undeployed}
    assert reasons == {"a": ("not deployed by this toolkit: gpuConfig (GPU functions run "
                             "container images, which this toolkit does not deploy)",),
                       "b": ("runtime java11 is not deployed by this toolkit (the emulator "
                             "runs Python, Node.js and custom runtimes)",)}
    assert manifest.functions == ()


def test_vpc_and_nas_auto_are_accepted_with_a_note(project: Path) -> None:
    text = HEAD + fn("a", "a", "vpcConfig: auto\nnasConfig: auto\n")
    manifest = load(write(project, text))
    assert manifest.functions[0].vpc_auto and manifest.functions[0].nas_auto
    assert any("no VPC is created" in n for n in manifest.notes)
    vpc = "vpcConfig: {vpcId: vpc-1, vSwitchIds: [vsw-1], securityGroupId: sg-1}\n"
    (spec,) = load(write(project, HEAD + fn("a", "a", vpc))).functions
    assert dict(spec.settings["vpcConfig"]) == {"vpcId": "vpc-1", "vSwitchIds": ("vsw-1",),
                                                "securityGroupId": "sg-1"}
    found = problems(write(project, HEAD + fn("a", "a", "vpcConfig: {vpcId: v}\n")))
    assert any("vpcConfig.vpcId: must be a VPC id (vpc-...)" in f for f in found)


# --- actions --------------------------------------------------------------------------------------


def test_actions_run_steps_are_read_with_their_paths(project: Path) -> None:
    text = HEAD.replace("resources:\n", "actions:\n  pre-deploy:\n    - run: echo global\n"
                        "resources:\n") + fn("a", "a") + """\
    actions:
      pre-deploy:
        - run: echo ${this.props.functionName}
          path: ./code/a
      success-deploy:
        - run: echo ${this.output.functionArn}
          allow_failure: true
      post-remove:
        - run: echo bye
"""
    hooks = load(write(project, text)).hooks
    (glob,) = hooks.select("pre", "deploy", None)
    (pre,) = hooks.select("pre", "deploy", "a")
    (success,) = hooks.select("success", "deploy", "a")
    (bye,) = hooks.select("complete", "remove", "a")  # post- is complete-'s old name
    assert glob.run == "echo global" and glob.path == project
    assert pre.run == "echo a-fn" and pre.path == project / "code" / "a"
    assert success.run == f"echo acs:fc:cn-hangzhou:{ACCOUNT}:functions/a-fn"
    assert success.allow_failure.always and bye.run == "echo bye"


@pytest.mark.parametrize(("step", "expected"), [
    ("pre-deploy:\n        - plugin: dingding-robot",
     "plugin steps are not run by this toolkit (plugin 'dingding-robot')"),
    ("pre-build:\n        - run: make",
     "hook 'pre-build' is for a command this toolkit does not run hooks for"),
    ("later-deploy:\n        - run: x", "unknown hook 'later-deploy'"),
    ("pre-deploy:\n        - run: x\n          shell: bash", "unknown step key 'shell'"),
    ("pre-deploy:\n        - component: fc3 build",
     "only an fc3 resource's success-deploy steps"),
])
def test_other_action_kinds_are_refused_by_name(project: Path, step: str, expected: str) -> None:
    text = HEAD + fn("a", "a") + f"    actions:\n      {step}\n"
    assert any(expected in p for p in problems(write(project, text)))


# --- flow definitions -----------------------------------------------------------------------------


FLOW_DOC = """\
Type: StateMachine
Name: ${vars.stage}-flow
SpecVersion: v1
StartAt: Call
States:
  - Type: Task
    Name: Call
    Action: FC:InvokeFunction
    TaskMode: RequestComplete
    Parameters:
      resourceArn: acs:fc:::functions/a-fn/LATEST
      body:
        url: ${resources.a.output.functionArn}
    End: true
"""


def flow(definition: str) -> str:
    return f"""\
  f:
    component: flow
    props:
      region: cn-hangzhou
      name: f
      definition: {definition}
      role: f-role
"""


def test_yaml_file_definition_is_resolved_and_mapped_to_its_file(project: Path) -> None:
    (project / "flow.yaml").write_text(FLOW_DOC)
    manifest = load(write(project, HEAD + fn("a", "a") +
                          flow("${yaml(file('flow.yaml'))}")))
    (spec,) = manifest.flows
    assert spec.definition == project / "flow.yaml" and spec.document is not None
    assert "Name: prod-flow" in spec.document
    assert f"url: acs:fc:cn-hangzhou:{ACCOUNT}:functions/a-fn" in spec.document
    line = spec.document.splitlines().index("  - Type: Task") + 1
    assert spec.document_map is not None and spec.document_map.lookup(line, 5) == (6, 5)


def test_inline_definition_maps_to_s_yaml(project: Path) -> None:
    inline = "\n" + textwrap.indent(FLOW_DOC.replace("${resources.a.output.functionArn}",
                                                     "x"), " " * 8)
    manifest = load(write(project, HEAD + flow(inline)))
    (spec,) = manifest.flows
    assert spec.definition == project / "s.yaml"
    where = spec.document_map.lookup(1, 1) if spec.document_map else None
    assert where == (12, 9)  # "Type: StateMachine" under definition:


def test_file_text_definition_is_kept_verbatim(project: Path) -> None:
    (project / "flow.yaml").write_text(FLOW_DOC)
    (spec,) = load(write(project, HEAD + flow("${file('flow.yaml')}"))).flows
    assert spec.document == FLOW_DOC  # file() is the text; nothing inside is resolved


# --- the expression language ------------------------------------------------------------------

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)


@given(st.lists(NAMES, min_size=1, max_size=5))
def test_dotted_references_parse_to_their_path(parts: list[str]) -> None:
    assert reference_path(parse_magic(".".join(parts))) == tuple(parts)


@given(st.text(max_size=40))
def test_the_parser_never_fails_otherwise(text: str) -> None:
    try:
        parse_magic(text)
    except MagicSyntaxError as exc:
        assert 1 <= exc.column <= len(text) + 1


@given(st.text(alphabet=st.characters(blacklist_characters="$"), max_size=30))
def test_text_without_a_dollar_is_one_literal(text: str) -> None:
    assert [s.text for s in find_magic(text)] == ([text] if text else [])


def test_a_local_layer_directory_is_kept_for_deploy_up_to_publish(project: Path) -> None:
    (project / "layers" / "prices").mkdir(parents=True)
    text = HEAD + fn("a", "a", "layers: [./layers/prices, ./layers/prices, ./layers/none]\n")
    found = problems(write(project, text))
    assert any("./layers/prices is listed twice" in p for p in found), found
    assert any("'./layers/none'" in p and "layer version ARN" in p for p in found), found
    manifest = load(write(project, HEAD + fn("a", "a", "layers: [./layers/prices]\n")))
    assert manifest.functions[0].layers == (str((project / "layers" / "prices").resolve()),)
