"""The contract judges and reports build on: nested references resolved at plan time, metric results with
details, direction and range, derived metrics, evaluation cost, outputs reused across runs, reference-id checks.

The systems here are scripted in-process components (the far side of the runner); the runner, store, config
resolution and scoring are the real ones.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest
from pydantic import BaseModel, ConfigDict, Field

from ragassay import DerivedMetric, Metric, MetricResult, RAGSystem, Retriever, RetrieverRef, ScoredChunk, hookimpl
from ragassay.analysis.comparison import compare
from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.engine.runner import Runner, plan_run
from ragassay.errors import ComponentNotFoundError, ConfigError
from ragassay.models import RAGOutput
from ragassay.plugin_manager import load_plugins
from ragassay.results import read_run

from conftest import QA, write_project


class CountingRAG(RAGSystem):
    """Answers with the first reference answer; counts answers across instances (to see what was re-run)."""

    name = "counting"
    calls = 0

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")
        variant: int = Field(0, description="Changes nothing but the spec.")
        empty: bool = Field(False, description="Return no contexts.")

    async def answer(self, sample):
        type(self).calls += 1
        contexts = [] if self.options.empty else list(sample.reference_contexts)
        ids = [] if self.options.empty else list(sample.reference_context_ids)
        return RAGOutput(answer=(sample.reference_answers or [""])[0], contexts=contexts, context_ids=ids)


class Fixed(Retriever):
    """Returns one fixed chunk."""

    name = "fixed"

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")
        k1: float = Field(1.0, ge=0, description="Unused; validated.")

    def index(self, chunks):
        self.chunk = chunks[0]

    def retrieve(self, query, k):
        return [ScoredChunk(chunk=self.chunk, score=1.0, rank=1)]


class Stack(Retriever):
    """Made of other retrievers (typed nested references)."""

    name = "stack"

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")
        retrievers: list[RetrieverRef] = Field(description="Inner retrievers.")

    def index(self, chunks):
        self.parts = [self.context.build(ref) for ref in self.options.retrievers]
        for part in self.parts:
            part.index(chunks)

    def retrieve(self, query, k):
        return self.parts[0].retrieve(query, k)


class Length(Metric):
    """Answer length in words, lower is better, with the words as details."""

    name = "length"
    direction = "lower"
    value_range = (0.0, None)

    def score(self, sample, output):
        return MetricResult(value=len(output.answer.split()), details={"words": output.answer.split()})


class Overflow(Metric):
    """Returns 2.0 although it declares [0, 1]."""

    name = "overflow"
    value_range = (0.0, 1.0)

    def score(self, sample, output):
        return 2.0


class Half(DerivedMetric):
    """Half the sum of two metrics (a formula over metrics of the same unit)."""

    name = "half"
    value_range = (0.0, None)

    def inputs(self):
        return ["exact_match", "kit/length"]

    def derive(self, values):
        return (values["exact_match"] + values["kit/length"]) / 2


class Kit:
    @hookimpl
    def register_rags(self, register):
        register(CountingRAG)

    @hookimpl
    def register_retrievers(self, register):
        register(Fixed)
        register(Stack)

    @hookimpl
    def register_metrics(self, register):
        register(Length)
        register(Overflow)
        register(Half)


@pytest.fixture
def kit():
    CountingRAG.calls = 0
    return load_plugins([("kit", Kit())])


HEAD = """
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = { path = "qa.jsonl" }
"""


def run(path, kit, **kwargs):
    loaded = load_config(path)
    plan = plan_run(loaded, kit.registry)
    store = Project(loaded).open_store()
    try:
        summary = asyncio.run(Runner(plan, store).run(**kwargs))
        return summary, compare([read_run(store, summary.run_id)]), plan
    finally:
        store.close()


def rows(path, sql):
    con = sqlite3.connect(path.parent / "ragassay-results.db")
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


# -- nested references ------------------------------------------------------------------------------------


def test_bad_nested_option_fails_at_plan_time_with_the_key_path(tmp_path, kit):
    path = write_project(
        tmp_path,
        HEAD
        + """
        [systems.s]
        retriever = { name = "kit/stack", options = { retrievers = ["kit/fixed", { name = "kit/fixed", options = { k1 = -1 } }] } }
        generator = "extractive"
    """,
    )
    with pytest.raises(
        ConfigError,
        match=r"systems\.s\.retriever\.options\.retrievers\[1\]\.options\.k1: .*"
        r"greater than or equal to 0",
    ):
        plan_run(load_config(path), kit.registry)
    assert not (tmp_path / "ragassay-results.db").exists()  # nothing ran, nothing was stored


def test_unknown_nested_component_fails_at_plan_time(tmp_path, kit):
    path = write_project(
        tmp_path,
        HEAD
        + """
        [systems.s]
        retriever = { name = "kit/stack", options = { retrievers = ["kit/fixd"] } }
        generator = "extractive"
    """,
    )
    with pytest.raises(
        ComponentNotFoundError,
        match=r"retrievers\[0\]: no retriever named 'kit/fixd'.*"
        r"Did you mean 'kit/fixed'",
    ):
        plan_run(load_config(path), kit.registry)


def test_nested_components_are_in_the_spec_and_the_fingerprint(tmp_path, kit):
    path = write_project(
        tmp_path,
        HEAD
        + """
        [systems.s]
        retriever = { name = "kit/stack", options = { retrievers = ["kit/fixed"] } }
        generator = "extractive"
    """,
    )
    plan = plan_run(load_config(path), kit.registry)
    retriever = plan.systems[0].spec().parts["retriever"]
    nested = retriever.components["retrievers[0]"]
    assert (nested.kind, nested.name, nested.options) == ("retriever", "kit/fixed", {"k1": 1.0})
    before = plan.fingerprint()
    # the same config with an upgraded inner plugin must not resume the old run
    info = kit.registry.get("retriever", "kit/fixed")
    kit.registry._by_kind["retriever"]["kit/fixed"] = type(info)(**{**info.__dict__, "version": "9.9"})
    assert plan_run(load_config(path), kit.registry).fingerprint() != before


# -- metric results, direction, range, derived ---------------------------------------------------------


def test_details_direction_range_and_derived_metrics(tmp_path, kit):
    path = write_project(
        tmp_path,
        HEAD
        + """
        [systems.short]
        rag = "kit/counting"
        [systems.long]
        rag = "testkit/echo"
        [evaluation]
        metrics = ["exact_match", "kit/length", "kit/overflow", { name = "kit/half", label = "half" }]
    """.replace('rag = "testkit/echo"', 'rag = "kit/counting"\noptions = { variant = 1 }'),
    )
    summary, comparison, _ = run(path, kit)
    assert summary.failed == 0
    details = rows(path, "select details_json from metric_values where metric = 'kit/length'")
    assert json.loads(details[0][0])["words"]  # the breakdown is stored
    reasons = rows(path, "select distinct unscored_reason from metric_values where metric = 'kit/overflow'")
    assert reasons == [("error: metric returned 2.0, outside its declared range [0, 1]",)]
    # derived: (exact_match + length) / 2, computed from the same unit's values
    pairs = rows(
        path,
        "select m1.value, m2.value, d.value from metric_values m1 join metric_values m2 on "
        "m1.output_id = m2.output_id join metric_values d on d.output_id = m1.output_id where "
        "m1.metric = 'exact_match' and m2.metric = 'kit/length' and d.metric = 'half'",
    )
    assert pairs and all(abs(d - (a + b) / 2) < 1e-12 for a, b, d in pairs)
    assert comparison.direction("kit/length") == "lower" and comparison.direction("exact_match") == "higher"
    lengths = [row.cells["kit/length"].mean for row in comparison.rows]
    assert comparison.best("kit/length") == min(lengths)


def test_derived_metric_without_its_inputs_is_a_config_error(tmp_path, kit):
    path = write_project(
        tmp_path,
        HEAD
        + """
        [systems.s]
        rag = "kit/counting"
        [evaluation]
        metrics = ["exact_match", "kit/half"]
    """,
    )
    with pytest.raises(
        ConfigError,
        match=r"evaluation.metrics\[1\]: derived metric 'kit/half' is computed from "
        r"kit/length",
    ):
        plan_run(load_config(path), kit.registry)


# -- outputs reused across runs -------------------------------------------------------------------------------


def test_adding_a_system_reuses_the_unchanged_ones_and_identical_systems_run_once(tmp_path, kit):
    one = (
        HEAD
        + """
        [systems.a]
        rag = "kit/counting"
        [evaluation]
        metrics = ["exact_match"]
    """
    )
    path = write_project(tmp_path, one)
    first, _, _ = run(path, kit)
    assert CountingRAG.calls == 3 and first.reused == 0
    path.write_text(
        path.read_text().replace(
            "[evaluation]",
            """[systems.b]
