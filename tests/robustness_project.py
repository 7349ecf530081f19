"""A stored run with an unperturbed system and four perturbed ones (scripted rags under the ``perturbed`` contract:
options ``system``, ``operator``, ``seed``; ``trace["perturbation"]`` on every output), for the robustness profile's
tests (analysis, CLI, HTML report)."""

from __future__ import annotations

import json
import textwrap

from pydantic import BaseModel, ConfigDict

import ragassay
from ragassay import RAGOutput, RAGSystem, hookimpl
from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.results import read_run

N = 16  # samples: 8 GRAMMAR groups of 2 phrasings
CANARY = "ZQ-CANARY-1"


class ScriptedOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: str | None = None
    operator: dict | None = None
    seed: int = 0


def scripted_answer(operator: str | None, index: int) -> tuple[str, dict]:
    """The answer to sample ``index`` under ``operator`` and the perturbation record's operator fields."""
    if operator is None:
        return ("right" if index != 0 else "wrong"), {}
    if operator == "distractors":  # breaks 10 of the 15 right answers, groups g1..g5 fully
        return ("wrong" if 2 <= index < 12 else "right" if index else "wrong"), {"gold_present": True}
    if operator == "drop_gold":  # refuses on 3 of 4, makes up the rest
        return ("I don't know." if index % 4 else "right"), {"gold_present": False}
    if operator == "counterfactual":  # follows the changed context on even samples
        return ("new" if index % 2 == 0 else "right"), {"expected_answer": "new", "original_answer": "right"}
    if operator == "inject":  # obeys the planted instruction on one sample in four
        return (CANARY if index % 4 == 0 else "right"), {"canary": CANARY}
    raise ValueError(operator)


class ScriptedRAG(RAGSystem):
    """Answers from :func:`scripted_answer`; a perturbed variant records its perturbation in the trace."""

    name = "scripted"
    Options = ScriptedOptions

    async def answer(self, sample):
        index = int(sample.question_id[1:])
        operator = (self.options.operator or {}).get("name")
        answer, fields = scripted_answer(operator, index)
        trace = {}
        if operator is not None:
            trace["perturbation"] = {
                "operator": operator,
                "options": (self.options.operator or {}).get("options") or {},
                "seed": self.options.seed,
                "base": self.options.system,
                "target": "context",
                "changed": True,
                "details": {},
                **fields,
            }
        return RAGOutput(answer=answer, contexts=["c"], context_ids=["d1#0"], context_document_ids=["d1"], trace=trace)


class Plugin:
    @hookimpl
    def register_rags(self, register):
        register(ScriptedRAG)


def perturbed_system(name: str, operator: str, **options) -> str:
    op = json.dumps({"name": operator, "options": options}).replace('"name"', "name").replace('"options"', "options")
    op = op.replace(": ", " = ")
    for key in options:
        op = op.replace(f'"{key}"', key)
    return f'[systems.{name}]\nrag = {{ name = "t/scripted", options = {{ system = "base", operator = {op} }} }}\n'


def make_run(tmp_path):
    """Write and run the project; returns (folder, run id)."""
    rows = [
        {
            "question_id": f"q{i}",
            "question": f"question {i}",
            "reference_answers": ["right"],
            "reference_context_ids": ["d1"],
            "group_id": f"g{i // 2}",
        }
        for i in range(N)
    ]
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    systems = "".join(
        [
            '[systems.base]\nrag = "t/scripted"\n',
            perturbed_system("noisy", "distractors", k=3),
            perturbed_system("no_gold", "drop_gold"),
            perturbed_system("cf", "counterfactual"),
            perturbed_system("injected", "inject"),
        ]
    )
    (tmp_path / "ragassay.toml").write_text(
        textwrap.dedent("""
        [dataset]
        options = { path = "qa.jsonl" }
        [evaluation]
        metrics = ["refusal", "counterfactual_following", "injection_success"]
        judges = [{ name = "match", options = { mode = "exact" } }]
        """)
        + systems
    )
    summary = ragassay.run(tmp_path, plugins=[("t", Plugin())])
    return tmp_path, summary.run_id


def read(folder, run_id, payloads=True):
    store = Project(load_config(folder)).open_store()
    try:
        return read_run(store, run_id, payloads=payloads)
    finally:
        store.close()
