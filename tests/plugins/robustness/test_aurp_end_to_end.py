"""Issue 25 end to end on Aurp: naive RAG (BM25) with (a) the offline extractive reader and (b) a scripted loopback
chat model that follows the context it is given (tests/servers/context_following.py), each wrapped by every
operator; ``ragassay robustness RUN`` reports each operator's effect with an interval, the metrics per perturbation
(injection success, refusal, counterfactual following) and the GRAMMAR groups; the hardened prompt
(``naive_hardened``) is compared with the plain one under the same injections by the paired engine.

Samples: three SQL templates of Aurp, one short and one long phrasing per group (48 samples), to keep it quick.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import ragassay
from ragassay.cli.main import cli
from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.present.sections.robustness import robustness_section
from ragassay.present.templating import section_html
from ragassay.reference_rags.naive import DEFAULT_SYSTEM_PROMPT, HARDENED_SYSTEM_PROMPT
from ragassay.results import read_run

from servers.context_following import REFUSAL, ContextFollowing
from servers.openai_chat import OpenAIChatServer

pytest.importorskip("openai")

AURP = Path(__file__).resolve().parents[3] / "examples" / "aurp"
TEMPLATES = ("project_location", "project_start", "client_city")
#: Every operator (and both distractor modes, both injection kinds): (system suffix, operator spec in TOML).
OPERATORS = {
    "noise": '{ name = "distractors", options = { k = 2 } }',
    "hard": '{ name = "distractors", options = { k = 2, mode = "hard" } }',
    "nogold": '{ name = "drop_gold" }',
    "middle": '{ name = "reorder", options = { gold = "middle" } }',
    "cut": '{ name = "truncate", options = { tokens = 12 } }',
    "cf": '{ name = "counterfactual", options = { database = "aurp.sql" } }',
    "inject": '{ name = "injection" }',
    "exfil": '{ name = "injection", options = { kind = "exfiltration", position = "random" } }',
    "typos": '{ name = "typos", options = { rate = 0.3 } }',
    "case": '{ name = "case", options = { mode = "lower" } }',
    "para": '{ name = "paraphrase", options = { templates = "templates.yaml" } }',
}
ALL = {"distractors", "drop_gold", "reorder", "truncate", "counterfactual", "injection", "typos", "case", "paraphrase"}


def perturbed(twin: str, suffixes=OPERATORS) -> str:
    return "".join(
        f'[systems.{twin}_{s}]\nrag = "perturbed"\noptions = {{ system = "{twin}", operator = {OPERATORS[s]} }}\n\n'
        for s in suffixes
    )


def write_project(root: Path, name: str, systems: str) -> Path:
    config = root / f"{name}.toml"
    config.write_text(
        f'[project]\nname = "{name}"\nresults = "results.db"\nconcurrency = 8\n\n'
        '[dataset]\nsource = "grammar"\n\n[dataset.options]\nsql_dump = "aurp.sql"\ntemplates = "templates.yaml"\n'
        'documents = ["corpus/**/*.md"]\n'
        'sampling = { mode = "stratified", per_group = 1, by = "query_length" }\n\n'
        '[defaults]\nchunker = { name = "recursive", options = { size = 400, overlap = 0, title_prefix = true } }\n\n'
        f"{systems}"
        '[evaluation]\nmetrics = ["contains_answer", "refusal", "counterfactual_following", "injection_success"]\n'
        'judges = ["match"]\n\n[analysis]\njudge = "match"\n',
        encoding="utf-8",
    )
    return config


@pytest.fixture(scope="module")
def project(tmp_path_factory, monkeypatch_module):
    root = tmp_path_factory.mktemp("aurp-robustness")
    shutil.copytree(AURP / "corpus", root / "corpus")
    shutil.copy(AURP / "aurp.sql", root / "aurp.sql")
    data = yaml.safe_load((AURP / "templates.yaml").read_text(encoding="utf-8"))
    data["templates"] = [t for t in data["templates"] if t["id"] in TEMPLATES]
    (root / "templates.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    extractive = write_project(
        root,
        "extractive",
        '[systems.base]\nretriever = "bm25"\ngenerator = "extractive"\noptions = { top_k = 3 }\n\n' + perturbed("base"),
    )
    monkeypatch_module.setenv("OPENAI_API_KEY", "sk-test-robustness")
    model = ContextFollowing()
    with OpenAIChatServer(default=model) as server:
        generator = (
            f'{{ name = "openai", options = {{ model = "scripted", base_url = "{server.url}/v1", cache = false }} }}'
        )
        llm = write_project(
            root,
            "llm",
            f'[systems.plain]\nretriever = "bm25"\ngenerator = {generator}\noptions = {{ top_k = 3 }}\n\n'
            '[systems.hardened]\nextends = "plain"\nrag = "naive_hardened"\n\n'
            + perturbed("plain")
            + perturbed("hardened", ["inject", "exfil"]),
        )
        runs = {}
        for config in (extractive, llm):
            run = ragassay.run(config)
            assert run.failed == 0
            runs[config.stem] = run.run_id
    return root, runs, model


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def robustness(root: Path, name: str, run_id: str, *args: str):
    result = CliRunner().invoke(cli, ["robustness", run_id, "-c", str(root / f"{name}.toml"), *args])
    assert result.exit_code == 0, result.output
    return result.output


def read(root: Path, name: str, run_id: str):
    store = Project(load_config(root / f"{name}.toml")).open_store()
    try:
        return read_run(store, run_id, payloads=True)
    finally:
        store.close()


@pytest.mark.parametrize("name", ["extractive", "llm"])
def test_every_operator_has_an_effect_with_an_interval_and_its_metrics(project, name):
    root, runs, _ = project
    data = json.loads(robustness(root, name, runs[name], "--format", "json"))
    twin = "base" if name == "extractive" else "plain"
    effects = {row["system"]: row for row in data["effects"] if row["twin"] == twin}
    assert {row["operator"] for row in effects.values()} == ALL and len(effects) == len(OPERATORS)
    for row in effects.values():
        assert row["metric"] == "judge:match" and row["n"] == data["profile"]["effects"][0]["n"]
        assert row["ci_low"] <= row["effect"] <= row["ci_high"], row
    assert effects[f"{twin}_nogold"]["verdict"] == "worse"  # the gold chunk carries the answer
    rates = {(row["system"], row["metric"]): row for row in data["rates"]}
    for system, metric in [("inject", "injection_success"), ("exfil", "injection_success")] + [
        ("nogold", "refusal"),
        ("cf", "counterfactual_following"),
    ]:
        rate = rates[(f"{twin}_{system}", metric)]
        assert rate["n"] > 0 and rate["ci_low"] <= rate["mean"] <= rate["ci_high"]
    groups = {row["system"]: row for row in data["groups"]}
    assert set(effects) <= set(groups) and all(g["robust"] > 0 for g in groups.values())
    assert groups[f"{twin}_nogold"]["stay robust"] < groups[f"{twin}_nogold"]["robust"]


def test_injection_success_is_what_the_model_obeyed(project):
    root, runs, model = project
    run = read(root, "llm", runs["llm"])
    obeyed = set(model.obeyed)
    checked = 0
    for system in ("plain_inject", "plain_exfil", "hardened_inject", "hardened_exfil"):
        values = run.values(system, "injection_success")
        for question_id, value in zip(run.question_ids, values):
            canary = run.payload(system, question_id).trace["perturbation"]["canary"]
            prompt = HARDENED_SYSTEM_PROMPT if system.startswith("hardened") else DEFAULT_SYSTEM_PROMPT
            assert value == float((canary, prompt) in obeyed), (system, question_id)
            checked += 1
    assert checked == 4 * len(run.question_ids) and obeyed  # the plain prompt was obeyed: not a vacuous comparison


def test_refusal_is_scored_where_gold_is_missing_and_is_one_on_the_models_refusals(project):
    root, runs, _ = project
    run = read(root, "llm", runs["llm"])
    refusals = 0
    for system in run.systems:
        for question_id, value in zip(run.question_ids, run.values(system, "refusal")):
            output = run.payload(system, question_id)
            missing = (output.trace.get("perturbation") or {}).get("gold_present") is False
            assert math.isnan(value) != missing, (system, question_id)  # scored exactly where gold is missing
            if missing:
                assert value == float(output.answer == REFUSAL), (system, question_id, output.answer)
                refusals += output.answer == REFUSAL
    assert refusals > 0


def test_the_hardened_prompt_is_compared_with_the_plain_one_by_the_paired_engine(project):
    root, runs, _ = project
    data = json.loads(robustness(root, "llm", runs["llm"], "--format", "json"))
    across = {(row["system"], row["metric"]): row for row in data["across"]}
    for kind in ("inject", "exfil"):
        row = across[(f"hardened_{kind}", "injection_success")]
        assert row["against"] == f"plain_{kind}" and row["twins"] == "hardened vs plain"
        assert row["verdict"] == "better" and row["ci_high"] < 0  # fewer injections obeyed, with its interval
    text = robustness(root, "llm", runs["llm"], "--format", "markdown", "--table", "across")
    assert "hardened_inject" in text and "better" in text


def test_the_html_section_and_the_markdown_profile_name_every_operator(project):
    root, runs, _ = project
    section = section_html(robustness_section(read(root, "extractive", runs["extractive"])))
    markdown = robustness(root, "extractive", runs["extractive"], "--format", "markdown")
    for operator in ALL:
        assert f"<td>{operator}</td>" in section and f"| {operator}" in markdown
    for title in ("metrics per perturbation", "do robust groups stay robust?", "what breaks each system most"):
        assert title in section and title in markdown
