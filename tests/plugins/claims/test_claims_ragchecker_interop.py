"""RAGChecker's own code reads what ragassay writes, and ragassay replays what RAGChecker writes.

RAGChecker's loader (``RAGResults.from_json``) and ``RAGChecker.evaluate`` with its computation are vendored in
``tests/vendor/ragchecker_0_1_9/`` (Apache-2.0, version 0.1.9, commit 6091f08; its README says what was trimmed: the model
calls). The claims and checks are RAGChecker's example output (tests/data/ragchecker); a partial output (some
metrics only) is made by RAGChecker's own ``evaluate`` from the checks those metrics need.
"""

from __future__ import annotations

import json
import random
import shutil
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragassay
from ragassay import DatasetError
from ragassay.cli.main import cli
from ragassay.plugins.claims import formulas as F
from ragassay.plugins.claims.export import export_run
from ragassay.plugins.claims.model import LABELS, ClaimChecks

pytest.importorskip("dataclasses_json", reason="RAGChecker's loader needs dataclasses-json (pip install -e .[test])")

DATA = Path(__file__).parents[2] / "data" / "ragchecker"
VENDORED = Path(__file__).resolve().parents[2] / "vendor" / "ragchecker_0_1_9"
RETRIEVER_ONLY = ("query_id", "query", "gt_answer", "response", "retrieved_context", "gt_answer_claims")


@pytest.fixture
def ragchecker(monkeypatch):
    """RAGChecker's package (the vendored computation, container and evaluate)."""
    monkeypatch.syspath_prepend(str(VENDORED))
    import ragchecker

    return ragchecker


def _project(tmp_path: Path, outputs: str, metrics: str, *, dataset: str | None = None) -> Path:
    (tmp_path / "ragassay.toml").write_text(
        textwrap.dedent(
            f"""
            [project]
            name = "interop"
            [dataset]
            source = "ragchecker"
            options = {{ path = "{dataset or outputs}" }}
            [systems.replayed]
            rag = "ragchecker"
            options = {{ path = "{outputs}" }}
            [evaluation]
            metrics = [{metrics}]
            """
        )
    )
    return tmp_path


ALL_RC = ", ".join(
    f'"rc_{m}"'
    for m in ("precision", "recall", "f1", "claim_recall", "context_precision", "context_utilization", "faithfulness")
)


def test_ragcheckers_loader_and_evaluate_read_the_export(tmp_path, ragchecker):
    """Item 14: the export's overall block is under RAGChecker's keys; RAGChecker's evaluate on the exported file
    gives that block, and recomputes every per-result value from the exported checks exactly."""
    shutil.copy(DATA / "checking_outputs.json", tmp_path / "out.json")
    run = ragassay.run(_project(tmp_path, "out.json", ALL_RC))
    assert run.failed == 0
    document, notes = export_run(run.data(payloads=True))
    assert notes == [] and list(document["metrics"]) == ["overall_metrics", "retriever_metrics", "generator_metrics"]

    loaded = ragchecker.RAGResults.from_json(json.dumps(document))
    assert ragchecker.RAGChecker().evaluate(loaded) == document["metrics"]

    stripped = json.loads(json.dumps(document))
    for result in stripped["results"]:
        result["metrics"] = {}
    recomputed = ragchecker.RAGResults.from_json(json.dumps(stripped))
    assert ragchecker.RAGChecker().evaluate(recomputed) == document["metrics"]
    for theirs, ours in zip(recomputed.results, document["results"]):
        assert {k: float(v) for k, v in theirs.metrics.items()} == ours["metrics"]  # ==, not approx


def _retriever_only_output(ragchecker, path: Path) -> dict:
    """RAGChecker's output for its retriever metrics only: its evaluate run on the example's results with the
    claims and checks those metrics need (gt_answer_claims, retrieved2answer) and nothing else."""
    example = json.loads((DATA / "checking_outputs.json").read_text())
    for result in example["results"]:
        for key in list(result):
            if key not in RETRIEVER_ONLY + ("retrieved2answer",):
                del result[key]
    results = ragchecker.RAGResults.from_dict({"results": example["results"]})
    block = ragchecker.RAGChecker().evaluate(results, metrics="retriever_metrics")
    path.write_text(results.to_json(indent=2))
    written = json.loads(path.read_text())
    assert written["results"][0]["response_claims"] is None and block["retriever_metrics"]
    return written


def test_a_partial_ragchecker_output_replays_and_exports(tmp_path, ragchecker):
    """Item 15: an output computed for the retriever metrics only (response claims null) replays: the metrics it
    holds checks for equal RAGChecker's per-result values, the others are unscored saying which list is missing;
    the export of the replay goes back through RAGChecker's evaluate for those metrics."""
    written = _retriever_only_output(ragchecker, tmp_path / "partial.json")
    run = ragassay.run(_project(tmp_path, "partial.json", '"rc_claim_recall", "rc_context_precision", "rc_precision"'))
    assert run.failed == 0
    data = run.data()
    scores = {(r.question_id, r.label): r for r in data.records(kind="metric")}
    for result in written["results"]:
        qid = result["query_id"]
        for name in ("claim_recall", "context_precision"):
            assert scores[qid, f"rc_{name}"].value == result["metrics"][name]
        precision = scores[qid, "rc_precision"]
        assert precision.value is None and "answer2response" in precision.unscored_reason

    document, notes = export_run(run.data(payloads=True))
    assert notes == [] and document["results"][0]["response_claims"] is None
    loaded = ragchecker.RAGResults.from_json(json.dumps(document))
    block = ragchecker.RAGChecker().evaluate(loaded, metrics="retriever_metrics")
    assert block["retriever_metrics"] == written["metrics"]["retriever_metrics"]


