"""The ``traces`` source and the ``trace_replay`` system: `ragassay run` scores stored traces without executing
anything; the sampled subset and the numbers are the same under three hash seeds; two deployed versions become
two systems compared on the questions both answered."""

from __future__ import annotations

import json
import shutil

import pytest

from ragassay import ConfigError, TraceMapping
from ragassay.components import ComponentContext
from ragassay.plugins.traces import source_mapping

from conftest import cli_env, ragassay_cli
from otlp_traces import genai_trace, imported_project, openinference_trace, request, store_rows

METRICS = '["k_precision", "answer_relevance_token_recall", "context_relevance_token_precision"]'
CONFIG = """
[dataset]
source = "traces"
options = {{ {options} }}
{systems}
[evaluation]
metrics = {metrics}
"""
ONE_SYSTEM = '[systems.prod]\nrag = "trace_replay"'


def _project(root, requests, options="", systems=ONE_SYSTEM):
    return imported_project(root, CONFIG.format(options=options, systems=systems, metrics=METRICS), requests)


def test_run_scores_stored_traces_with_their_ids_latency_and_span_tree(tmp_path):
    root = _project(
        tmp_path / "p",
        [
            request(openinference_trace(1, "What is the first retrieved?", "first retrieved")),
            request(genai_trace(2, "Who?", "genai doc")),
        ],
    )
    result = ragassay_cli("run", str(root), "-q")
    assert result.returncode == 0, result.stderr
    rows = store_rows(root, "select question_id, status, latency_s, input_tokens, output_json from outputs order by 1")
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("a0000000000000000000000000000001", "ok", 0.9, 12),  # the recorded latency, not the replay's
        ("a0000000000000000000000000000002", "ok", 0.7, 7),
    ]
    trace = json.loads(rows[0][4])["trace"]
    assert trace["trace_id"] == rows[0][0] and trace["answer_span_id"] == "b000000100000006"
    assert [s["kind"] for s in trace["spans"]] == ["CHAIN", "AGENT", "RETRIEVER", "RERANKER", "TOOL", "LLM"]
    samples = dict(store_rows(root, "select question_id, sample_json from run_samples"))
    meta = json.loads(samples[rows[1][0]])["metadata"]["trace"]
    assert meta["span_id"] == "b000000200000001" and meta["service_version"] == "1.0"
    values = dict(
        store_rows(
            root,
            "select o.question_id, m.value from metric_values m join outputs o on o.id = m.output_id "
            "where m.metric = 'k_precision'",
        )
    )
    # trace 1's contexts are the reranker's ("second retrieved"), not the retriever's: half its answer's tokens
    assert values == {rows[0][0]: 0.5, rows[1][0]: 1.0}
    spec = json.loads(store_rows(root, "select spec_json from run_systems")[0][0])
    assert spec["rag"]["traits"].get("replays") is True


def test_sampled_subset_and_numbers_are_the_same_under_three_hash_seeds(tmp_path):
    requests = [
        request(openinference_trace(n, f"question {n} about retrieved", f"answer {n % 4} retrieved"))
        for n in range(1, 41)
    ]
    base = _project(tmp_path / "base", requests, options='sample = "30%"')
    outcomes = []
    for seed in ("0", "1", "12345"):
        root = tmp_path / f"seed{seed}"
        shutil.copytree(base, root)
        result = ragassay_cli("run", str(root), "-q", env=cli_env(PYTHONHASHSEED=seed))
        assert result.returncode == 0, result.stderr
        outcomes.append(
            store_rows(
                root,
                "select o.question_id, m.metric, m.value from metric_values m join outputs o "
                "on o.id = m.output_id order by 1, 2",
            )
        )
    assert outcomes[0] == outcomes[1] == outcomes[2]
    sampled = {row[0] for row in outcomes[0]}
    assert 3 <= len(sampled) <= 25  # a 30% subset of 40, not all and not none


def test_two_versions_are_two_systems_paired_on_the_questions_both_answered(tmp_path):
    v1 = [
        openinference_trace(n, q, a, start=n)
        for n, (q, a) in enumerate(
            [("What is X?", "first retrieved"), ("Who made Y?", "nobody"), ("Only v1?", "yes")], 1
        )
    ]
    v2 = [
        openinference_trace(n, q, a, start=n)
        for n, (q, a) in enumerate([("what is x", "second retrieved"), ("Who made Y ?", "second")], 10)
    ]
    systems = (
        '[systems.v1]\nrag = "trace_replay"\noptions = { version = "1.0" }\n'
        '[systems.v2]\nrag = "trace_replay"\noptions = { version = "2.0" }'
    )
    root = _project(
        tmp_path / "p",
        [request(s, version="1.0") for s in v1] + [request(s, version="2.0") for s in v2],
        options='pair_by = "question"',
        systems=systems,
    )
    result = ragassay_cli("run", str(root), "-q")
    assert result.returncode == 0, result.stderr
    rows = store_rows(root, "select system, status, error from outputs order by system, status")
    assert len(store_rows(root, "select * from run_samples")) == 3  # "What is X?" and "what is x" are one question
    failed = [r for r in rows if r[1] == "failed"]
    assert [r[0] for r in failed] == ["v2"] and "no trace of version '2.0' for this question" in failed[0][2]
    (run_id,) = store_rows(root, "select id from runs")[0]
    compared = ragassay_cli("compare", run_id, "--config", str(root), "--format", "json")
    assert compared.returncode == 0, compared.stderr
    report = json.loads(compared.stdout)
    cells = {row["system"]: row["k_precision n"] for row in report["comparison"]}
    assert cells == {"v1": 3, "v2": 2}  # each version's mean over the questions it answered
    (verdict,) = [v for v in report["verdicts"] if v["metric"] == "k_precision"]
    # paired on the 2 questions both answered: v2 answered them from its contexts (1.0), v1 did not (0.0, 0.5)
    assert (verdict["n"], verdict["mean_diff"]) == (2, 0.75)


