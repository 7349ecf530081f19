"""The claim metrics through the real judge path: a run whose judge model is a loopback server answering from
RAGChecker's reference file gives RAGChecker's claims, checks and per-result metrics; injected faults (HTTP 500, a
cut-off body, a reply that is not JSON, a wrong label count) lose nothing; a fault that persists is unscored with
the reason, never a wrong value."""

from __future__ import annotations

import json

import pytest

import ragassay
from ragassay.plugins.claims.model import ClaimChecks
from ragassay.plugins.claims.specs import SPECS

from claims_llm import FAULTS, ReferenceJudge, judge_server, results
from conftest import write_project

pytest.importorskip("openai")

NAMES = [spec.name for spec in SPECS]


def project(tmp_path, url: str, metrics: list[str] = NAMES, **options) -> str:
    rows, qa = [], []
    for r in results():
        qa.append({"question_id": r["query_id"], "question": r["query"], "reference_answers": [r["gt_answer"]]})
        chunks = r["retrieved_context"]
        rows.append(
            {
                "question_id": r["query_id"],
                "answer": r["response"],
                "contexts": [c["text"] for c in chunks],
                "context_ids": [c["doc_id"] for c in chunks],
            }
        )
    (tmp_path / "outputs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    generator = f'name = "openai"\noptions = {{ model = "judge", base_url = "{url}/v1", backoff_s = 0.0 }}\n'
    extra = "".join(f"{key} = {json.dumps(value)}\n" for key, value in options.items())
    tables = "".join(
        f'[[evaluation.metrics]]\nname = "rc_{name}"\n[evaluation.metrics.options]\n{extra}'
        f"[evaluation.metrics.options.generator]\n{generator}"
        for name in metrics
    )
    config = (
        '[dataset]\noptions = { path = "qa.jsonl" }\n[systems.s]\nrag = "precomputed"\n'
        f'options = {{ path = "outputs.jsonl" }}\n{tables}'
    )
    return write_project(tmp_path, config, qa=qa, docs={})


def scored(tmp_path, judge: ReferenceJudge, metrics: list[str] = NAMES, **options):
    with judge_server(judge) as server:
        run = ragassay.run(project(tmp_path, server.url, metrics, **options))
        return run.data(), server.calls


def reference_checks(r) -> ClaimChecks:
    fields = ("response_claims", "gt_answer_claims", "answer2response", "response2answer")
    return ClaimChecks(
        **{f: r[f] for f in fields + ("retrieved2response", "retrieved2answer")},
        chunk_ids=[c["doc_id"] for c in r["retrieved_context"]],
    )


def check_against_reference(data):
    for r in results():
        records = {rec.label: rec for rec in data.scores if rec.question_id == r["query_id"]}
        anchors = [rec for rec in records.values() if "checks" in rec.details]
        assert len(anchors) == 1  # the claims and checks are stored once per output
        anchor = anchors[0]
        assert ClaimChecks.model_validate(anchor.details["checks"]) == reference_checks(r)
        assert anchor.details["failures"] == [] and anchor.details["missing"] == {}
        assert anchor.usage.calls >= anchor.details["calls"] > 0  # every call counted, on the anchor alone
        for name in NAMES:
            record = records[f"rc_{name}"]
            assert record.value == pytest.approx(r["metrics"][name], abs=1e-12), name  # RAGChecker's own value
            if record is not anchor:
                assert record.usage.calls == 0 and record.details["checks_with"] == anchor.label


def test_a_scripted_judge_gives_ragcheckers_claims_checks_and_metrics(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    data, calls = scored(tmp_path, ReferenceJudge())
    check_against_reference(data)
    assert calls == sum(planned(r, per_call=20) for r in results())


def planned(r, per_call: int) -> int:
    """2 extractions, answer2response and response2answer in batches, both claim lists per chunk."""
    c_r, c_g, k = len(r["response_claims"]), len(r["gt_answer_claims"]), len(r["retrieved_context"])
    return 2 + -(-c_r // per_call) + -(-c_g // per_call) + k * -(-(c_r + c_g) // per_call)


def test_injected_faults_lose_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    judge = ReferenceJudge(fault_every=5)
    data, calls = scored(tmp_path, judge)
    check_against_reference(data)
    assert set(judge.faulted.values()) == set(FAULTS)  # every kind of fault happened
    assert len(judge.faulted) >= len(judge.seen) // 5  # a fifth of the distinct questions
    anchors = [rec for rec in data.scores if "checks" in rec.details]
    transport = sum(kind in ("http_500", "malformed_body") for kind in judge.faulted.values())
    assert sum(a.usage.calls for a in anchors) == calls - transport  # re-asks are calls; transport retries are not


def test_a_persistent_fault_is_unscored_with_the_reason_never_guessed(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    nile = results()[0]["retrieved_context"][3]["text"]  # chunk 003 of the first result: always a wrong count
    data, _ = scored(tmp_path, ReferenceJudge(broken=nile[:40]))
    records = {rec.label: rec for rec in data.scores if rec.question_id == "0"}
    for name in ("precision", "recall", "f1"):  # need no chunk check: scored as RAGChecker scores them
        assert records[f"rc_{name}"].value == pytest.approx(results()[0]["metrics"][name])
    for name in ("claim_recall", "faithfulness", "hallucination"):
        record = records[f"rc_{name}"]
        assert record.value is None and "claim check (chunk 003) not usable" in record.unscored_reason
        assert "List should have at least" in record.unscored_reason
    anchor = next(rec for rec in records.values() if "checks" in rec.details)
    assert anchor.details["checks"]["retrieved2response"] is None
    assert anchor.details["failures"][0]["raw"].startswith('{"verdicts"')
