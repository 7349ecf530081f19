"""``ragassay judges check`` end to end: a run judged by a scripted loopback judge and labelled by people, then the
config's judge changed. A much worse judge re-judges exactly the labelled items (counted at its server), the drop
is reported with its interval (exit 1) and ``compare`` warns before that judge decides; an equally good judge
holds (exit 0); an unchanged judge re-judges nothing."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from judge_servers import PROMPT, ErringJudge

import ragassay
from ragassay.cli.main import cli

from conftest import write_project

pytest.importorskip("openai")

N, LABELLED = 120, 60
QA = [
    {"question_id": f"q{i:03d}", "question": f"Who built reactor {i}?", "reference_answers": [f"Lab {i}"]}
    for i in range(N)
]
# judge server -> (model, error rate, seed)
JUDGES = {"good": ("judge-good", 0.03, 1), "bad": ("judge-bad", 0.40, 2), "peer": ("judge-peer", 0.03, 3)}


def answers(wrong) -> str:
    rows = [
        {"question_id": q["question_id"], "answer": f"Nobody {i}" if wrong(i) else f"Lab {i}", "contexts": []}
        for i, q in enumerate(QA)
    ]
    return "".join(json.dumps(r) + "\n" for r in rows)


def config(url: str, model: str) -> str:
    generator = f'{{ name = "openai", options = {{ model = "{model}", base_url = "{url}/v1" }} }}'
    return f"""
[project]
name = "check"
concurrency = 8
[corpus]
paths = ["corpus/*"]
[dataset]
options = {{ path = "qa.jsonl" }}
[systems.sys]
rag = {{ name = "precomputed", options = {{ path = "sys.jsonl" }} }}
[systems.alt]
rag = {{ name = "precomputed", options = {{ path = "alt.jsonl" }} }}
[evaluation]
judges = [{{ name = "correctness", label = "j", options = {{ generator = {generator} }} }}]
"""


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "80", "OPENAI_API_KEY": "sk-test"})


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    folder = tmp_path_factory.mktemp("judges_check")
    servers = {name: ErringJudge(rate, seed) for name, (_, rate, seed) in JUDGES.items()}
    for judge in servers.values():
        judge.server.__enter__()
    try:
        write_project(folder, config(servers["good"].server.url, "judge-good"), qa=QA, docs={"a.md": "x"})
        (folder / "sys.jsonl").write_text(answers(lambda i: i % 4 == 1), encoding="utf-8")
        (folder / "alt.jsonl").write_text(answers(lambda i: i % 3 == 0), encoding="utf-8")
        run_id = ragassay.run(folder).run_id
        labels = folder / "labels.jsonl"
        rows = [
            {
                "run_id": run_id,
                "sample_id": q["question_id"],
                "system": "sys",
                "rubric": "correct",
                "rubric_version": 1,
                "annotator": "ann",
                "value": 0.0 if i % 4 == 1 else 1.0,
                "labelled_at": 1.0,
            }
            for i, q in enumerate(QA[:LABELLED])
        ]
        labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        imported = invoke("labels", "import", str(labels), "--config", str(folder))
        assert imported.exit_code == 0, imported.output
        yield folder, run_id, servers
    finally:
        for judge in servers.values():
            judge.server.__exit__(None, None, None)


def use_judge(folder, servers, name: str) -> None:
    (folder / "ragassay.toml").write_text(config(servers[name].server.url, JUDGES[name][0]), encoding="utf-8")


def check(folder, run_id: str, *extra: str):
    return invoke("judges", "check", run_id[:8], "--judge", "j", "--margin", "0.1", "--config", str(folder), *extra)


def asked_items(judge) -> list[tuple[int, str]]:
    """(reactor number, first word of the given response) of every request the judge's server received."""
    found = []
    for request in judge.server.requests:
        true_answer, given = PROMPT.search(request.json["messages"][-1]["content"]).groups()
        found.append((int(true_answer.split()[-1]), given.split()[0]))
    return found


def oracle_kappa(judge) -> float:
    """Cohen's kappa (Cohen 1960, Eq. 1) of the server's seeded replies on sys's labelled answers against the
    labels, from the prompts it received."""
    pairs = {}
    for request in judge.server.requests:
        prompt = request.json["messages"][-1]["content"]
        true_answer, given = PROMPT.search(prompt).groups()
        i = int(true_answer.split()[-1])
        if i < LABELLED and given.split()[0] == ("Nobody" if i % 4 == 1 else "Lab"):
            truth = i % 4 != 1
            pairs[i] = (truth, (given.strip() == true_answer.strip()) != judge.flipped(prompt))
    assert len(pairs) == LABELLED
    n = len(pairs)
    p_o = sum(t == j for t, j in pairs.values()) / n
    p_t, p_j = sum(t for t, _ in pairs.values()) / n, sum(j for _, j in pairs.values()) / n
    p_e = p_t * p_j + (1 - p_t) * (1 - p_j)
    return (p_o - p_e) / (1 - p_e)


