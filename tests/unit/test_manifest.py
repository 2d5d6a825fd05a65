"""s.yaml loading: magic variables, fc3/fnf validation, defaults, positioned problems."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deployer.config.manifest import ExecutionMode, ManifestError, load_manifest
from deployer.config.schema import default_cpu
from deployer.errors import ExitCode, NotFoundError

FUNCTION = """\
edition: 3.0.0
name: demo
resources:
  fn:
    component: fc3
    props:
      region: cn-hangzhou
      functionName: StartJob
      runtime: python3.10
      code: ./code
      handler: index.handler
"""


@pytest.fixture
def project(tmp_path: Path, project_root: Path) -> Path:
    shutil.copy(project_root / "s.yaml", tmp_path / "s.yaml")
    shutil.copytree(project_root / "functions", tmp_path / "functions")
    shutil.copytree(project_root / "templates", tmp_path / "templates")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "index.py").write_text("def handler(event, context):\n    return 1\n")
    return tmp_path


def write(project: Path, text: str) -> Path:
    path = project / "s.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def problems(path: Path, env: dict[str, str] | None = None) -> list[str]:
    with pytest.raises(ManifestError) as info:
        load_manifest(path, env=env or {})
    assert info.value.exit_code == ExitCode.INVALID_INPUT
    return [p.format() for p in info.value.problems]


def test_project_manifest_loads_with_resolved_variables_and_defaults(project: Path) -> None:
    manifest = load_manifest(project / "s.yaml", env={})
    start, status = manifest.functions
    assert (start.function_name, status.function_name) == ("StartJob", "GetJobStatus")
    assert start.region == "cn-hangzhou" and start.timeout == 30 and start.memory_size == 512
    assert start.code_dir == (project / "functions" / "start_job").resolve()
    assert (start.cpu, start.disk_size, start.instance_concurrency) == (0.35, 512, 1)
    assert start.internet_access is True and dict(start.environment_variables) == {}
    (flow,) = manifest.flows
    assert flow.name == "MyWorkFlow" and flow.execution_mode is ExecutionMode.STANDARD
    assert flow.role_name == "job-poller-flow-role" and flow.role_arn is None
    assert dict(flow.definition_vars) == {
        "start_job_function": "StartJob", "get_job_status_function": "GetJobStatus",
        "wait_seconds": 10, "max_polls": 3,
    }
    assert flow.position is not None and str(flow.position) == "s.yaml:35:3"


def test_env_overrides_region(project: Path) -> None:
    manifest = load_manifest(project / "s.yaml", env={"ALIBABA_CLOUD_REGION": "cn-shanghai"})
    assert {f.region for f in (*manifest.functions, *manifest.flows)} == {"cn-shanghai"}


def test_fc3_defaults_when_props_absent(project: Path) -> None:
    (fn,) = load_manifest(write(project, FUNCTION), env={}).functions
    assert (fn.memory_size, fn.timeout, fn.cpu, fn.disk_size) == (512, 3, 0.35, 512)
    assert (fn.instance_concurrency, fn.internet_access, fn.description) == (1, True, "")


# --- broken manifests: exact message fragment, file:line:column and field path -----------------

BROKEN = [
    ("edition: 2.0.0\n" + FUNCTION.split("\n", 1)[1], "s.yaml:1:1: edition: must be 3.0.0"),
    (FUNCTION + "      memorySize: 100\n",
     "s.yaml:12:7: resources.fn.props.memorySize: must be between 128 and 32768 MB (got 100)"),
    (FUNCTION + "      memorySize: 200\n",
     "s.yaml:12:7: resources.fn.props.memorySize: must be a multiple of 64 (got 200)"),
    (FUNCTION + "      timeout: 0\n",
     "s.yaml:12:7: resources.fn.props.timeout: must be between 1 and 86400 seconds (got 0)"),
    (FUNCTION + "      timout: 30\n",
     "s.yaml:12:7: resources.fn.props.timout: unknown fc3 prop (did you mean 'timeout'?)"),
    (FUNCTION.replace("StartJob", "9Start"),
     "s.yaml:8:7: resources.fn.props.functionName: must start with a letter or _"),
    (FUNCTION.replace("python3.10", "python3.11"),
     "s.yaml:9:7: resources.fn.props.runtime: unknown runtime 'python3.11'"),
    (FUNCTION.replace("index.handler", "index"),
     "s.yaml:11:7: resources.fn.props.handler: must be <module>.<function>"),
    (FUNCTION.replace("cn-hangzhou", "cn-chengdu"),
     "s.yaml:7:7: resources.fn.props.region: region 'cn-chengdu' has Function Compute 3.0 but "
     "no CloudFlow service; this project needs both, use one of: cn-hangzhou"),
    (FUNCTION.replace("index.handler", "main.handler"),
     "s.yaml:11:7: resources.fn.props.handler: needs main.py in the code directory './code', "
     "which has no such file"),
    (FUNCTION.replace("index.handler", "pkg.mod.handler"),
     "s.yaml:11:7: resources.fn.props.handler: needs pkg/mod.py in the code directory"),
    (FUNCTION.replace("./code", "./missing"),
     "s.yaml:10:7: resources.fn.props.code: code directory './missing' does not exist"),
    (FUNCTION.replace("      handler: index.handler\n", ""),
     "s.yaml:6:5: resources.fn.props.handler: required prop 'handler' is missing"),
    (FUNCTION.replace("component: fc3", "component: 7"),
     "s.yaml:5:5: resources.fn.component: required: the component's name"),
    (FUNCTION + "      cpu: 2\n",
     "s.yaml:12:7: resources.fn.props.cpu: memory (GB) / cpu must be between 1 and 4"),
    (FUNCTION + "      diskSize: 1024\n",
     "s.yaml:12:7: resources.fn.props.diskSize: must be 512 or 10240 (got 1024)"),
    (FUNCTION + "      environmentVariables:\n        FC_TOKEN: x\n",
     "s.yaml:13:9: resources.fn.props.environmentVariables.FC_TOKEN: names starting with FC_"),
    (FUNCTION + "      environmentVariables:\n        BIG: " + "x" * 4100 + "\n",
     "s.yaml:12:7: resources.fn.props.environmentVariables: names and values total 4103 bytes"),
    (FUNCTION + "      logConfig: manual\n",
     "s.yaml:12:7: resources.fn.props.logConfig: must be a map (got a string)"),
    (FUNCTION + "      logConfig: {project: my-logs, logstore: X}\n",
     "s.yaml:12:37: resources.fn.props.logConfig.logstore: must be a logstore name"),
    (FUNCTION + "      logConfig: {logstore: fc-logs}\n",
     "s.yaml:12:7: resources.fn.props.logConfig.project: required prop 'project' is missing"),
    (FUNCTION + "      internetAccess: yes please\n",
     "s.yaml:12:7: resources.fn.props.internetAccess: must be true or false"),
    (FUNCTION.replace("resources:", "flow:\n  deploy: [[fn]]\nresources:"),
     "s.yaml:3:1: flow: not supported: explicit command ordering"),
    (FUNCTION.replace("resources:", "resorces:"),
     "s.yaml:3:1: resorces: unknown top-level key (did you mean 'resources'?)"),
    (FUNCTION + "      description: ${file('./desc.txt')}\n",
     "s.yaml:12:7: resources.fn.props.description: ${file('./desc.txt')}: file './desc.txt' "
     "does not exist"),
    (FUNCTION + "      description: ${this.nope}\n",
     "s.yaml:12:7: resources.fn.props.description: ${this.nope}: this has name, component, "
     "access, props"),
    (FUNCTION + "      description: ${var.x}\n",
     "s.yaml:12:7: resources.fn.props.description: ${var.x}: unknown magic variable 'var' "
     "(did you mean 'vars'?)"),
    (FUNCTION + "      role: ${config('SecretKey')}\n",
     "s.yaml:12:7: resources.fn.props.role: ${config('SecretKey')}: unknown config key "
     "'SecretKey'; the keys are AccountID, AccessKeyID, AccessKeySecret, SecurityToken"),
    (FUNCTION + "      description: ${resources.fn.output.functionArn}\n",
     "s.yaml:12:7: resources.fn.props.description: ${resources.fn.output.functionArn}: a "
     "resource's own output is known only in its actions"),
    (FUNCTION + "      description: ${env('NOPE')}\n",
     "s.yaml:12:7: resources.fn.props.description: ${env('NOPE')}: environment variable NOPE "
     "is not set and has no default"),
    (FUNCTION + "      description: 'broken ${vars.x'\n",
     "s.yaml:12:7: resources.fn.props.description: unterminated magic variable"),
    (FUNCTION + "  fn:\n    component: fc3\n",
     "s.yaml:12:3: invalid YAML: while constructing a mapping"),
    ("- just\n- a list\n", "s.yaml:1:1: must be a YAML map"),
]


@pytest.mark.parametrize(("text", "expected"), BROKEN)
def test_broken_manifest_is_reported_with_position_and_field(
    project: Path, text: str, expected: str
) -> None:
    found = problems(write(project, text))
    assert any(expected in p for p in found), found


FLOW = """\
edition: 3.0.0
name: demo
resources:
  flow:
    component: fnf
    props:
      region: cn-hangzhou
      name: MyWorkFlow
      definition: ./templates/flow.yaml.j2
