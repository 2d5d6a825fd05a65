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
    assert "functionName: billing-jobs-start-job" in manifest  # named after the project
    assert "name: billing-jobs-flow" in manifest
    assert "Created billing-jobs (seed template)" in result.stdout
    assert "deploy validate && deploy up && pytest -q" in result.stdout
    requirements = (tmp_path / "billing_jobs" / "requirements-dev.txt").read_text()
    from deployer import __version__

    # this checkout is installed from a local directory: no index serves it, so the project
    # gets a wheel of it (toolkit_source)
    wheel = f"wheels/cloudflow_deployer-{__version__}-py3-none-any.whl"
    assert f"./{wheel}\n" in requirements and "pytest>=8" in requirements
    assert (tmp_path / "billing_jobs" / wheel).is_file()


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
    for scenario, named in (("StartJob", "__PROJECT_NAME__-start-job"),
                            ("GetJobStatus", "__PROJECT_NAME__-get-job-status"),
                            ("name: MyWorkFlow", "name: __PROJECT_NAME__-flow")):
        own = own.replace(scenario, named)  # the seed names its resources after the project
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


def test_the_toolkit_source_follows_how_it_was_installed(monkeypatch) -> None:
    from deployer import __version__
    from deployer.core import toolkit_source as source

    def use(info: dict | None, checkout: bool = False) -> source.ToolkitSource:
        monkeypatch.setattr(source, "_direct_url", lambda: info)
        monkeypatch.setattr(source, "_from_checkout", lambda: checkout)
        return source.toolkit_source()

    assert use(None).requirement == f"cloudflow-deployer=={__version__}"  # an index install
    vcs = {"url": "https://example.org/cfd.git", "vcs_info": {"vcs": "git",
                                                             "commit_id": "abc123"}}
    assert use(vcs).requirement == "cloudflow-deployer @ git+https://example.org/cfd.git@abc123"
    for local in (use({"url": "file:///src", "dir_info": {"editable": True}}),
                  use(None, checkout=True)):
        assert local.wheel_name and local.requirement == f"./wheels/{local.wheel_name}"


def _isolated_environment(tmp_path: Path) -> Path:
    """A fresh virtual environment whose site-packages sees this one's packages except the
    deployer and pytest (which the workflow's `pip install` must install itself), so the
    steps run without downloading the SDKs again."""
    import site
    import venv

    env_dir = tmp_path / "ci-venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    shared = tmp_path / "shared-site"
    shared.mkdir()
    ours = Path(next(p for p in site.getsitepackages() if p.endswith("site-packages")))
    for entry in ours.iterdir():
        name = entry.name.lower()
        if name.startswith(("cloudflow_deployer", "__editable__", "pytest", "_pytest",
                            "py.py", "distutils-precedence")) or name.endswith(".pth"):
            continue
        (shared / entry.name).symlink_to(entry)
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    target = env_dir / "lib" / version / "site-packages"
    (target / "shared.pth").write_text(f"{shared}\n")
    return env_dir


@pytest.mark.slow
@pytest.mark.timeout(600)  # pip installs two wheels, then the generated tests run
def test_the_generated_workflow_test_job_runs_locally(tmp_path):
    """The workflow's test job, step by step, as CI runs it (here against the in-process
    emulator its tests use): `pip install -r requirements-dev.txt` must install the deployer
    from the source requirements-dev.txt names, and its tests' own dependencies."""
    project = tmp_path / "ci-app"
    _deploy("init", str(project))
    workflow = YAML(typ="safe").load((project / ".github" / "workflows" / "deploy.yml").read_text())
    steps = [s["run"] for s in workflow["jobs"]["test"]["steps"] if "run" in s]
    assert steps[0] == "pip install -r requirements-dev.txt"
    env_dir = _isolated_environment(tmp_path)
    path = os.pathsep.join([str(env_dir / "bin"), *(p for p in os.environ["PATH"].split(
        os.pathsep) if not p.startswith(str(Path(sys.executable).parent)))])
    env = {**os.environ, **workflow["jobs"]["test"].get("env", {}), "PATH": path,
           "PIP_NO_DEPS": "1", "VIRTUAL_ENV": str(env_dir)}
    env.pop("PYTHONPATH", None)
    # the same pip command, run by that environment's python (pip comes from the shared
    # packages, so the environment has no `pip` script of its own)
    steps[0] = f"{env_dir / 'bin' / 'python'} -m pip install -q -r requirements-dev.txt"
    for step in steps:
        done = subprocess.run(step, shell=True, cwd=project, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, (step, done.stdout[-3000:], done.stderr[-3000:])
    installed = subprocess.run([str(env_dir / "bin" / "python"), "-c",
                                "import deployer; print(deployer.__file__)"], env=env,
                               cwd=project, capture_output=True, text=True, check=True).stdout
    assert str(env_dir) in installed  # the wheel's deployer, not this checkout's
