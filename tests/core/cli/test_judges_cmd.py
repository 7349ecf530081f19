"""``ragassay judges choose`` end to end: three correctness judges on scripted loopback models of different price
and seeded error rate, a real run, people's labels; it names the cheapest judge non-inferior to the best, stores
the reasoning judge's reasoning tokens apart, and says so clearly when nothing is labelled."""

from __future__ import annotations

import json
import re

import pytest
from judge_servers import ErringJudge

import ragassay
from ragassay.results import read_run
from ragassay.store import open_store

from conftest import Testkit, cli_env, ragassay_cli, write_project

pytest.importorskip("openai")

N = 160
WRONG = [f"q{i:03d}" for i in range(N) if i % 5 in (1, 3)]  # 40% of the answers are wrong
QA = [
    {"question_id": f"q{i:03d}", "question": f"Who built reactor {i}?", "reference_answers": [f"Lab {i}"]}
    for i in range(N)
]
# (label, model, error rate, seed, reasoning tokens per call, price in / out per million)
JUDGES = [
    ("big", "judge-big", 0.02, 1, 0, (10.0, 40.0)),
    ("mid", "judge-mid", 0.04, 2, 30, (1.0, 4.0)),
    ("small", "judge-small", 0.30, 3, 0, (0.1, 0.4)),
]


def config(servers: dict) -> str:
    judges, prices = [], []
    for label, model, _, _, reasoning, (price_in, price_out) in JUDGES:
        effort = ', reasoning_effort = "low"' if reasoning else ""
        generator = (
            f'{{ name = "openai", options = {{ model = "{model}", base_url = "{servers[label]}/v1"{effort} }} }}'
        )
        judges.append(f'{{ name = "correctness", label = "{label}", options = {{ generator = {generator} }} }}')
        prices.append(f'[llm.prices."{model}"]\ninput_per_million = {price_in}\noutput_per_million = {price_out}\n')
    return f"""
[project]
name = "choose"
concurrency = 8
[corpus]
paths = ["corpus/*"]
[dataset]
options = {{ path = "qa.jsonl" }}
[systems.echo]
rag = {{ name = "testkit/echo", options = {{ wrong_ids = {json.dumps(WRONG)} }} }}
[evaluation]
judges = [{", ".join(judges)}]
{"".join(prices)}"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    folder = tmp_path_factory.mktemp("choose")
    models = {label: ErringJudge(rate, seed, reasoning) for label, _, rate, seed, reasoning, _ in JUDGES}
    for judge in models.values():
        judge.server.__enter__()
    try:
        write_project(folder, config({label: j.server.url for label, j in models.items()}), qa=QA, docs={"a.md": "x"})
        run_id = ragassay.run(folder, plugins=[("testkit", Testkit())]).run_id
        requests = {label: j.server.requests for label, j in models.items()}
    finally:
        for judge in models.values():
            judge.server.__exit__(None, None, None)
    labels = folder / "labels.jsonl"
    rows = [
        {
            "run_id": run_id,
            "sample_id": q["question_id"],
            "system": "echo",
            "rubric": "correct",
            "rubric_version": 1,
            "annotator": "ann",
            "value": 0.0 if q["question_id"] in WRONG else 1.0,
            "labelled_at": 1.0,
        }
        for q in QA
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder, run_id, labels, models, requests


def oracle_kappa(judge, requests) -> float:
    """Cohen's kappa (Cohen 1960, Eq. 1) of the server's replies against the labels, from its requests."""
    pairs = []
    for request in requests:
        prompt = request.json["messages"][-1]["content"]
        qid = "q{:03d}".format(int(re.search(r"reactor (\d+)\?", prompt).group(1)))
        truth = qid not in WRONG
        pairs.append((truth, truth != judge.flipped(prompt)))
    n = len(pairs)
    p_o = sum(t == j for t, j in pairs) / n
    p_t, p_j = sum(t for t, _ in pairs) / n, sum(j for _, j in pairs) / n
    p_e = p_t * p_j + (1 - p_t) * (1 - p_j)
    return (p_o - p_e) / (1 - p_e)


def choose(folder, *args):
    env = {**cli_env(), "OPENAI_API_KEY": "sk-test"}
    return ragassay_cli("judges", "choose", *args, "--config", str(folder), env=env)


def test_names_the_cheapest_judge_non_inferior_to_the_best(project):
    folder, run_id, labels, models, _ = project
    result = choose(folder, run_id[:8], "--labels", str(labels), "--margin", "0.15", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    options = {o["name"]: o for o in data["options"]}
    assert data["items"] == N and data["statistic"] == "kappa"
    for label, judge in models.items():  # the oracle: Cohen's kappa of each server's seeded verdicts, counted here
        assert options[label]["agreement"]["value"] == pytest.approx(oracle_kappa(judge, project[4][label]))
    assert data["best"] == "big"
    assert options["mid"]["non_inferior"] and not options["small"]["non_inferior"]
    assert options["small"]["difference"]["high"] < 0  # clearly worse
    assert data["chosen"] == "mid"  # cheaper than big, within the margin; small is cheaper but inferior
    assert (
        options["small"]["spend"]["cost_usd"]
        < options["mid"]["spend"]["cost_usd"]
        < options["big"]["spend"]["cost_usd"]
    )
    again = choose(folder, run_id[:8], "--labels", str(labels), "--margin", "0.15", "--json")
    assert again.stdout == result.stdout  # seeded bootstrap: the same numbers
    text = choose(folder, run_id[:8], "--labels", str(labels), "--margin", "0.15", "--format", "markdown")
    assert text.returncode == 0 and "| mid |" in text.stdout and "chosen: mid" in text.stdout


def test_a_margin_too_tight_keeps_the_best(project):
    folder, run_id, labels, _, _ = project
    result = choose(folder, run_id[:8], "--labels", str(labels), "--margin", "0", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["chosen"] == "big"


def test_the_reasoning_judge_reached_the_wire_and_its_reasoning_tokens_are_stored_apart(project):
    folder, run_id, _, _, requests = project
    assert all(r.json["reasoning_effort"] == "low" for r in requests["mid"])
    assert not any("reasoning_effort" in r.json for r in requests["big"])
    store = open_store(f"sqlite:///{folder / 'ragassay-results.db'}", create=False)
    try:
        run = read_run(store, run_id)
    finally:
        store.close()
    mid = run.records(kind="judge", label="mid", repeat=0)
    assert len(mid) == N and all((r.usage.output_tokens, r.usage.reasoning_tokens) == (50, 30) for r in mid)
    assert all(r.usage.reasoning_tokens == 0 for r in run.records(kind="judge", label="big"))


def test_nothing_labelled_is_one_clear_message(project):
    folder, run_id, _, _, _ = project
    result = choose(folder, run_id[:8])
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "has no labelled item" in result.stderr and "--labels FILE" in result.stderr
