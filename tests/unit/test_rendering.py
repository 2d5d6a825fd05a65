"""Flow rendering: StrictUndefined errors that name the variable, ARNs for region/account."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from deployer.config.manifest import load_manifest
from deployer.config.specs import FlowSpec
from deployer.core.rendering import render_flow
from deployer.errors import InvalidInputError, NotFoundError
from deployer.fdl import check_flow


@pytest.fixture
def flow(project_root: Path) -> FlowSpec:
    return load_manifest(project_root / "s.yaml", env={}).flows[0]


@pytest.mark.parametrize(("region", "account"), [
    ("cn-hangzhou", "1234567890123456"), ("ap-southeast-1", "5555000011112222"),
])
def test_arns_follow_region_and_account(flow: FlowSpec, project_root: Path, region: str,
                                        account: str) -> None:
    rendered = render_flow(flow, region=region, account_id=account, project_dir=project_root)
    assert f"resourceArn: acs:fc:{region}:{account}:functions/StartJob/LATEST\n" in rendered.text
    assert f"resourceArn: acs:fc:{region}:{account}:functions/GetJobStatus/LATEST\n" \
        in rendered.text
    assert "Name: MyWorkFlow\n" in rendered.text and "Seconds: 10\n" in rendered.text
    assert "$Input.try_count > 3\n" in rendered.text
    assert rendered.source_path == flow.definition
    assert check_flow(rendered.text, source="flow.yaml").ok


def test_definition_vars_and_flow_name_reach_the_template(flow: FlowSpec,
                                                          project_root: Path) -> None:
    spec = dataclasses.replace(flow, name="Other", definition_vars={
        **flow.definition_vars, "wait_seconds": 42, "max_polls": 7})
    text = render_flow(spec, region="cn-beijing", account_id="1", project_dir=project_root).text
    assert "Name: Other\n" in text and "Seconds: 42\n" in text and "try_count > 7\n" in text


def test_missing_variable_is_named_with_file_and_line(flow: FlowSpec,
                                                      project_root: Path) -> None:
    spec = dataclasses.replace(flow, definition_vars={"start_job_function": "StartJob"})
    with pytest.raises(InvalidInputError) as info:
        render_flow(spec, region="cn-hangzhou", account_id="1", project_dir=project_root)
    assert info.value.message == (
        "templates/flow.yaml.j2:44: template variable 'get_job_status_function' is undefined")
    assert "definitionVars" in (info.value.hint or "")


def test_template_syntax_error(tmp_path: Path, flow: FlowSpec) -> None:
    template = tmp_path / "bad.yaml.j2"
    template.write_text("Type: StateMachine\nName: {{ flow_name }\n")
    spec = dataclasses.replace(flow, definition=template)
    with pytest.raises(InvalidInputError, match=r"^bad\.yaml\.j2:2: template syntax error"):
        render_flow(spec, region="cn-hangzhou", account_id="1", project_dir=tmp_path)


def test_plain_yaml_is_read_verbatim(tmp_path: Path, flow: FlowSpec) -> None:
    plain = tmp_path / "flow.yaml"
    plain.write_text("Name: {{ not_rendered }}\n")
    spec = dataclasses.replace(flow, definition=plain)
    rendered = render_flow(spec, region="cn-hangzhou", account_id="1")
    assert rendered.text == "Name: {{ not_rendered }}\n"


def test_missing_definition_file(tmp_path: Path, flow: FlowSpec) -> None:
    spec = dataclasses.replace(flow, definition=tmp_path / "gone.yaml.j2")
    with pytest.raises(NotFoundError, match="does not exist"):
        render_flow(spec, region="cn-hangzhou", account_id="1")
