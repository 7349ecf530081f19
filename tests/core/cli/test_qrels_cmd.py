"""``ragassay qrels judge/eval`` end to end on the BEIR sample, at a scripted loopback relevance judge that grades
from the real qrels with seeded errors: the pool, the cache (adding a retriever asks only about new pairs, counted
by the server), and PPI intervals, paired verdicts and Kendall tau against trec_eval's measures computed here."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

import ragassay
from ragassay.analysis.ppi import ppi_mean
from ragassay.cli.main import cli
from ragassay.plugins.ir_metrics import evaluate

from relevance_judge import SAMPLE, RelevanceJudge, relevance_server

pytest.importorskip("openai")

DEPTH = 5
SYSTEMS = {
    "bm25": 'retriever = "bm25"',
    "bm25_lucene": 'retriever = { name = "bm25", options = { variant = "lucene", stemmer = "porter" } }',
    "bm25_title": 'retriever = { name = "bm25", options = { fields = ["title"] } }',
    "keyword": 'retriever = "keyword"',  # added later
}
HUMAN = ("q1", "q3", "q5", "q7")  # people's qrels of half the queries


def config(names) -> str:
    head = (
        '[project]\nname = "b"\nresults = "results.db"\n[dataset]\nsource = "beir"\noptions = { path = "beir_sample" }\n'
        '[defaults]\nchunker = { name = "document", options = { title = "join" } }\n[llm]\ncache = false\n'
        '[evaluation]\nmetrics = [{ name = "ndcg_at_k", options = { k = 5 } }]\n'
    )
    return head + "".join(f'[systems.{n}]\nrag = "retrieval"\n{SYSTEMS[n]}\noptions = {{ top_k = 5 }}\n' for n in names)


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.output


def pool_of(data) -> set[tuple[str, str]]:
    """The pool, computed here from the stored outputs: each system's first DEPTH distinct ids per query."""
    pool = set()
    for (_system, qid), record in data.outputs.items():
        ids = list(dict.fromkeys(json.loads(record.payload)["context_ids"]))[:DEPTH]
        pool |= {(qid, docid) for docid in ids}
    return pool


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "sk-test-relevance")
    root = tmp_path_factory.mktemp("qrels")
    shutil.copytree(SAMPLE, root / "beir_sample")
    judge = RelevanceJudge(error_rate=0.2, seed=4, garble_every=9)
    steps = []
    with relevance_server(judge) as server:
        ref = (
            '{ name = "umbrela", options = { generator = { name = "openai", options = { model = "judge", '
            f'base_url = "{server.url}/v1", backoff_s = 0.0 }} }} }} }}'
        )
        for names in (list(SYSTEMS)[:3], list(SYSTEMS)):
            (root / "ragassay.toml").write_text(config(names), encoding="utf-8")
            assert invoke("run", "-q", "--config", root)[0] == 0
            data = ragassay.open_run(config=root).data(payloads=True)
            before = dict(judge.calls)
            code, out = invoke(
                "qrels", "judge", data.id, "--config", root, "--judge", ref, "--depth", DEPTH,
                "--out", root / "judged.qrels", "--format", "json",
            )  # fmt: skip
            assert code == 0, out
            asked = {pair: n - before.get(pair, 0) for pair, n in judge.calls.items() if n > before.get(pair, 0)}
            steps.append((data, json.loads(out), asked))
    mp.undo()
    (root / "human.qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q in HUMAN for d, g in judge.qrels[q].items()), encoding="utf-8"
    )
    return root, judge, steps


def test_every_pooled_pair_is_judged_once_and_written_as_the_judge_said(judged):
    root, judge, steps = judged
    data, result, asked = steps[0]
    pool = pool_of(data)
    assert result["pooled"] == len(pool) and result["judged"] == len(pool) and result["reused"] == 0
    assert set(asked) == pool and result["unusable"] == []
    garbled = sum(n == 2 for n in asked.values())
    assert garbled >= 1 and all(n in (1, 2) for n in asked.values())  # a reply without a score is re-asked once
    lines = (root / "judged.qrels").read_text().splitlines()  # the last write: the second pool
    written = {(q, d): int(g) for q, _, d, g in map(str.split, lines)}
    assert written == {pair: judge.grade(*pair) for pair in pool_of(steps[1][0])}
    assert any(judge.wrong(*pair) for pair in pool)  # the seeded errors reach the qrels


def test_adding_a_retriever_asks_only_about_pairs_new_to_the_pool(judged):
    _, _, steps = judged
    (first, _, _), (second, result, asked) = steps
    new = pool_of(second) - pool_of(first)
    assert len(new) >= 3
    assert set(asked) == new  # the server was asked about the new pairs only
    assert (result["reused"], result["judged"], result["pooled"]) == (
        len(pool_of(first)),
        len(new),
        len(pool_of(second)),
    )


