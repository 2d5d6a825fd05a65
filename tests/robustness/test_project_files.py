"""Broken project files through the CLI: every failure names the file and line, exits with the
documented code (3: invalid manifest or flow) and never reports a bug; ``--output json``
stays one JSON document."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from deployer.cli.main import cli

TEMPLATE_FAULTS = [
    ("{{ 1 // 0 }}", "ZeroDivisionError"),
    ("{% include 'other.j2' %}", "include"),
    ("{% import 'macros.j2' as m %}", "import"),
    ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "unsafe"),
    ("{% for i in range(10 ** 9) %}{% endfor %}", "range"),
    ("{{ [1][5] }}", "template"),
    ("{{ {}['k'].x }}", "k"),
]


def _validate(project):
    return CliRunner().invoke(cli, ["-C", str(project), "validate", "--output", "json"])


@pytest.mark.parametrize(("snippet", "reason"), TEMPLATE_FAULTS)
def test_a_template_that_fails_while_rendering_names_its_line(project, snippet, reason):
    template = project / "templates" / "flow.yaml.j2"
    text = template.read_text()
    line = text.count("\n") + 1
    template.write_text(f"{text}# {snippet}\n")
    result = _validate(project)
    assert result.exit_code == 3, result.stderr
    assert "bug" not in result.stderr and "Traceback" not in result.stderr
    [diagnostic] = json.loads(result.stdout)["flows"][0]["diagnostics"]
    assert (diagnostic["source"], diagnostic["line"]) == ("templates/flow.yaml.j2", line)
    assert reason in diagnostic["message"]


def test_a_manifest_nested_too_deeply_is_invalid_not_a_bug(project):
    manifest = project / "s.yaml"
    lines = manifest.read_text().count("\n")
    # 600 levels: twice what the YAML reader's recursion gives up at (its time grows faster
    # than the depth: 5,000 levels cost half a minute of CPU to be refused)
    manifest.write_text(manifest.read_text() + "extra: " + "[" * 600 + "]" * 600 + "\n")
    result = _validate(project)
    assert result.exit_code == 3, result.stderr
    assert "bug" not in result.stderr and "Traceback" not in result.stderr
    [problem] = json.loads(result.stdout)["manifest"]["problems"]
    assert problem["file"] == "s.yaml" and problem["line"] == lines + 1
    assert "nest" in problem["message"]


def test_a_rendered_flow_over_cloudflows_size_limit_fails_validation(project):
    """CloudFlow refuses a Definition over 128 KiB at CreateFlow, so validate must too."""
    template = project / "templates" / "flow.yaml.j2"
    template.write_text(template.read_text() + "# {{ 'x' * 140000 }}\n")
    result = _validate(project)
    assert result.exit_code == 3, result.stderr
    [diagnostic] = json.loads(result.stdout)["flows"][0]["diagnostics"]
    assert diagnostic["code"] == "FDL007" and "131072" in diagnostic["message"]


@pytest.mark.parametrize("key", ["", "~", "null"])
def test_a_top_level_key_that_is_null_is_reported_with_its_line(project, key):
    """``: 5`` at the top level is a null key; resolving a reference then walked over it."""
    manifest = project / "s.yaml"
    text = manifest.read_text().replace("access: default",
                                        "access: ${resources.start_job.props.code}")
    text = text.replace("\nvars:", f"\n{key}: 5\nvars:", 1)
    manifest.write_text(text)
    line = text.splitlines().index(f"{key}: 5") + 1
    result = _validate(project)
    assert result.exit_code == 3, result.stderr
    assert "bug" not in result.stderr and "Traceback" not in result.stderr
    problems = json.loads(result.stdout)["manifest"]["problems"]
    assert any(p["file"] == "s.yaml" and p["line"] == line for p in problems), problems


def test_a_function_description_over_256_characters_fails_validation(project):
    """The emulated CreateFunction refuses it (fc3-api.md §6.1), so validate must too."""
    manifest = project / "s.yaml"
    text = manifest.read_text()
    old = "description: Starts a long-running job and returns its job_id"
    line = text.splitlines().index(f"      {old}") + 1
    manifest.write_text(text.replace(old, "description: " + "d" * 257, 1))
    result = _validate(project)
    assert result.exit_code == 3, result.stderr
    [problem] = json.loads(result.stdout)["manifest"]["problems"]
    assert problem["line"] == line and "256" in problem["message"]