def test_repeated_query_ids_are_read_as_ragchecker_reads_them(tmp_path):
    """Item 15: RAGChecker accepts a query_id twice; the replay reads both results, the later one as '0#2',
    says so, and replays each with its own response."""
    example = json.loads((DATA / "checking_outputs.json").read_text())
    twice = json.loads(json.dumps(example["results"][1]))
    twice["query_id"] = "0"
    example["results"].append(twice)
    (tmp_path / "dup.json").write_text(json.dumps(example))
    run = ragassay.run(_project(tmp_path, "dup.json", '"exact_match"'))
    assert run.failed == 0
    data = run.data(payloads=True)
    assert data.question_ids == ["0", "1", "0#2"]
    assert data.payload("replayed", "0#2").answer == twice["response"]
    assert data.payload("replayed", "0").answer == example["results"][0]["response"]
    assert any("query_id '0' occurs 2 times" in w and "'0#2'" in w for w in run.warnings)


def test_a_file_that_fails_to_load_leaves_a_failed_run_not_an_interrupted_one(tmp_path):
    """Item 15: a replayed file that does not validate stops the run with exit 2; the run it created is
    recorded as failed with the error, and nothing says "partial" or "run again to resume"."""
    example = json.loads((DATA / "checking_outputs.json").read_text())
    example["results"][1]["retrieved2answer"][0] = ["Neutral"]
    (tmp_path / "bad.json").write_text(json.dumps(example))
    shutil.copy(DATA / "checking_inputs.json", tmp_path / "inputs.json")
    project = _project(tmp_path, "bad.json", '"exact_match"', dataset="inputs.json")
    with pytest.raises(DatasetError, match=r"bad.json, results\[1\]"):
        ragassay.run(project)

    result = CliRunner().invoke(cli, ["run", str(project)])
    assert result.exit_code == 2 and "partial" not in result.output and "resume" not in result.output
    runs = CliRunner().invoke(cli, ["runs", "--config", str(project), "--format", "json"])
    (listed,) = json.loads(runs.stdout)
    assert listed["state"].startswith("failed (") and "resume" not in listed["state"]
    info = ragassay.open_run(listed["run"], config=project).data().info
    assert info.state == "failed" and info.status == "failed"
    assert any("failed before any work: bad.json, results[1]" in w for w in info.warnings)


def _random_checks(rng: random.Random) -> ClaimChecks:
    """Claims and checks of random shape, the undefined cases included (no claims, no chunk, nothing entailed)."""
    n, g, k = rng.randint(0, 4), rng.randint(0, 4), rng.choice([0, 1, 2, 3])

    def labels(count: int) -> list[str]:
        return [rng.choice(LABELS) for _ in range(count)]

    return ClaimChecks(
        response_claims=[f"r{i}" for i in range(n)],
        gt_answer_claims=[f"g{j}" for j in range(g)],
        answer2response=labels(n),
        response2answer=labels(g),
        retrieved2response=[labels(k) for _ in range(n)],
        retrieved2answer=[labels(k) for _ in range(g)],
        chunk_ids=[f"c{c}" for c in range(k)],
    )


def test_the_ragchecker_reading_is_ragcheckers_computation_and_the_default_differs_only_where_documented(ragchecker):
    """Item 16: ``RAGCHECKER_CODE`` gives RAGChecker's per-result values exactly on 400 random results (its
    computation run on the same checks); the default reading differs only where docs/metrics.md says: unscored
    where RAGChecker's guard gives 0, or the formula's value for a result with no retrieved chunk."""
    from ragchecker.computation import METRIC_FUNC_MAP
    from ragchecker.container import RAGResult

    rng, differing = random.Random(7), 0
    for index in range(400):
        checks = _random_checks(rng)
        result = RAGResult.from_dict(
            {"query_id": str(index), "query": "q", "gt_answer": "a", "response": "r", **checks.model_dump()}
        )
        for compute in METRIC_FUNC_MAP.values():
            compute(result)
        theirs = {name: float(value) for name, value in result.metrics.items()}
        ours = F.compute_all(checks, F.RAGCHECKER_CODE)
        assert {name: score.value for name, score in ours.items()} == theirs
        for name, score in F.compute_all(checks).items():
            if score.value != theirs[name]:
                differing += 1
                assert score.value is None or checks.chunk_count == 0, (name, checks)
    assert differing > 0
    assert F.Readings() != F.RAGCHECKER_CODE and F.Readings().undefined == "unscored"


def test_rc_metrics_without_a_generator_replay_only_and_estimate_no_call(tmp_path):
    """Item 20: a pure replay of stored checks needs no generator and ``estimate`` predicts no call; without
    stored checks (the file's checks left out) such a metric is unscored saying what it needs."""
    shutil.copy(DATA / "checking_outputs.json", tmp_path / "out.json")
    project = _project(tmp_path, "out.json", ALL_RC)
    estimated = CliRunner().invoke(cli, ["estimate", str(project), "--format", "json"])
    assert estimated.exit_code == 0, estimated.output
    rows = {row["component"]: row for row in json.loads(estimated.stdout)}
    assert {row["calls_high"] for row in rows.values()} == {0}
    assert rows["metric:rc_faithfulness"]["note"] == "calls no model"

    text = (
        (tmp_path / "ragassay.toml")
        .read_text()
        .replace(
            'rag = "ragchecker"\noptions = { path = "out.json" }',
            'rag = "ragchecker"\noptions = { path = "out.json", checks = false }',
        )
    )
    (tmp_path / "ragassay.toml").write_text(text)
    assert "checks = false" in text
    run = ragassay.run(project)
    (record, *_) = run.data().records(kind="metric", label="rc_precision")
    assert record.value is None and "no generator to check claims" in record.unscored_reason
