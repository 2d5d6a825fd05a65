"""`deploy init`: a new project that validates, deploys on the emulator and passes its own tests,
with a CI workflow (GitHub Actions, OIDC) that the repository's examples carry too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from deployer.cli.main import cli
from deployer.testing import mock_cloud

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "deployer" / "project_templates"


def _deploy(*args: str, code: int = 0):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, (result.exit_code, result.stderr)
    return result


def _run_generated_tests(project: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ALIBABA_CLOUD_ECS_METADATA_DISABLED": "true"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         str(project / "tests")], cwd=project, env=env, capture_output=True, text=True,
        timeout=300)


@pytest.mark.parametrize("template", ["seed", "blank"])
def test_a_new_project_validates_deploys_and_passes_its_own_tests(tmp_path, template):
    project = tmp_path / "My App"
    created = json.loads(_deploy("init", str(project), "--template", template,
                                 "--output", "json").stdout)
    assert created["name"] == "my-app" and created["template"] == template
    assert {"s.yaml", "tests/test_app.py", ".github/workflows/deploy.yml", ".gitignore",
            "requirements-dev.txt", "README.md"} <= set(created["files"])
    assert all((project / name).is_file() for name in created["files"])

    validate = json.loads(_deploy("-C", str(project), "validate", "--output", "json").stdout)
    assert validate["ok"] is True and validate["manifest"]["name"] == "my-app"
    with mock_cloud() as cloud:
        up = json.loads(_deploy("-C", str(project), "up", "--yes", "--output", "json").stdout)
        again = json.loads(_deploy("-C", str(project), "up", "--yes", "--output", "json").stdout)
        flow = validate["manifest"]["flows"][0]
        run = _deploy("-C", str(project), "execute", "--flow", flow, "--input",
                      '{"delay": 20, "name": "you"}', "--output", "json")
    assert up["account_id"] == cloud.account_id and up["changed"] is True
    assert again["write_calls"] == 0
    assert json.loads(run.stdout)["status"] == "Succeeded"

    tests = _run_generated_tests(project)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert " passed" in tests.stdout and "failed" not in tests.stdout


def test_init_names_the_project_after_the_directory_and_says_what_next(tmp_path):
    result = _deploy("-C", str(tmp_path), "init", "billing_jobs")
    manifest = (tmp_path / "billing_jobs" / "s.yaml").read_text()
    assert "name: billing-jobs\n" in manifest and "flowRole: billing-jobs-flow-role" in manifest
    assert "Created billing-jobs (seed template)" in result.stdout
    assert "deploy validate && deploy up && pytest -q" in result.stdout
    requirements = (tmp_path / "billing_jobs" / "requirements-dev.txt").read_text()
    from deployer import __version__

    assert f"cloudflow-deployer=={__version__}" in requirements


def test_init_never_overwrites_and_writes_nothing_when_a_file_is_in_the_way(tmp_path):
    (tmp_path / "s.yaml").write_text("mine\n")
    result = _deploy("-C", str(tmp_path), "init", code=1)
    assert "already has s.yaml" in result.stderr and "Hint: choose a new or empty" in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["s.yaml"]
    assert (tmp_path / "s.yaml").read_text() == "mine\n"


def test_init_refuses_an_invalid_name(tmp_path):
    result = _deploy("-C", str(tmp_path), "init", "x", "--name", "Bad_Name", code=3)
    assert "invalid project name 'Bad_Name'" in result.stderr
    assert not (tmp_path / "x").exists()


def test_the_workflow_deploys_with_oidc_after_testing_on_the_emulator():
    text = (TEMPLATES / "common" / "dot-github" / "workflows" / "deploy.yml").read_text()
    assert (ROOT / "examples" / "github-actions.yml").read_text() == text  # the same workflow
    workflow = YAML(typ="safe").load(text)
    test_job, deploy_job = workflow["jobs"]["test"], workflow["jobs"]["deploy"]
    test_steps = [s.get("run", "") for s in test_job["steps"]]
    assert "deploy validate" in test_steps and "pytest -q" in test_steps
    assert deploy_job["needs"] == "test"
    assert deploy_job["permissions"]["id-token"] == "write"
    oidc = next(s for s in deploy_job["steps"]
                if s.get("uses", "").startswith("aliyun/configure-aliyun-credentials-action@"))
    assert set(oidc["with"]) >= {"role-to-assume", "oidc-provider-arn"}
    runs = " ".join(s.get("run", "") for s in deploy_job["steps"])
    assert "deploy up --target aliyun" in runs and "--output json" in runs


def test_the_seed_template_is_the_repository_app():
    seed = TEMPLATES / "seed"
    for name in ("functions/start_job/index.py", "functions/get_job_status/index.py",
                 "templates/flow.yaml.j2"):
        assert (seed / name).read_text() == (ROOT / name).read_text(), name
    own = (ROOT / "s.yaml").read_text().replace("job-poller", "__PROJECT_NAME__")
    assert (seed / "s.yaml").read_text() == own


def test_init_help_examples_name_real_templates():
    result = _deploy("init", "--help")
    assert "deploy init my-blank --template blank" in result.stdout
    assert "[default: seed]" in result.stdout


def test_the_seed_template_ships_the_repositorys_own_handlers() -> None:
    """The package carries a copy of functions/ (it must ship inside the wheel): the copy and
    the repository's handlers stay the same file for file."""
    ours = ROOT / "functions"
    shipped = TEMPLATES / "seed" / "functions"
    names = sorted(p.relative_to(ours) for p in ours.rglob("*.py"))
    assert names == sorted(p.relative_to(shipped) for p in shipped.rglob("*.py"))
    for name in names:
        assert (shipped / name).read_bytes() == (ours / name).read_bytes(), name