"""

BROKEN_FLOWS = [
    (FLOW + "      role: r\n      roleArn: acs:ram::123:role/r\n",
     "s.yaml:11:7: resources.flow.props.roleArn: give either role (a role to create) or roleArn"),
    (FLOW + "      roleArn: arn:aws:iam::1:role/x\n",
     "s.yaml:10:7: resources.flow.props.roleArn: must look like acs:ram::<account-id>:role/<name>"),
    (FLOW + "      executionMode: Expres\n",
     "s.yaml:10:7: resources.flow.props.executionMode: must be one of Standard, Express "
     "(got 'Expres') (did you mean 'Express'?)"),
    (FLOW.replace("flow.yaml.j2", "nope.yaml"),
     "s.yaml:9:7: resources.flow.props.definition: definition file './templates/nope.yaml'"),
    (FLOW + "      definition_vars: {}\n",
     "s.yaml:10:7: resources.flow.props.definition_vars: unknown fnf prop "
     "(did you mean 'definitionVars'?)"),
    (FLOW.replace("      name: MyWorkFlow\n", ""),
     "s.yaml:6:5: resources.flow.props.name: required prop 'name' is missing"),
    (FLOW + "  again:\n    component: flow\n    props:\n      region: cn-hangzhou\n"
     "      name: MyWorkFlow\n      definition: ./templates/flow.yaml.j2\n",
     "s.yaml:14:7: resources.again.props.name: flow 'MyWorkFlow' is already defined"),
]


@pytest.mark.parametrize(("text", "expected"), BROKEN_FLOWS)
def test_broken_flow_resource(project: Path, text: str, expected: str) -> None:
    found = problems(write(project, text))
    assert any(expected in p for p in found), found


def test_all_problems_are_collected_in_line_order(project: Path) -> None:
    text = FUNCTION.replace("python3.10", "ruby").replace("index.handler", "x") + \
        "      memorySize: 200\n"
    with pytest.raises(ManifestError) as info:
        load_manifest(write(project, text), env={})
    lines = [p.position.line for p in info.value.problems]
    assert lines == [9, 11, 12]
    assert info.value.message == "s.yaml: 3 problems"
    assert len(info.value.details()) == 3


def test_missing_manifest_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="does not exist"):
        load_manifest(tmp_path / "s.yaml")


def test_role_warning_without_execution_role(project: Path) -> None:
    manifest = load_manifest(write(project, FLOW), env={})
    (warning,) = manifest.warnings
    assert "no execution role" in warning.format()


# --- magic variables ---------------------------------------------------------------------------

VARS = """\
edition: 3.0.0
name: demo
vars:
  region: ${{env('REGION', 'cn-shanghai')}}
  sizes:
    small: 256
  nested:
    size: ${{vars.sizes.small}}
  label: size-${{vars.nested.size}}-${{env('STAGE', 'dev')}}
  flag: true
{extra}resources:
  fn:
    component: fc3
    props:
      region: ${{vars.region}}
      functionName: StartJob
      runtime: python3.10
      code: ./code
      handler: index.handler
      memorySize: ${{vars.nested.size}}
      description: ${{vars.label}} ${{vars.flag}}
      environmentVariables: ${{vars.envs}}
  flow:
    component: fnf
    props:
      region: ${{resources.fn.props.region}}
      name: F
      definition: ./templates/flow.yaml.j2
      definitionVars:
        fn: ${{resources.fn.props.functionName}}
        memory: ${{resources.fn.props.memorySize}}
        sizes: ${{vars.sizes}}
      roleArn: acs:ram::${{config('AccountID')}}:role/x
