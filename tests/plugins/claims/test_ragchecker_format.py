"""RAGChecker's own claims and checks (tests/data/ragchecker, Apache-2.0): replayed through the formulas, through
a run (the ``ragchecker`` source and rag), and exported back in RAGChecker's layout."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

import ragassay
from ragassay import DatasetError, Metric, MetricResult, Unscored, hookimpl
from ragassay.plugins.claims import formulas as F
from ragassay.plugins.claims.export import export_run, main
from ragassay.plugins.claims.ragchecker_format import checks_of, read_results

DATA = Path(__file__).parents[2] / "data" / "ragchecker"
OUTPUTS = DATA / "checking_outputs.json"
PUBLISHED = {  # RAGChecker's overall block for this file (its README and the issue), under evaluate's keys
    "overall_metrics": {"precision": 76.4, "recall": 62.5, "f1": 68.3},
    "retriever_metrics": {"claim_recall": 61.4, "context_precision": 87.5},
    "generator_metrics": {
        "context_utilization": 87.5,
        "noise_sensitivity_in_relevant": 19.1,
        "noise_sensitivity_in_irrelevant": 0.0,
        "hallucination": 4.5,
        "self_knowledge": 27.3,
        "faithfulness": 68.2,
    },
}


def _replayed() -> list[tuple[dict, dict[str, F.Score]]]:
    results = read_results(OUTPUTS)
    return [(r, F.compute_all(checks_of(r, f"results[{i}]"))) for i, r in enumerate(results)]


def test_every_per_result_value_is_ragcheckers_exactly():
    replayed = _replayed()
    assert len(replayed) == 2
    for result, scores in replayed:
        assert set(result["metrics"]) == set(F.METRICS)
        assert {name: scores[name].value for name in F.METRICS} == result["metrics"]  # ==, not approx


def test_the_overall_block_is_ragcheckers_to_one_decimal():
    block = F.ragchecker_block([scores for _, scores in _replayed()])
    assert block == PUBLISHED
    assert json.loads(OUTPUTS.read_text())["metrics"] == _older_keys(PUBLISHED)


def _older_keys(block: dict) -> dict:
    """The block under the group keys of RAGChecker's example file (``overall``; evaluate writes ``overall_metrics``)."""
    return {group.removesuffix("_metrics"): values for group, values in block.items()}


def test_invalid_checks_name_the_file_and_the_result(tmp_path):
    data = json.loads(OUTPUTS.read_text())
    data["results"][1]["retrieved2answer"][2] = ["Neutral"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    result = read_results(path)[1]
    with pytest.raises(DatasetError, match=r"results\[1\]: invalid claims or checks .*retrieved2answer\[2\] has 1"):
        checks_of(result, f"{path.name}, results[1]")
    data["results"][0].pop("query")
    path.write_text(json.dumps(data))
    with pytest.raises(DatasetError, match=r"bad.json, results\[0\]: 'query' must be a non-empty string"):
        read_results(path)
    path.write_text('{"result": []}')
    with pytest.raises(DatasetError, match="an object with a 'results' list"):
        read_results(path)


class ClaimChecksStandIn(Metric):
    """Stores RAGChecker's checks of a sample as the claim metric does (``details["checks"]``): the storage
    contract only. It reads them from the reference file, not from the output, so an export can find them only
    in the stored details."""

    name = "claim_checks"
    value_range = (0.0, 1.0)

    def score(self, sample, output):
        assert "ragchecker" not in output.trace
        for index, result in enumerate(read_results(OUTPUTS)):
            if str(result["query_id"]) == sample.question_id:
                checks = checks_of(result, f"results[{index}]")
                return MetricResult(value=1.0, details={"checks": checks.model_dump(mode="json")})
        return Unscored(reason="no checks")


class Plugin:
    @hookimpl
    def register_metrics(self, register):
        register(ClaimChecksStandIn)


CONFIG = """
[project]
name = "replay"
[dataset]
source = "ragchecker"
options = {{ path = "{data}" }}
[systems.ragchecker]
rag = "ragchecker"
options = {{ path = "{outputs}", checks = {checks} }}
[evaluation]
metrics = [{metrics}]
"""


def _run(tmp_path: Path, *, data="checking_inputs.json", checks="true", metrics='"exact_match"', plugins=()):
    for name in ("checking_inputs.json", "checking_outputs.json"):
        shutil.copy(DATA / name, tmp_path / name)
    text = CONFIG.format(data=data, outputs="checking_outputs.json", checks=checks, metrics=metrics)
    (tmp_path / "ragassay.toml").write_text(textwrap.dedent(text))
    return ragassay.run(tmp_path, plugins=plugins)


def _same_as_ragchecker(document: dict) -> None:
    original = json.loads(OUTPUTS.read_text())
    assert _older_keys(document["metrics"]) == original["metrics"]
    assert len(document["results"]) == len(original["results"])
    for got, want in zip(document["results"], original["results"]):
        assert got == want  # query, answer, contexts, claims, every check, every per-result metric


def test_round_trip_through_a_run_and_the_trace(tmp_path):
    run = _run(tmp_path)
    assert run.failed == 0
    data = run.data(payloads=True)
    sample = data.samples[0]
    assert (sample.question_id, sample.reference_answers[0][:9]) == ("0", "The Nile ")
    assert data.payload("ragchecker", "1").context_ids == ["000", "001", "002"]
    document, notes = export_run(data)
    assert notes == []
    _same_as_ragchecker(document)


def test_round_trip_through_the_claim_metrics_details_and_the_command(tmp_path, capsys):
    run = _run(
        tmp_path,
        data="checking_outputs.json",
        metrics='{ name = "t/claim_checks", label = "claim_checks" }',
        plugins=[("t", Plugin())],
    )
    assert run.failed == 0
    out = tmp_path / "exported.json"
    assert main([run.run_id, str(out), "--results", str(tmp_path / "ragassay-results.db")]) == 0
    _same_as_ragchecker(json.loads(out.read_text()))
    assert "2 result(s)" in capsys.readouterr().err


def test_export_without_checks_says_so(tmp_path, capsys):
    run = _run(tmp_path, checks="false")
    with pytest.raises(ValueError, match="no system has claims and checks"):
        export_run(run.data(payloads=True))
    assert main([run.run_id, str(tmp_path / "x.json"), "--results", str(tmp_path / "ragassay-results.db")]) == 1
    assert "error: run" in capsys.readouterr().err and not (tmp_path / "x.json").exists()
