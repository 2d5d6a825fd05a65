"""The recorder and the ``--real-cloud`` mode, tested with ``mock_cloud()`` standing in for
Alibaba Cloud (the same credentials chain, the same regional endpoints, routed to 127.0.0.1):
what a recording run writes, that it replays, that it cleans up after a failure, and when the
mode refuses to run."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from deployer.emulator.clock import SystemClock
from deployer.testing import mock_cloud
from tests.parity.recording import PARITY_DIR, RECORDINGS_DIR
from tests.parity.runner import record, replay, run
from tests.parity.schema import SharedRules, load_recording, write_recording
from tests.parity.targets import ChainTarget, LocalTarget, skip_reason

ROOT = PARITY_DIR.parent.parent
# one of each kind: short saved values and invocations (FC), a list holding other
# resources (ListFlows), a generated name saved for later steps, redacted identity fields
RECORDED = ["fc/versions-aliases.yaml", "cloudflow/flow-lifecycle.yaml",
            "cloudflow/executions.yaml", "sts/caller-identity.yaml"]


@pytest.fixture(scope="module")
def emulated_cloud() -> Iterator[ChainTarget]:
    """What ``DEPLOYER_PARITY_TARGET=emulator`` gives ``--real-cloud``."""
    with mock_cloud(clock=SystemClock()):
        yield ChainTarget("cn-hangzhou", against="emulator")


@pytest.mark.parametrize("name", RECORDED)
def test_a_recording_run_writes_a_file_that_replays(
        name: str, emulated_cloud: ChainTarget, parity_emulator: LocalTarget,
        shared_rules: SharedRules, tmp_path: Path) -> None:
    documented = load_recording(RECORDINGS_DIR / name)
    out = record(documented, emulated_cloud, shared_rules)
    assert out.problems == [] and out.leftovers == []
    path = tmp_path / name
    write_recording(out.recording, path)
    text = path.read_text()
    rec = load_recording(path)
    assert rec.source == "recorded" and rec.keys == "exact"
    assert rec.provenance["against"] == "emulator" and rec.provenance["region"] == "cn-hangzhou"
    assert "alibabacloud-fc20230330" in rec.provenance["sdk"]
    assert not any(r.scope == "documented" for s in rec.steps for r in s.rules)
    assert emulated_cloud.account_id not in text, "account ids are written as ${account_id}"
    for var, base in rec.names.items():
        assert "${" + var + "}" in text
        assert f"{base}-" not in text, "the run's unique names are written as variables"
    assert [s.request for s in rec.steps] == [s.request for s in documented.steps]
    assert replay(rec, parity_emulator, shared_rules) == []


def test_the_recording_keeps_only_the_scenarios_own_flows(
        emulated_cloud: ChainTarget, shared_rules: SharedRules) -> None:
    rec = load_recording(RECORDINGS_DIR / "cloudflow/flow-lifecycle.yaml")
    foreign = "someone-elses-flow"
    client = emulated_cloud.client("cloudflow")
    from alibabacloud_fnf20190315 import models as fnf

    client.create_flow(fnf.CreateFlowRequest(
        name=foreign, type="FDL", description="", definition=(
            f"Type: StateMachine\nSpecVersion: v1\nName: {foreign}\nStartAt: p\n"
            "States:\n  - Type: Pass\n    Name: p\n    End: true\n")))
    try:
        out = record(rec, emulated_cloud, shared_rules)
    finally:
        client.delete_flow(fnf.DeleteFlowRequest(name=foreign))
    listed = next(s for s in out.recording.steps if s.name == "list").response["body"]
    assert [f["Name"] for f in listed["Flows"]] == ["${flow}"]


def test_replay_names_the_step_and_field_that_differ(
        parity_emulator: LocalTarget, shared_rules: SharedRules, tmp_path: Path) -> None:
    text = (RECORDINGS_DIR / "cloudflow/flow-lifecycle.yaml").read_text()
    path = tmp_path / "changed.yaml"
    path.write_text(text.replace("Description: updated by the parity scenario\n    response",
                                 "Description: updated by the parity scenario\n    response", 1)
                    .replace("        Description: updated by the parity scenario\n        Type",
                             "        Description: something else\n        Type"))
    problems = replay(load_recording(path), parity_emulator, shared_rules)
    assert problems == ["update: body.Description: got 'updated by the parity scenario', "
                        "recorded 'something else'"]


SCENARIO = """format: 1
scenario: cleanup-check
product: fc
source: documented
documented: {note: a scenario that breaks half-way, references: [test_recorder.py]}
names: {fn: parity-cleanup}
files: {zip: %s}
steps:
  - name: create
    request:
      action: CreateFunction
      method: POST
      path: /2023-03-30/functions
      body: {functionName: '${fn}', runtime: python3.10, handler: index.handler,
             code: {zipFile: '${zip}'}}
    response: {status: 200}
  - name: uses-a-value-nobody-saved
    request: {action: GetFunction, method: GET, path: '/2023-03-30/functions/${fn}',
              query: {qualifier: '${version}'}}
    response: {status: 200}