"""
ENVS = "  envs:\n    STAGE: ${env('STAGE', 'dev')}\n"


def test_variables_keep_types_and_interpolate(project: Path) -> None:
    manifest = load_manifest(write(project, VARS.format(extra=ENVS)),
                             env={"STAGE": "prod"}, account_id="1234567890123456")
    (fn,), (flow,) = manifest.functions, manifest.flows
    assert fn.region == "cn-shanghai" and flow.region == "cn-shanghai"
    assert fn.memory_size == 256  # whole-value reference keeps the int
    assert fn.description == "size-256-prod true"  # embedded -> text
    assert dict(fn.environment_variables) == {"STAGE": "prod"}
    assert dict(flow.definition_vars) == {"fn": "StartJob", "memory": 256,
                                          "sizes": {"small": 256}}
    assert flow.role_arn == "acs:ram::1234567890123456:role/x"
    assert manifest.vars["nested"] == {"size": 256}


def test_config_account_id_falls_back_to_env(project: Path) -> None:
    manifest = load_manifest(write(project, VARS.format(extra=ENVS)),
                             env={"ALIBABA_CLOUD_ACCOUNT_ID": "42", "REGION": "cn-beijing"})
    assert manifest.flows[0].role_arn == "acs:ram::42:role/x"
    assert manifest.functions[0].region == "cn-beijing"


def test_config_account_id_missing_is_an_error(project: Path) -> None:
    found = problems(write(project, VARS.format(extra=ENVS)))
    assert found == ["s.yaml:35:7: resources.flow.props.roleArn: ${config('AccountID')} needs "
                     "the account id: pass --account-id or set ALIBABA_CLOUD_ACCOUNT_ID"]


def test_undefined_variable_is_named_with_a_suggestion(project: Path) -> None:
    found = problems(write(project, VARS.format(extra="")), env={"ALIBABA_CLOUD_ACCOUNT_ID": "1"})
    assert found == ["s.yaml:22:7: resources.fn.props.environmentVariables: ${vars.envs}: "
                     "vars.envs is not defined"]
    text = FUNCTION.replace("name: demo\n", "name: demo\nvars:\n  region: cn-hangzhou\n")
    found = problems(write(project, text.replace("region: cn-hangzhou\n      function",
                                                 "region: ${vars.regoin}\n      function")))
    assert found == ["s.yaml:9:7: resources.fn.props.region: ${vars.regoin}: vars.regoin is "
                     "not defined (did you mean 'region'?)"]


def test_reference_cycle_is_reported_once_with_its_chain(project: Path) -> None:
    text = FUNCTION.replace("name: demo\n", "name: demo\nvars:\n  a: ${vars.b}\n"
                            "  b: x-${vars.c}\n  c: ${vars.a}\n")
    found = problems(write(project, text))
    assert found == ["s.yaml:6:3: vars.c: reference cycle: vars.a -> vars.b -> vars.c -> vars.a"]


def test_resource_props_cycle(project: Path) -> None:
    text = FUNCTION.replace("functionName: StartJob",
                            "functionName: ${resources.fn.props.description}") + \
        "      description: ${resources.fn.props.functionName}\n"
    found = problems(write(project, text))
    assert len(found) == 1 and "reference cycle: resources.fn.props.functionName -> " \
        "resources.fn.props.description -> resources.fn.props.functionName" in found[0]


def test_unknown_resource_reference(project: Path) -> None:
    text = FUNCTION + "      description: ${resources.fnn.props.functionName}\n"
    assert problems(write(project, text)) == [
        "s.yaml:12:7: resources.fn.props.description: ${resources.fnn.props.functionName}: "
        "no resource named 'fnn' (did you mean 'fn'?)"]


def test_map_cannot_be_embedded_in_text(project: Path) -> None:
    text = FUNCTION.replace("name: demo\n", "name: demo\nvars:\n  m: {a: 1}\n") + \
        "      description: x ${vars.m}\n"
    assert "${vars.m} is a map and cannot be embedded in a string" in problems(
        write(project, text))[0]


@given(st.integers(min_value=2, max_value=512))
def test_default_cpu_always_satisfies_the_ratio(units: int) -> None:
    memory = units * 64
    cpu = default_cpu(memory)
    assert 1 - 1e-9 <= (memory / 1024) / cpu <= 4 + 1e-9
    assert abs(cpu / 0.05 - round(cpu / 0.05)) < 1e-6
    if 0.35 <= memory / 1024 <= 1.4:
        assert cpu == 0.35


@given(st.text(alphabet=st.characters(blacklist_characters="${}'\"\n\r\x00"), max_size=30))
def test_text_without_magic_is_kept_verbatim(value: str) -> None:
    from deployer.config.variables import Resolver, VariableScope

    seen: list[object] = []
    resolver = Resolver(VariableScope({"vars": {"x": value}}, {}, {}, Path(".")), seen.append)
    assert resolver.resolve(("vars",), {"x": value, "y": f"<{value}>"}) == \
        {"x": value, "y": f"<{value}>"}
    assert seen == []
