"""Diagnostics of a rendered flow name the template's own line and column (the line the user
edits), with the rendered position as secondary information: validator findings and YAML
errors alike, through loops and conditionals that shift lines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jinja2
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.cli.main import cli
from deployer.core.template_map import build_line_map
from deployer.errors import ExitCode

# A flow whose states come from a loop and a conditional, so rendered lines and template lines
# differ by a different amount in each part of the file.
TEMPLATE = """\
{#- a comment block
    that takes three lines -#}
Type: StateMachine
Name: {{ flow_name }}
SpecVersion: v1
StartAt: Step0
States:
{%- for i in range(steps) %}
  - Type: Pass
    Name: Step{{ i }}
    Next: {{ "Step%d" % (i + 1) if i + 1 < steps else "Last" }}
{%- endfor %}
{% if with_wait %}
  - Type: Wait
    Name: Last
    Seconds: {{ seconds }}
    End: true
{% else %}
  - Type: Pass
    Name: Last
    End: true
{% endif %}
"""


@pytest.fixture
def project(tmp_path: Path, project_root: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    shutil.copytree(project_root / "functions", root / "functions")
    (root / "templates").mkdir()
    (root / "templates" / "flow.yaml.j2").write_text(TEMPLATE)
    manifest = (project_root / "s.yaml").read_text()
    start = manifest.index("      definitionVars:")
    end = manifest.index("      # The execution role")
    manifest = manifest[:start] + ("      definitionVars:\n        steps: 3\n"
                                   "        with_wait: true\n        seconds: 0\n") + manifest[end:]
    (root / "s.yaml").write_text(manifest)
    return root


def _validate(project: Path) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["-C", str(project), "validate", "--output", "json"])
    return result.exit_code, json.loads(result.stdout)


def test_a_validator_finding_after_a_loop_names_the_template_line(project: Path) -> None:
    code, doc = _validate(project)
    (flow,) = doc["flows"]
    (diag,) = [d for d in flow["diagnostics"] if d["severity"] == "error"]
    assert code == ExitCode.INVALID_INPUT
    assert diag["path"] == "States[3](Last).Seconds"
    # `Seconds: {{ seconds }}` is template line 16; rendered it is line 18 (3 loop passes)
    assert (diag["source"], diag["line"], diag["column"]) == ("templates/flow.yaml.j2", 16, 14)
    rendered = (project / ".deploy" / "rendered" / "MyWorkFlow.yaml").read_text().splitlines()
    assert diag["rendered"]["source"] == ".deploy/rendered/MyWorkFlow.yaml"
    assert rendered[diag["rendered"]["line"] - 1] == "    Seconds: 0"
    assert diag["rendered"]["line"] == 18 and diag["rendered"]["column"] == 14
    text = CliRunner().invoke(cli, ["-C", str(project), "validate"]).stdout
    assert "templates/flow.yaml.j2:16:14: error FDL402: States[3](Last).Seconds:" in text
    assert "[rendered .deploy/rendered/MyWorkFlow.yaml:18:14]" in text


def test_a_finding_inside_the_loop_body_names_the_loop_line(project: Path) -> None:
    template = project / "templates" / "flow.yaml.j2"
    template.write_text(template.read_text().replace("  - Type: Pass\n    Name: Step",
                                                     "  - Type: Paas\n    Name: Step"))
    _, doc = _validate(project)
    errors = [d for d in doc["flows"][0]["diagnostics"] if d["severity"] == "error"]
    steps = [d for d in errors if d["path"].startswith(("States[0]", "States[1]", "States[2]"))]
    assert len(steps) == 3  # one per loop pass, all on the one template line
    assert {(d["line"], d["column"]) for d in steps} == {(9, 11)}
    assert sorted(d["rendered"]["line"] for d in steps) == [6, 9, 12]


def test_a_yaml_error_names_the_template_line(project: Path) -> None:
    template = project / "templates" / "flow.yaml.j2"
    template.write_text(template.read_text().replace("    Name: Last\n    Seconds",
                                                     "    Name: Last: oops\n    Seconds"))
    code, doc = _validate(project)
    (diag,) = doc["flows"][0]["diagnostics"]
    assert code == ExitCode.INVALID_INPUT and "invalid YAML" in diag["message"]
    assert (diag["source"], diag["line"], diag["column"]) == ("templates/flow.yaml.j2", 15, 15)
    assert (diag["rendered"]["line"], diag["rendered"]["column"]) == (17, 15)


def test_deploy_up_reports_template_lines_before_starting_anything(project: Path) -> None:
    result = CliRunner().invoke(cli, ["-C", str(project), "up", "--target", "local"],
                                env={"DEPLOY_EMULATOR_PORT": "1"})
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "templates/flow.yaml.j2:16:14: error FDL402" in result.stderr
    assert "Starting the local emulator" not in result.stderr  # nothing was started
    assert not (project / ".deploy" / "emulator").exists()


def test_flow_test_reports_template_lines(project: Path) -> None:
    result = CliRunner().invoke(cli, ["-C", str(project), "flow", "test",
                                      "templates/flow.yaml.j2"])
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "flow.yaml.j2:16:14: error FDL402" in result.stderr
    assert "[rendered line 18:14]" in result.stderr


def test_a_template_that_rewrites_its_own_text_falls_back_to_rendered_lines() -> None:
    env = jinja2.Environment(keep_trailing_newline=True)
    source = "{% set body %}a: 1\nb: 2\n{% endset %}{{ body | upper }}{{ body | length }}\n"
    plain = env.from_string(source).render()
    assert build_line_map(env, source, {}, plain) is None  # markers would change the text


# --- the map, as a property -----------------------------------------------------------------

LINE = st.integers(0, 999).map(lambda n: f"key{n}: value{n}")


@st.composite
def templates(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    """Random templates of literal lines, loops, conditionals and expressions, plus for each
    literal template line the text it renders to."""
    lines: list[str] = []
    literal: dict[int, str] = {}
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["line", "loop", "if", "expr", "strip"]))
        text = draw(LINE)
        if kind == "line":
            lines.append(text)
            literal[len(lines)] = text
        elif kind == "loop":
            lines.append(f"{{% for i in range({draw(st.integers(0, 3))}) %}}")
            lines.append(f"  {text}")
            literal[len(lines)] = f"  {text}"
            lines.append("{% endfor %}")
        elif kind == "if":
            lines.append(f"{{% if {draw(st.booleans())} %}}")
            lines.append(text)
            literal[len(lines)] = text
            lines.append("{% endif %}")
        elif kind == "strip":
            lines.append("{%- if true -%}")
            lines.append(text)
            lines.append("{%- endif %}")
        else:
            lines.append(f"{text}{{{{ '' }}}}")
            literal[len(lines)] = text
    return "\n".join(lines) + "\n", {str(n): t for n, t in literal.items()}


@settings(max_examples=200, deadline=None)
@given(templates())
def test_every_rendered_literal_line_maps_to_the_template_line_it_came_from(case) -> None:
    source, literal = case
    env = jinja2.Environment(keep_trailing_newline=True)
    plain = env.from_string(source).render()
    line_map = build_line_map(env, source, {}, plain)
    assert line_map is not None
    source_lines = source.split("\n")
    for number, text in enumerate(plain.split("\n"), start=1):
        # every rendered character is literal template text here (expressions render ''):
        # the map must point at that very character
        for column, char in enumerate(text, start=1):
            where = line_map.lookup(number, column)
            assert where is not None
            assert source_lines[where[0] - 1][where[1] - 1] == char
        where = line_map.lookup(number, 1)
        if text and where is not None and str(where[0]) in literal and \
                literal[str(where[0])] == text:
            assert where[1] == 1