def test_an_unchanged_judge_rejudges_nothing(project):
    folder, run_id, servers = project
    use_judge(folder, servers, "good")
    calls = len(servers["good"].server.requests)
    result = check(folder, run_id, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["outcome"] == "unchanged" and data["calibration_run"] is None
    assert len(servers["good"].server.requests) == calls  # nothing re-judged
    assert "nothing re-judged" in check(folder, run_id).output


def test_a_worse_judge_rejudges_exactly_the_labelled_items_and_is_flagged(project):
    folder, run_id, servers = project
    use_judge(folder, servers, "bad")
    bad = servers["bad"].server
    result = check(folder, run_id, "--json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert len(bad.requests) == LABELLED == data["items"]  # exactly the labelled items, once each
    assert sorted(asked_items(servers["bad"])) == [
        (i, "Nobody" if i % 4 == 1 else "Lab") for i in range(LABELLED)
    ]  # sys's
    assert data["outcome"] == "dropped" and data["statistic"] == "kappa"
    change = data["change"]
    assert change["high"] < -0.1 and change["low"] <= change["value"] <= change["high"]
    after, before = data["agreement_after"]["value"], data["agreement_before"]["value"]
    assert before == pytest.approx(oracle_kappa(servers["good"])) and after == pytest.approx(
        oracle_kappa(servers["bad"])
    )
    assert change["value"] == pytest.approx(after - before)
    again = check(folder, run_id, "--json")  # resumed: stored judgements, no new call
    assert again.exit_code == 1 and len(bad.requests) == LABELLED
    assert json.loads(again.stdout)["change"] == change  # seeded bootstrap, same numbers
    text = check(folder, run_id)
    assert "dropped: agreement after minus before" in text.output
    assert max(len(line) for line in text.output.splitlines()) <= 80
    new_run = ragassay.run(folder).run_id  # the worse judge on every output: compare warns before it decides
    compared = invoke("compare", new_run[:8], "--config", str(folder))
    assert compared.exit_code == 0, compared.output
    assert "dropped in agreement with people at its last check" in compared.stderr
    assert compared.stderr.count("warning: judge correctness:openai") == 1
    gated = invoke("gate", str(folder), "--baseline", run_id[:8], "--config", str(folder))
    assert "dropped in agreement with people at its last check" in gated.stderr, gated.output


def test_an_equally_good_judge_holds_and_is_warned_about_until_checked(project):
    folder, run_id, servers = project
    use_judge(folder, servers, "peer")
    peer_run = ragassay.run(folder).run_id
    before = invoke("compare", peer_run[:8], "--config", str(folder))
    assert before.exit_code == 0, before.output
    assert "has no calibration items" in before.stderr
    calls = len(servers["peer"].server.requests)  # the peer judged every output already: cached replies
    result = check(folder, run_id, "--format", "markdown")
    assert result.exit_code == 0, result.output
    assert "held: agreement after minus before" in result.output and "| after |" in result.output
    assert len(servers["peer"].server.requests) == calls  # the labelled outputs' replies came from the cache
    after = invoke("compare", peer_run[:8], "--config", str(folder))
    assert after.exit_code == 0 and "warning: judge" not in after.stderr


def test_a_run_without_the_judge_is_one_clear_message(project):
    folder, run_id, servers = project
    use_judge(folder, servers, "good")
    result = invoke("judges", "check", run_id[:8], "--judge", "nope", "--config", str(folder))
    assert result.exit_code == 2 and "has no judge 'nope'" in result.output


def test_a_labelled_system_whose_config_changed_is_refused_before_anything_runs(project):
    folder, run_id, servers = project
    use_judge(folder, servers, "bad")
    path = folder / "sys.jsonl"
    kept = path.read_text(encoding="utf-8")
    calls = len(servers["bad"].server.requests)
    try:
        path.write_text(answers(lambda i: i % 2 == 0), encoding="utf-8")  # another outputs file: another system
        result = check(folder, run_id)
    finally:
        path.write_text(kept, encoding="utf-8")
    assert result.exit_code == 2 and "system 'sys' changed since its outputs were labelled" in result.output
    assert len(servers["bad"].server.requests) == calls