def trec_values(data, qrels, k=DEPTH):
    """system -> qid -> nDCG@k by trec_eval's measures (ir_metrics.evaluate) on the stored rankings."""
    found = {}
    for system in data.systems:
        run = {}
        for qid in data.question_ids:
            output = json.loads(data.outputs[system, qid].payload)
            run[qid] = list(zip(output["context_ids"], output["trace"]["scores"]))
        per_query, _ = evaluate(qrels, run, cutoffs=(k,))
        found[system] = {q: v[f"ndcg_cut_{k}"] for q, v in per_query.items()}
    return found


def holm_levels(p_values: list[float], alpha: float) -> list[float]:
    """Holm's step-down level of each p-value, written out here (not the code under test)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    levels, stopped = [0.0] * len(p_values), None
    for rank, i in enumerate(order):
        step = alpha / (len(p_values) - rank)
        if stopped is None and p_values[i] > step:
            stopped = step
        levels[i] = step if stopped is None else stopped
    return levels


def test_ppi_intervals_verdicts_and_tau_on_the_judged_qrels(judged):
    root, judge, steps = judged
    data = steps[1][0]
    code, out = invoke(
        "qrels", "eval", data.id, "--config", root, "--qrels", root / "judged.qrels", "--human", root / "human.qrels",
        "--metric", f"ndcg_at_k@{DEPTH}", "--format", "json",
    )  # fmt: skip
    assert code == 0, out
    report = json.loads(out)
    written = {}
    for q, _, d, g in map(str.split, (root / "judged.qrels").read_text().splitlines()):
        written.setdefault(q, {})[d] = int(g)
    f = trec_values(data, written)
    y = trec_values(data, {q: judge.qrels[q] for q in HUMAN})
    labelled = list(HUMAN)
    unlabelled = [q for q in data.question_ids if q not in HUMAN]
    assert (report["labelled"], report["unlabelled"]) == (labelled, unlabelled)
    decision = report["metrics"][0]
    for system in data.systems:
        expected = ppi_mean([y[system][q] for q in labelled], [f[system][q] for q in labelled],
                            [f[system][q] for q in unlabelled])  # fmt: skip
        got = decision["systems"][system]
        assert (got["estimate"], got["low"], got["high"]) == pytest.approx(
            (expected.estimate, expected.low, expected.high)
        )
    assert len(decision["pairs"]) == 6
    # Holm over the six pairs: the k-th smallest p-value is tested at 0.05 / (6 - k + 1) while all before it
    # were rejected; each interval is at its pair's level, so verdict, interval and p-value agree there
    levels = holm_levels([p["result"]["p_value"] for p in decision["pairs"]], 0.05)
    for pair, level in zip(decision["pairs"], levels):
        r = pair["result"]
        assert r["confidence"] == pytest.approx(1 - level)
        if r["std_error"] < 1e-12:  # constant labelled differences: no verdict from a zero-width interval
            assert pair["verdict"] == "no spread" and any("zero-width" in note for note in decision["notes"])
            continue
        excludes = r["low"] > 0 or r["high"] < 0
        assert (pair["verdict"] in ("a better", "b better")) == excludes == (r["p_value"] <= level)
    assert sum(p["verdict"] in ("a better", "b better") for p in decision["pairs"]) >= 1
    fidelity = decision["fidelity"]
    assert fidelity["low"] <= fidelity["tau"] <= fidelity["high"] and fidelity["resamples"] > 0
    means = {s: sum(y[s][q] for q in labelled) / 4 for s in data.systems}
    assert fidelity["human_order"] == sorted(data.systems, key=lambda s: (-means[s], s))


def test_the_rich_report_names_the_intervals_and_tau(judged):
    root, _, steps = judged
    code, out = invoke("qrels", "eval", steps[1][0].id, "--config", root, "--qrels", root / "judged.qrels",
                       "--human", root / "human.qrels")  # fmt: skip
    assert code == 0, out
    assert "ndcg_at_k@10: prediction-powered means" in out and "ir_recall_at_k@10: paired verdicts" in out
    assert "Kendall tau" in out and "4 queries with people's qrels, 4 judged only" in out


def test_bad_input_is_one_line_with_exit_2(judged):
    root, judge, steps = judged
    run = steps[1][0].id
    code, out = invoke("qrels", "judge", run, "--config", root, "--judge", "{ name = ", "--out", root / "x.qrels")
    assert code == 2 and "--judge is not a TOML inline table" in out and "Traceback" not in out
    (root / "all.qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, ds in judge.qrels.items() for d, g in ds.items()))
    code, out = invoke(
        "qrels", "eval", run, "--config", root, "--qrels", root / "judged.qrels", "--human", root / "all.qrels"
    )
    assert code == 2 and "PPI needs at least 2 of each" in out
    code, out = invoke("qrels", "eval", run, "--config", root, "--qrels", root / "judged.qrels",
                       "--human", root / "human.qrels", "--metric", "exact_match")  # fmt: skip
    assert code == 2 and "reads no relevance judgements" in out
