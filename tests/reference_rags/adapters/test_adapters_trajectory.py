"""The adapters' trajectory return shape: a python callable, an http endpoint and a precomputed file (JSONL and
CSV) return ``"trajectory"`` (a list of step objects) and the stored output carries it as Steps; a wrong step
is one clear error naming the system, the step's position and the field."""

from __future__ import annotations

import asyncio
import json
import textwrap

import pytest

import ragassay
from ragassay import RAGOutput, Step, TokenUsage
from ragassay.components import ComponentContext
from ragassay.models import Sample
from ragassay.reference_rags.adapters.http_adapter import HttpRAG
from ragassay.reference_rags.adapters.outputs import check_size, to_output

from conftest import write_project
from servers.base import JSONServer, Reply
from trace_runs import read

RETURNED = [
    {"kind": "agent", "id": "planner", "name": "planner"},
    {"kind": "retrieval", "parent_id": "planner", "query": "alpha reactor", "context_ids": ["corpus/alpha.md"],
     "document_ids": ["corpus/alpha.md"], "scores": [0.9]},
    {"kind": "tool_call", "parent_id": "planner", "name": "lookup", "call_id": "c1", "arguments": {"year": 1999},
     "error": "timeout"},
    {"kind": "model_call", "name": "m-1", "usage": {"input_tokens": 30, "output_tokens": 4, "calls": 1},
     "latency_s": 0.5},
    {"kind": "answer", "output": "Ada Lovelace Labs"},
]  # fmt: skip
EXPECTED = [
    Step(id="planner", kind="agent", name="planner"),
    Step(id="s2", kind="retrieval", parent_id="planner", query="alpha reactor", context_ids=["corpus/alpha.md"],
         document_ids=["corpus/alpha.md"], scores=[0.9]),
    Step(id="s3", kind="tool_call", parent_id="planner", name="lookup", call_id="c1", arguments={"year": 1999},
         error="timeout"),
    Step(id="s4", kind="model_call", name="m-1", usage=TokenUsage(input_tokens=30, output_tokens=4, calls=1),
         latency_s=0.5),
    Step(id="s5", kind="answer", output="Ada Lovelace Labs"),
]  # fmt: skip


def test_a_returned_dict_carries_its_trajectory_with_ids_by_position():
    output = to_output({"answer": "Ada Lovelace Labs", "trajectory": RETURNED}, "user_rag:answer")
    assert output.trajectory == EXPECTED
    assert to_output({"answer": "x", "trajectory": None}, "w").trajectory == []


@pytest.mark.parametrize(
    ("trajectory", "message"),
    [
        ("steps", "user_rag:answer: 'trajectory' must be a list of step objects, not str"),
        ([{"kind": "plan"}], "user_rag:answer: trajectory[0].kind: Input should be"),
        ([{"kind": "tool_call", "arguments": [1]}], "trajectory[0].arguments: Input should be a valid dictionary"),
        ([{"kind": "tool_call", "colour": "red"}], "trajectory[0].colour: Extra inputs are not permitted"),
        ([{"kind": "answer", "id": "a"}, {"kind": "answer", "id": "a"}], "trajectory[1] repeats the step id 'a'"),
        ([{"kind": "tool_call", "parent_id": "x"}], "trajectory[0] ('s1') names parent_id 'x', which is no earlier"),
        ([{"kind": "model_call", "id": "m"}, {"kind": "tool_call", "parent_id": "m"}], "no earlier step of kind"),
        ([3], "trajectory[0] must be an object, not int"),
    ],
)
def test_a_wrong_step_is_one_clear_error(trajectory, message):
    with pytest.raises(ValueError) as caught:
        to_output({"answer": "x", "trajectory": trajectory}, "user_rag:answer")
    assert message in str(caught.value)


def test_a_returned_ragoutput_has_its_links_checked_and_the_trajectory_counts_toward_max_bytes():
    bad = RAGOutput(answer="x", trajectory=[Step(id="a", kind="tool_call", parent_id="nowhere")])
    with pytest.raises(ValueError, match="names parent_id 'nowhere'"):
        to_output(bad, "user_rag:answer")
    big = RAGOutput(answer="x", trajectory=[Step(id="a", kind="tool_call", result="y" * 5000)])
    assert check_size(big, 10_000, "w") is big
    with pytest.raises(ValueError, match=r"answer, contexts, ids, trace, trajectory\), over max_bytes = 4,000"):
        check_size(big, 4_000, "w")