def _sampled_ids(root, run_id):
    return {q for (q,) in store_rows(root, f"select question_id from run_samples where run_id = '{run_id}'")}


def test_run_sample_and_where_flags_set_the_source_options_and_make_a_run_of_their_own(tmp_path):
    requests = [
        request(openinference_trace(n, f"question {n} about retrieved", f"answer {n} retrieved"), version=f"1.{n % 2}")
        for n in range(1, 41)
    ]
    flagged = _project(tmp_path / "flags", requests)
    configured = tmp_path / "configured"
    shutil.copytree(flagged, configured)
    toml = configured / "ragassay.toml"
    options = 'options = { sample = "50%", where = { "service.version" = "1.0" } }'
    toml.write_text(toml.read_text().replace("options = {  }", options))
    result = ragassay_cli("run", str(flagged), "-q", "--sample", "50%", "--where", "service.version=1.0")
    assert result.returncode == 0, result.stderr
    same = ragassay_cli("run", str(configured), "-q")
    assert same.returncode == 0, same.stderr

    ((run_id, config_json, count, fingerprint),) = store_rows(
        flagged, "select id, config_json, sample_count, fingerprint from runs"
    )
    options = json.loads(config_json)["dataset"]["options"]
    assert options == {"sample": "50%", "where": {"service.version": "1.0"}}  # the stored config: what was in effect
    (other_id,) = store_rows(configured, "select id from runs")[0]
    ids = _sampled_ids(flagged, run_id)
    assert ids == _sampled_ids(configured, other_id) and 2 <= count == len(ids) < 20  # half of the 20 v1.0 traces
    full = ragassay_cli("run", str(flagged), "-q")  # without the flags: the whole set, a run of its own
    assert full.returncode == 0, full.stderr
    runs = store_rows(flagged, "select sample_count, fingerprint from runs order by sample_count")
    assert [r[0] for r in runs] == [count, 40] and runs[1][1] != fingerprint


def test_run_sample_flag_is_refused_for_a_source_without_the_option(tmp_path):
    root = tmp_path / "files"
    root.mkdir()
    (root / "qa.jsonl").write_text(json.dumps({"question_id": "q1", "question": "Who?"}) + "\n")
    (root / "ragassay.toml").write_text('[dataset]\noptions = { path = "qa.jsonl" }\n[systems.prod]\nrag = "naive"\n')
    for flags, option in ((["--sample", "5%"], "sample"), (["--where", "route=/a"], "where")):
        result = ragassay_cli("run", str(root), "-q", *flags)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and f"dataset source 'files' has no option '{option}'" in lines[0], lines
    assert not (root / "ragassay-results.db").exists()  # refused before anything is stored
    bad = ragassay_cli("run", str(root), "-q", "--where", "route")
    assert bad.returncode == 2 and "give KEY=VALUE" in bad.stderr


def test_replay_uses_the_mapping_set_once_on_the_source_unless_a_system_sets_its_own(tmp_path):
    traces = [request(openinference_trace(1, "What is the first retrieved?", "first retrieved"))]
    systems = (
        '[systems.inherits]\nrag = "trace_replay"\n[systems.standard]\nrag = "trace_replay"\noptions = { mapping = {} }'
    )
    # the source reads the retriever's documents, not the reranker's (the standard mapping prefers those)
    options = 'mapping = { document_prefixes = ["retrieval.documents"] }'
    root = _project(tmp_path / "p", traces, options=options, systems=systems)
    result = ragassay_cli("run", str(root), "-q")
    assert result.returncode == 0, result.stderr
    rows = store_rows(root, "select system, output_json from outputs order by system")
    contexts = {system: json.loads(output)["context_ids"] for system, output in rows}
    assert contexts["inherits"] == ["d1", "d2"]  # the retriever's documents, as the source's mapping says
    assert contexts["standard"] != contexts["inherits"]  # the reranker's, under the mapping that system sets


def test_the_source_mapping_is_read_from_the_project_settings():
    settings = {"dataset": {"source": "traces", "options": {"mapping": {"answer_keys": ["app.answer"]}}}}
    assert source_mapping(ComponentContext(settings=settings)).answer_keys == ["app.answer"]
    other = {"dataset": {"source": "files", "options": {"mapping": {"answer_keys": ["app.answer"]}}}}
    assert source_mapping(ComponentContext(settings=other)) == TraceMapping()
    assert source_mapping(ComponentContext(settings={})) == TraceMapping()
    typo = {"dataset": {"source": "traces", "options": {"mapping": {"answer_key": "x"}}}}
    with pytest.raises(ConfigError, match=r"^dataset\.options\.mapping: answer_key: Extra inputs are not permitted$"):
        source_mapping(ComponentContext(settings=typo))
