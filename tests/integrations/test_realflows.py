"""Every SpecVersion v1 flow of the shared real-flow corpus (``shared/realflows``: the files
not named ``legacy-*``) runs to an end on the emulator, with the mocked responses written
here for its tasks (FC functions, HTTP:Request and DashScope calls): created and started
through the official SDK in ``mock_cloud(mocks=...)``. The flows are read where the corpus
lives; the tests skip, saying so, when it is not there."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alibabacloud_fnf20190315 import models as fnf_models
from ruamel.yaml import YAML

from deployer.testing import LocalCloud, mock_cloud

REPO = Path(__file__).resolve().parents[2]


def _corpus() -> Path | None:
    candidates = [os.environ.get("DEPLOYER_REALFLOWS", ""), str(REPO.parent / "shared" /
                                                                "realflows"),
                  "/work/shared/realflows"]
    return next((Path(c) for c in candidates if c and (Path(c) / "manifest.yaml").exists()),
                None)


CORPUS = _corpus()
pytestmark = pytest.mark.skipif(CORPUS is None, reason=(
    "the real-flow corpus (shared/realflows/manifest.yaml) is not beside the checkout; set "
    "DEPLOYER_REALFLOWS to its directory"))

EMBEDDING = {"Header": {"Content-Type": "application/json"}, "Code": 200,
             "Body": json.dumps({"Data": {"text_embedding": [[0.12, 0.34]]}})}

# file stem -> (execution input, test case: state -> list of Return values, the expected
# final status)
CASES: dict[str, tuple[dict[str, Any], dict[str, list[Any]], str]] = {
    "devsapp-start-flow-rag-offline": (
        {"url": "oss://docs/manual.pdf"},
        {"TextSplit": [{"Body": [{"document": "part one", "source": "p1"},
                                 {"document": "part two", "source": "p2"}]}],
         "Embedding": [EMBEDDING, EMBEDDING],
         "InsertDB(PGVector)": [{"Body": {"inserted": 1}}, {"Body": {"inserted": 1}}]},
        "Succeeded"),
    "devsapp-start-flow-rag-online": (
        {"query": "what is CloudFlow?"},
        {"Embedding": [EMBEDDING],
         "QueryDB(PGVector)": [{"Body": [{"document": "CloudFlow orchestrates"}]}],
         "BuildPrompt": [{"Body": "Answer with the context"}],
         "LLM": [{"Header": {}, "Code": 200, "Body": "CloudFlow orchestrates services."}]},
        "Succeeded"),
    "doc-fail-choice": ({"status": "true"}, {}, "Succeeded"),
    "doc-hello-world": ({}, {}, "Succeeded"),
    "doc-pass": ({}, {}, "Succeeded"),
    "doc-succeed-in-parallel": ({}, {}, "Succeeded"),
    "doc-wait-dynamic": ({"timeout": 30}, {}, "Succeeded"),
    "doc-wait-fixed": ({}, {}, "Succeeded"),
    "s24-video-edit-multi": (
        {"videoUrl": "oss://v/a.mp4", "vlPrompt": "describe", "llmPrompt": "narrate",
         "videoMaterialUrls": ["oss://v/b.mp4"]},
        {"视频理解": [{"Body": {"videoContent": "a cat"}}],
         "一键成片": [{"Body": {"outputUrl": "oss://v/out.mp4"}}]},
        "Succeeded"),
    "s24-video-edit-single": (
        {"videoUrl": "oss://v/a.mp4", "vlPrompt": "describe", "llmPrompt": "narrate"},
        {"视频理解": [{"Body": {"videoContent": "a dog"}}],
         "一键成片": [{"Body": {"outputUrl": "oss://v/out.mp4"}}]},
        "Succeeded"),
    "s24-video-learning-parallel": (
        {"sourceVideoUrl": "s", "sourceVlPrompt": "d", "sourceLlmPrompt": "n",
         "targetVideoUrl": "t", "targetVlPrompt": "d", "targetLlmPrompt": "n",
         "videoMaterialUrls": ["m"]},
        {"源视频理解": [{"Body": {"videoContent": "source"}}],
         "目标视频理解": [{"Body": {"videoContent": "target"}}],
         "Prompt拼接": [{"Body": {"messages": [{"role": "user", "content": "mix"}]}}],
         "生成新视频口播": [{"output": {"choices": [{"message": {"content": "speech"}}]}}],
         "一键成片": [{"Body": {"outputUrl": "oss://v/new.mp4"}}]},
        "Succeeded"),
}


def _entries() -> list[dict[str, Any]]:
    if CORPUS is None:
        return []
    manifest = YAML(typ="safe").load((CORPUS / "manifest.yaml").read_text(encoding="utf-8"))
    return [e for e in manifest["flows"] if e.get("format") == "cloudflow-v1"]


def _definition(stem: str) -> tuple[str, str]:
    """The flow's definition (its placeholders substituted as the manifest says) and name."""
    assert CORPUS is not None
    entry = next(e for e in _entries() if Path(e["file"]).stem == stem)
    text = (CORPUS / entry["file"]).read_text(encoding="utf-8")
    for old, new in (entry.get("substitutions") or {}).items():
        text = text.replace(old, new)
    return text, str(YAML(typ="safe").load(text)["Name"])


def _mocks() -> dict[str, Any]:
    """One mock document in the LocalStack layout: a test case named after each file, under
    its flow's name (several files share a flow name)."""
    machines: dict[str, Any] = {}
    responses: dict[str, Any] = {}
    for stem, (_, states, _) in CASES.items():
        mapping = {}
        for state, returns in states.items():
            response = f"{stem}/{state}"
            responses[response] = {str(i): {"Return": value} for i, value in enumerate(returns)}
            mapping[state] = response
        flow = _definition(stem)[1]
        machines.setdefault(flow, {"TestCases": {}})["TestCases"][stem] = mapping
    return {"StateMachines": machines, "MockedResponses": responses}


@pytest.fixture(scope="module")
def real_cloud() -> Iterator[LocalCloud]:
    with mock_cloud(mocks=_mocks() if CORPUS is not None else None) as cloud:
        yield cloud


def test_the_corpus_has_the_eleven_v1_flows() -> None:
    stems = {Path(e["file"]).stem for e in _entries()}
    assert stems == set(CASES)


@pytest.mark.parametrize("stem", sorted(CASES))
def test_a_real_flow_runs_to_its_end(real_cloud: LocalCloud, stem: str) -> None:
    text, name = _definition(stem)
    real_cloud.reset()  # several files share a flow name; the mocks stay loaded
    client = real_cloud.fnf_client()
    client.create_flow(fnf_models.CreateFlowRequest(name=name, definition=text,
                                                    description="", type="FDL"))
    payload, _, expected = CASES[stem]
    client.start_execution(fnf_models.StartExecutionRequest(
        flow_name=name, execution_name=f"run#{stem}", input=json.dumps(payload)))
    done = real_cloud.wait_for_execution(name, "run")
    assert done["Status"] == expected, _failure(client, name)


def _failure(client: Any, flow: str) -> str:
    events = client.get_execution_history(fnf_models.GetExecutionHistoryRequest(
        flow_name=flow, execution_name="run")).body.events
    return "\n".join(f"{e.type} {e.step_name} {e.event_detail}" for e in events[-6:])