rag = { name = "kit/counting", options = { variant = 1 } }
[systems.a_again]
rag = "kit/counting"
[evaluation]""",
        )
    )
    second, comparison, _ = run(path, kit)
    assert second.run_id != first.run_id
    # a: copied from the first run; a_again: the same spec as a, copied too; b: new, answered
    assert CountingRAG.calls == 3 + 3 and second.reused == 6
    assert {row.system: row.cells["exact_match"].n for row in comparison.rows} == {"a": 3, "b": 3, "a_again": 3}
    reused = rows(
        path,
        f"select system, count(reused_from) from outputs where run_id = '{second.run_id}' "
        "group by system order by system",
    )
    assert reused == [("a", 3), ("a_again", 3), ("b", 0)]


def test_identical_systems_in_one_new_run_answer_once(tmp_path, kit):
    path = write_project(
        tmp_path,
        HEAD
        + """
        [systems.a]
        rag = "kit/counting"
        [grid.same]
        extends = "a"
        "options.variant" = [0, 1]
        [evaluation]
        metrics = ["exact_match"]
    """,
    )
    summary, comparison, _ = run(path, kit)
    # a and same[variant=0] have the same spec: 3 answers for them, 3 for same[variant=1]
    assert CountingRAG.calls == 6 and summary.completed == 9 and summary.failed == 0
    assert all(row.cells["exact_match"].n == 3 for row in comparison.rows)


def test_new_reuses_nothing(tmp_path, kit):
    path = write_project(
        tmp_path,
        HEAD
        + """
        [systems.a]
        rag = "kit/counting"
        [evaluation]
        metrics = ["exact_match"]
    """,
    )
    run(path, kit)
    summary, _, _ = run(path, kit, new=True)
    assert CountingRAG.calls == 6 and summary.reused == 0


# -- silent zeros become visible ------------------------------------------------------------------------------


def test_reference_ids_matching_nothing_are_an_error_before_any_work(tmp_path, kit):
    qa = [
        {**sample, "reference_context_ids": [sample["reference_context_ids"][0].split("/")[1].split(".")[0]]}
        for sample in QA
    ]  # "alpha" for the document "corpus/alpha.md"
    path = write_project(
        tmp_path,
        HEAD
        + """
        [systems.a]
        rag = "kit/counting"
    """,
        qa=qa,
    )
    with pytest.raises(ConfigError) as error:
        plan_run(load_config(path), kit.registry)
    message = str(error.value)
    assert "none of the dataset's 3 reference context ids matches a corpus document id" in message
    assert "'alpha', 'beta'" in message and "'corpus/alpha.md', 'corpus/beta.md'" in message
    assert "did you mean 'corpus/alpha.md'" in message and "relative to the config's folder" in message


def test_some_unmatched_reference_ids_are_a_stored_warning(tmp_path, kit):
    qa = [dict(QA[0], reference_context_ids=["corpus/alpha.md", "corpus/alpha-typo.md"]), QA[1], QA[2]]
    path = write_project(
        tmp_path,
        HEAD
        + """
        [systems.a]
        rag = "kit/counting"
    """,
        qa=qa,
    )
    summary, _, _ = run(path, kit)
    assert any("1 of 4 reference context ids (in 1 samples) match no corpus document" in w for w in summary.warnings)
    stored = json.loads(rows(path, "select warnings_json from runs")[0][0])
    assert stored == summary.warnings


def test_empty_retrievals_are_counted_and_warned_about(tmp_path, kit):
    path = write_project(
        tmp_path,
        HEAD
        + """
        [systems.full]
        rag = "kit/counting"
        [systems.empty]
        rag = { name = "kit/counting", options = { empty = true } }
    """,
    )
    summary, comparison, _ = run(path, kit)
    assert {row.system: row.retrievals for row in comparison.rows} == {"full": 3, "empty": 0}
    assert "empty: 3 output(s) came back with no retrieved context" in " ".join(summary.warnings)


def test_dataset_limit_streams_the_source(tmp_path, kit):
    qa = QA + [{"question_id": "broken"}]  # a bad line after the limit is never read
    path = write_project(
        tmp_path,
        HEAD.replace("[dataset]", "[dataset]\nlimit = 2")
        + """
        [systems.a]
        rag = "kit/counting"
    """,
        qa=qa,
    )
    summary, _, plan = run(path, kit)
    assert len(plan.samples) == 2 and summary.completed == 2


def test_generating_needs_no_systems_and_uses_the_llm_section(tmp_path):
    from ragassay.engine.project import Project

    path = write_project(
        tmp_path,
        HEAD
        + """
        [llm]
        cache_path = "elsewhere/responses.db"
    """,
    )
    project = Project.load(path)
    assert [s.question_id for s in project.samples()] == ["q1", "q2", "q3"]
    assert project.context.settings["llm"]["cache_url"].endswith("elsewhere/responses.db")
    with pytest.raises(ConfigError, match="no systems declared"):
        project.require_systems()


def test_chunk_ids_count_as_matching_their_document():
    from ragassay.engine.reference_check import check_reference_ids
    from ragassay.models import Document, Sample

    check = check_reference_ids(
        [Sample(question_id="q", question="?", reference_context_ids=["a.md#2", "b.md"])],
        [Document(id="a.md", text="x")],
    )
    assert check.unmatched == ["b.md"] and check.matched == 1