cleanup:
  - {action: DeleteFunction, method: DELETE, path: '/2023-03-30/functions/${fn}'}
"""


def _broken_scenario(tmp_path: Path) -> Path:
    zip_b64 = load_recording(RECORDINGS_DIR / "fc/errors.yaml").files["raise_zip"]
    path = tmp_path / "broken.yaml"
    path.write_text(SCENARIO % zip_b64)
    return path


def test_cleanup_runs_when_a_scenario_breaks(parity_emulator: LocalTarget,
                                             tmp_path: Path) -> None:
    rec = load_recording(_broken_scenario(tmp_path))
    result = run(rec, parity_emulator, suffix="broken1")
    assert result.error is not None and "uses ${version}, which has no value" in result.error
    assert [a.status for a in result.answers] == [200] and result.leftovers == []
    assert _functions(parity_emulator, "parity-cleanup-broken1") == []


def test_a_cleanup_that_fails_is_reported(parity_emulator: LocalTarget, tmp_path: Path) -> None:
    rec = load_recording(_broken_scenario(tmp_path))
    with parity_emulator.cloud.faults.inject("fc", action="DeleteFunction",
                                             error="ResourceThrottled", times=1):
        result = run(rec, parity_emulator, suffix="broken2")
    try:
        assert len(result.leftovers) == 1
        assert "DeleteFunction /2023-03-30/functions/parity-cleanup-broken2" in \
            result.leftovers[0] and "ResourceThrottled" in result.leftovers[0]
    finally:
        parity_emulator.client("fc").delete_function("parity-cleanup-broken2")
    assert _functions(parity_emulator, "parity-cleanup-broken2") == []


def _functions(target: LocalTarget, prefix: str) -> list[str]:
    from alibabacloud_fc20230330 import models as fc

    answer = target.client("fc").list_functions(fc.ListFunctionsRequest(prefix=prefix))
    return [f.function_name for f in answer.body.functions]


# --- when the mode runs ---------------------------------------------------------------------

@pytest.mark.parametrize(("enabled", "env", "expected"), [
    (False, {}, "needs --real-cloud"),
    (True, {"CI": "true"}, "CI is set"),
    (True, {"CI": "1", "DEPLOYER_PARITY_TARGET": "cloud"}, "CI is set"),
    (True, {"DEPLOYER_PARITY_TARGET": "staging"}, "must be 'cloud' or 'emulator'"),
    (True, {"CI": "true", "DEPLOYER_PARITY_TARGET": "emulator"}, None),
])
def test_skip_reasons(enabled: bool, env: dict[str, str], expected: str | None) -> None:
    reason = skip_reason(enabled, env)
    assert reason is None if expected is None else expected in (reason or "")


def _inner_pytest(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """``pytest tests/parity/test_real_cloud.py --real-cloud ARGS``, in this process."""
    return pytester.runpytest_inprocess(
        str(PARITY_DIR / "test_real_cloud.py"), "--rootdir", str(ROOT), "-c",
        str(ROOT / "pyproject.toml"), "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "-rs",
        "--real-cloud", *args)


def test_the_mode_is_skipped_in_ci_even_with_credentials(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("DEPLOYER_PARITY_TARGET", raising=False)
    done = _inner_pytest(pytester)
    done.assert_outcomes(skipped=9)
    assert "CI is set: the real cloud is never used in CI" in done.stdout.str()


def test_recordings_of_the_emulator_never_replace_the_committed_ones(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DEPLOYER_PARITY_TARGET", "emulator")
    done = _inner_pytest(pytester, "-k", "caller")
    done.assert_outcomes(errors=1)
    assert "give --parity-record-dir outside tests/parity/recordings" in done.stdout.str()
    out = tmp_path / "out"
    done = _inner_pytest(pytester, "-k", "caller", "--parity-record-dir", str(out))
    done.assert_outcomes(passed=1)
    written = load_recording(out / "sts" / "caller-identity.yaml")
    assert written.source == "recorded" and written.provenance["against"] == "emulator"


def test_no_credentials_is_a_reason_to_skip(tmp_path: Path) -> None:
    """In a clean process of its own: the credentials library reads its environment when
    it is imported, and would find the profile files of whoever runs the suite."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ALIBABA_CLOUD_", "DEPLOYER_PARITY")) and k != "CI"}
    env.update(HOME=str(tmp_path), ALIBABA_CLOUD_ECS_METADATA_DISABLED="true")
    probe = ("from tests.parity.targets import skip_reason; import os; "
             "print(skip_reason(True, os.environ))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no Alibaba Cloud credentials configured ("), done.stdout


def test_credentials_of_the_chain_are_enough(emulated_cloud: ChainTarget) -> None:
    from tests.parity.targets import credentials_problem

    assert credentials_problem() is None  # mock_cloud() put its keys in the environment