USER_RAG = f"""
STEPS = {RETURNED!r}

def answer(question):
    return {{"answer": "Ada Lovelace Labs", "contexts": ["built in 1999"], "context_ids": ["corpus/alpha.md"],
            "trajectory": STEPS}}
"""
PYTHON_CONFIG = """
[dataset]
options = { path = "qa.jsonl" }
[systems.mine]
rag = "python"
options = { callable = "trajectory_agent_rag:answer", path = ["src"] }
[evaluation]
metrics = ["exact_match"]
"""


def test_a_python_callable_trajectory_is_stored_with_the_output(tmp_path):
    write_project(tmp_path, PYTHON_CONFIG, docs={})
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "trajectory_agent_rag.py").write_text(textwrap.dedent(USER_RAG))
    run = read(tmp_path, ragassay.run(tmp_path).run_id, payloads=True)
    assert run.payload("mine", "q1").trajectory == EXPECTED
    assert list(run.values("mine", "exact_match")) == [1.0, 0.0, 0.0]


def test_an_http_endpoint_trajectory_is_read_at_its_path():
    def handler(request):
        return Reply(200, {"result": {"text": "Ada Lovelace Labs", "steps": RETURNED}})

    with JSONServer({("POST", "/rag"): handler}) as server:
        rag = HttpRAG(
            HttpRAG.Options(url=server.url + "/rag", response={"answer": "/result/text", "trajectory": "result.steps"}),
            context=ComponentContext(),
        )
        unmapped = HttpRAG(HttpRAG.Options(url=server.url + "/rag", response={"answer": "/result/text"}))

        async def both():
            try:
                return await rag.answer(Sample(question_id="q", question="?")), await unmapped.answer(
                    Sample(question_id="q", question="?")
                )
            finally:
                await rag.aclose()
                await unmapped.aclose()

        mapped, plain = asyncio.run(both())
    assert mapped.trajectory == EXPECTED
    assert plain.trajectory == []  # the path is opt-in: an endpoint's own 'steps' field is not read unasked


PRECOMPUTED_CONFIG = """
[dataset]
options = { path = "qa.jsonl" }
[systems.offline]
rag = "precomputed"
options = { path = "%s" }
[evaluation]
metrics = ["exact_match"]
"""


def test_precomputed_rows_carry_trajectories_in_jsonl_and_csv(tmp_path):
    jsonl, csv = tmp_path / "j", tmp_path / "c"
    jsonl.mkdir(), csv.mkdir()
    row = {"question_id": "q1", "answer": "Ada Lovelace Labs", "trajectory": RETURNED}
    (jsonl / "outputs.jsonl").write_text(json.dumps(row) + "\n")
    write_project(jsonl, PRECOMPUTED_CONFIG % "outputs.jsonl", docs={})
    cell = json.dumps(RETURNED).replace('"', '""')
    (csv / "outputs.csv").write_text(f'question_id,answer,trajectory\nq1,Ada Lovelace Labs,"{cell}"\nq2,x,\n')
    write_project(csv, PRECOMPUTED_CONFIG % "outputs.csv", docs={})
    for folder in (jsonl, csv):
        run = read(folder, ragassay.run(folder).run_id, payloads=True)
        assert run.payload("offline", "q1").trajectory == EXPECTED, folder.name
    assert run.payload("offline", "q2").trajectory == []


def test_a_csv_trajectory_cell_that_is_not_json_names_the_line(tmp_path):
    (tmp_path / "outputs.csv").write_text("question_id,answer,trajectory\nq1,x,[not json\n")
    write_project(tmp_path, PRECOMPUTED_CONFIG % "outputs.csv", docs={})
    with pytest.raises(ragassay.DatasetError, match=r"outputs.csv, line 2: 'trajectory' is not a JSON array"):
        ragassay.run(tmp_path)
