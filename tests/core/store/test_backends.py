"""A results-store backend other than SQLAlchemy, through the seam: an in-memory store registered for
``memory://``, implementing :mod:`ragassay.store.protocols` (results, human labels and traces); a project runs on
it, resumes on it, and its run is read by :func:`ragassay.results.read_run`, compared, listed, shown, served,
labelled, and traces are imported into it and read back, all without a database."""

from __future__ import annotations

import copy
import dataclasses
import json
import threading
import time
from contextlib import AbstractContextManager

import pytest

from ragassay.errors import StoreError
from ragassay.models import JUDGEMENT_COLUMNS, METRIC_COLUMNS, OUTPUT_COLUMNS, Judgement, MetricValue, RAGOutput, Sample
from ragassay.store import open_store, register_backend, unregister_backend
from ragassay.store.database import StoredUnit
from ragassay.store.lease import LeaseHeldError
from ragassay.store.protocols import LabelStore, ResultsReader, ResultsWriter, RunLease, TraceStore
from ragassay.store.rows import judgement_row, metric_row, output_row


class MemoryLease(AbstractContextManager):
    """A lease held in the store's process (one holder per key)."""

    def __init__(self, held: set[str], key: str):
        self.held, self.key, self.notes, self.lost, self.run_id = held, key, [], None, None

    def attach(self, run_id: str) -> None:
        self.run_id = run_id

    def __exit__(self, *exc) -> None:
        self.held.discard(self.key)


class MemoryStore:
    """Tables as lists of row dicts (the rows :mod:`ragassay.store.rows` makes); a batch is applied to a copy
    and swapped in, so it is all or nothing."""

    worker_url = None  # workers cannot reach this process's memory: results come back to the driver
    concurrent_writers = False

    def __init__(self):
        self.tables = {"runs": [], "systems": [], "samples": [], "outputs": [], "metrics": [], "judgements": []}
        self.labels_given: list[dict] = []  # {"label": Label, "undone": bool} per label given, in order
        self.spans: dict[tuple[str, str], tuple[int, dict, str]] = {}  # (trace, span) -> (start, resource, JSON)
        self.next_id = 1
        self.held: set[str] = set()
        self.recoveries: list[str] = []
        self.lock = threading.Lock()
        self.closed = False

    # -- ResultsWriter --------------------------------------------------------------------------

    def lease(self, key: str, *, wait: bool = False, on_wait=None) -> MemoryLease:
        if key in self.held:
            raise LeaseHeldError(f"config {key[:12]} is being run by this process")
        self.held.add(key)
        return MemoryLease(self.held, key)

    def find_run(self, fingerprint: str):
        found = [r for r in self.tables["runs"] if r["fingerprint"] == fingerprint]
        return dict(max(found, key=lambda r: r["created_at"])) if found else None

    def create_run(self, run, systems, samples) -> None:
        now = time.time()
        self.tables["runs"].append({**run, "created_at": now, "updated_at": now, "status": "running"})
        self.tables["systems"] += [{"run_id": run["id"], "name": n, "spec_json": s} for n, s in systems]
        for sample in samples:
            pair = (sample.question_id, sample.model_dump_json()) if isinstance(sample, Sample) else sample
            self.tables["samples"].append({"run_id": run["id"], "question_id": pair[0], "sample_json": pair[1]})

    def finish_run(self, run_id: str, status: str, warnings) -> None:
        run = self._run(run_id)
        run.update(status=status, updated_at=time.time(), warnings_json=json.dumps(list(warnings)))

    def set_run_spec(self, run_id: str, spec_json: str) -> None:
        self._run(run_id)["spec_json"] = spec_json

    def has_outputs(self, run_id: str) -> bool:
        return any(o["run_id"] == run_id for o in self.tables["outputs"])

    def has_reusable(self, run_id: str, system_keys) -> bool:
        return bool(self.reusable_outputs(run_id, system_keys))

    def stored_units_of(self, run_id: str, systems, question_ids) -> dict:
        wanted_systems, wanted_ids = set(systems), set(question_ids)
        units = {}
        for o in self.tables["outputs"]:
            if o["run_id"] == run_id and o["system"] in wanted_systems and o["question_id"] in wanted_ids:
                units[(o["system"], o["question_id"])] = self._unit(o)
        return units

    def _unit(self, output: dict) -> StoredUnit:
        unit = StoredUnit(output["id"], output["status"], set(), set())
        for table, column, prefix in (("metrics", "metric", ""), ("judgements", "judge", "judge:")):
            for row in self.tables[table]:
                if row["output_id"] != output["id"]:
                    continue
                if row["repeat"]:
                    unit.repeats.add((prefix + row[column], row["repeat"]))
                    continue
                (unit.judges if prefix else unit.metrics).add(row[column])
                if row.get("calls", 0) + row.get("cache_hits", 0):
                    unit.calling.add(prefix + row[column])
        return unit

    def reusable_outputs(self, run_id: str, system_keys, sample_keys=None) -> dict:
        keys, samples = set(system_keys), None if sample_keys is None else set(sample_keys)
        found = {}
        for o in self.tables["outputs"]:
            if o["run_id"] != run_id and o["status"] == "ok" and o["system_key"] in keys:
                if samples is None or o["sample_key"] in samples:
                    key = (o["system_key"], o["sample_key"])
                    found[key] = max(found.get(key, 0), o["id"])
        return found

    def load_output(self, output_id: int) -> RAGOutput:
        return RAGOutput.model_validate_json(self._output(output_id)["output_json"])

    def reusable_values(self, output_id: int, context) -> dict:
        by_metric = {key: label for label, key in context.metric_keys.items()}
        by_judge = {key: label for label, key in context.judge_keys.items()}
        found = {}
        for value, row in self._values("metrics", output_id):
            if row["metric_key"] in by_metric:
                found[by_metric[row["metric_key"]]] = value.model_copy(update={"metric": by_metric[row["metric_key"]]})
        for judgement, row in self._values("judgements", output_id):
            if row["judge_key"] in by_judge:
                label = by_judge[row["judge_key"]]
                found[f"judge:{label}"] = judgement.model_copy(update={"judge": label})
        return found

    def metric_values(self, output_id: int) -> dict:
        return {v.metric: v.value for v, row in self._values("metrics", output_id) if not row["repeat"]}

    def metric_value_models(self, output_id: int) -> list:
        return [v for v, _ in self._values("metrics", output_id)]

    def judgement_models(self, output_id: int) -> list:
        return [j for j, _ in self._values("judgements", output_id)]

    def _values(self, table: str, output_id: int):
        for row in self.tables[table]:
            if row["output_id"] == output_id:
                details = json.loads(row["details_json"]) if row["details_json"] else {}
                if table == "metrics":
                    value = MetricValue(
                        metric=row["metric"],
                        value=row["value"],
                        unscored_reason=row["unscored_reason"],
                        details=details,
                        repeat=row["repeat"],
                    )
                else:
                    value = Judgement(
                        judge=row["judge"],
                        verdict=row["verdict"],
                        score=row["score"],
                        explanation=row["explanation"] or "",
                        judge_id=row["judge_id"] or "",
                        details=details,
                        repeat=row["repeat"],
                    )
                yield value, row

    def write_units(self, run_id: str, results, context, *, replace_existing: bool = False) -> None:
        with self.lock:
            tables, next_id = copy.deepcopy(self.tables), self.next_id
            now = time.time()
            replaced = {r.replaces for r in results if r.replaces is not None}
            if replace_existing:
                units = {(r.system, r.question_id) for r in results if r.output_id is None}
                replaced |= {
                    o["id"]
                    for o in tables["outputs"]
                    if o["run_id"] == run_id and (o["system"], o["question_id"]) in units
                }
            if replaced:
                tables["outputs"] = [o for o in tables["outputs"] if o["id"] not in replaced]
                for table in ("metrics", "judgements"):
                    tables[table] = [v for v in tables[table] if v["output_id"] not in replaced]
            for result in results:
                owner = result.output_id
                if owner is None:
                    owner, next_id = next_id, next_id + 1
                    tables["outputs"].append({"id": owner, **output_row(run_id, result, now, context.prices)})
                tables["metrics"] += [metric_row(owner, m, context) for m in result.metrics]
                tables["judgements"] += [judgement_row(owner, j, context) for j in result.judgements]
            self.tables, self.next_id = tables, next_id

    def close(self) -> None:
        self.closed = True

    # -- ResultsReader --------------------------------------------------------------------------

    def get_run(self, ref: str) -> dict:
        found = [r for r in self.tables["runs"] if r["id"].startswith(ref)]
        if len(found) != 1:
            raise StoreError(f"no single run matches '{ref}' in memory://")
        return dict(found[0])

    def list_runs(self) -> list[dict]:
        runs = []
        for run in sorted(self.tables["runs"], key=lambda r: -r["created_at"]):
            outputs = [o for o in self.tables["outputs"] if o["run_id"] == run["id"]]
            systems = sum(s["run_id"] == run["id"] for s in self.tables["systems"])
            failed = sum(o["status"] == "failed" for o in outputs)
            done = run["status"] == "complete" and len(outputs) >= systems * run["sample_count"]
            state = "complete" if done else "interrupted"
            runs.append({**run, "outputs": len(outputs), "failed": failed, "systems": systems, "state": state})
        return runs

    def run_and_holder(self, ref: str):
        return self.get_run(ref), None

    def run_systems(self, run_id: str) -> list[dict]:
        return [dict(s) for s in self.tables["systems"] if s["run_id"] == run_id]

    def sample_rows(self, run_id: str):
        return ((s["question_id"], s["sample_json"]) for s in self.tables["samples"] if s["run_id"] == run_id)

    def output_records(self, run_id: str, *, payloads: bool = False):
        for o in self.tables["outputs"]:
            if o["run_id"] == run_id:
                yield tuple(o.get(c) for c in OUTPUT_COLUMNS) + ((o["output_json"],) if payloads else ())

    def score_records(self, run_id: str, kind: str):
        table, columns = ("metrics", METRIC_COLUMNS) if kind == "metric" else ("judgements", JUDGEMENT_COLUMNS)
        outputs = {o["id"]: o for o in self.tables["outputs"] if o["run_id"] == run_id}
        for row in self.tables[table]:
            output = outputs.get(row["output_id"])
            if output is not None:
                yield (output["system"], output["question_id"]) + tuple(row.get(c) for c in columns[2:])

    def payload_records(self, run_id: str, question_ids) -> list:
        wanted = set(question_ids)
        return [
            (o["system"], o["question_id"], o["output_json"])
            for o in self.tables["outputs"]
            if o["run_id"] == run_id and o["question_id"] in wanted and o["output_json"] is not None
        ]

    def sample_records(self, run_id: str, question_id: str):
        raw = next(
            (
                s["sample_json"]
                for s in self.tables["samples"]
                if (s["run_id"], s["question_id"]) == (run_id, question_id)
            ),
            None,
        )
        outputs = [dict(o) for o in self.tables["outputs"] if (o["run_id"], o["question_id"]) == (run_id, question_id)]
        by_id = {o["id"]: o for o in outputs}
        mine = [
            [
                {"system": by_id[row["output_id"]]["system"], "question_id": question_id, **row}
                for row in self.tables[table]
                if row["output_id"] in by_id
            ]
            for table in ("metrics", "judgements")
        ]
        return raw, outputs, *mine, sum(o["run_id"] == run_id for o in self.tables["outputs"])

    # -- LabelStore -----------------------------------------------------------------------------

    def add_label(self, label) -> None:
        self.add_labels([label])

    def add_labels(self, labels, sources=None) -> int:
        new = []
        for i, label in enumerate(labels):
            self._check_label(label, sources[i] if sources else f"label {i + 1}")
            if label not in new and all(row["label"] != label for row in self.labels_given):
                new.append(label)
        self.labels_given += [{"label": label, "undone": False} for label in new]
        return len(new)

    def _check_label(self, label, where: str) -> None:
        if not any(r["id"] == label.run_id for r in self.tables["runs"]):
            raise StoreError(f"{where}: no run '{label.run_id}' in memory://")
        systems = [label.system] if label.system is not None else list(label.systems)
        answered = {
            o["system"]
            for o in self.tables["outputs"]
            if (o["run_id"], o["question_id"], o["status"]) == (label.run_id, label.sample_id, "ok")
        }
        if not set(systems) <= answered:
            raise StoreError(f"{where}: no answer of {systems} to sample '{label.sample_id}'")

    def labels(self, run_id: str, rubric=None, *, annotator=None) -> list:
        latest = {}
        for row in self.labels_given:  # in the order given: the last one of an item counts
            label = row["label"]
            if label.run_id == run_id and not row["undone"] and rubric in (None, label.rubric):
                if annotator in (None, label.annotator):
                    latest[(label.rubric, label.annotator, label.item_key)] = label
        return sorted(latest.values(), key=lambda label: label.labelled_at)

    def labels_of_samples(self, sample_ids, rubric=None) -> list:
        wanted = set(sample_ids)
        runs = {row["label"].run_id for row in self.labels_given if row["label"].sample_id in wanted}
        found = [label for run in sorted(runs) for label in self.labels(run, rubric) if label.sample_id in wanted]
        return sorted(found, key=lambda label: label.labelled_at)

    def undo_label(self, run_id: str, rubric: str, annotator: str):
        mine = [
            row
            for row in self.labels_given
            if not row["undone"]
            and (row["label"].run_id, row["label"].rubric, row["label"].annotator) == (run_id, rubric, annotator)
        ]
        if not mine:
            return None
        mine[-1]["undone"] = True
        return mine[-1]["label"]

    # -- TraceStore -----------------------------------------------------------------------------

    def write_spans(self, batches, *, counts: bool = False, wait_s=None):
        spans = dict(self.spans)  # applied whole, or not at all when a batch fails to come
        for batch in batches:
            for trace_id, span_id, _parent, start_ns, resource, span_json in batch:
                spans.setdefault((trace_id, span_id), (start_ns, resource, span_json))
        before, self.spans = self._span_counts(), spans
        return (*before, *self._span_counts()) if counts else None

    def _span_counts(self) -> tuple[int, int]:
        return len({trace_id for trace_id, _ in self.spans}), len(self.spans)

    def read_spans(self, trace_ids=None):
        wanted = None if trace_ids is None else set(trace_ids)
        rows = [
            (trace_id, start, span_id, resource, span_json)
            for (trace_id, span_id), (start, resource, span_json) in self.spans.items()
            if wanted is None or trace_id in wanted
        ]
        for trace_id, _start, span_id, resource, span_json in sorted(rows, key=lambda r: r[:3]):
            yield trace_id, span_id, resource, span_json

    def _run(self, run_id: str) -> dict:
        return next(r for r in self.tables["runs"] if r["id"] == run_id)

    def _output(self, output_id: int) -> dict:
        return next(o for o in self.tables["outputs"] if o["id"] == output_id)


@dataclasses.dataclass
class Opened:
    """The backend's opener: one store per URL (what a server would be), and the calls it got."""

    stores: dict[str, MemoryStore] = dataclasses.field(default_factory=dict)
    calls: list[tuple[str, bool]] = dataclasses.field(default_factory=list)

    def __call__(self, url: str, *, create: bool, key: str, retry_s: float) -> MemoryStore:
        self.calls.append((url, create))
        if url not in self.stores and not create:
            raise StoreError(f"no results at {url}. Run 'ragassay run CONFIG' first.")
        return self.stores.setdefault(url, MemoryStore())


@pytest.fixture
def memory_backend():
    opened = Opened()
    register_backend("memory", opened)
    yield opened
    unregister_backend("memory")


CONFIG = {
    "project": {"name": "on-memory", "results": "memory://scratch"},
    "corpus": {"paths": ["corpus/*"]},
    "systems": {
        "keyword": {"retriever": "keyword", "generator": "extractive", "options": {"top_k": 1}},
        "bm25": {"retriever": "bm25", "generator": "extractive", "options": {"top_k": 2}},
    },
    "evaluation": {"metrics": ["token_recall", "recall_at_k", "context_mrr"], "judges": ["match"]},
}
CORPUS = {
    "paris.txt": "Paris is the capital of France. The Eiffel Tower stands in Paris.",
    "berlin.txt": "Berlin is the capital of Germany. The Brandenburg Gate stands in Berlin.",
    "rome.txt": "Rome is the capital of Italy. The Colosseum stands in Rome.",
}
SAMPLES = [
    {"question_id": f"q{i}", "question": q, "reference_answers": [a], "reference_context_ids": [f"corpus/{doc}"]}
    for i, (q, a, doc) in enumerate(
        [
            ("What is the capital of France?", "Paris", "paris.txt"),
            ("What is the capital of Germany?", "Berlin", "berlin.txt"),
            ("Where does the Colosseum stand?", "Rome", "rome.txt"),
            ("Which city has the Eiffel Tower?", "Paris", "paris.txt"),
        ]
    )
]


def test_the_sqlalchemy_store_and_the_toy_store_both_declare_the_protocols(tmp_path):
    sql = open_store(f"sqlite:///{tmp_path / 'r.db'}")
    try:
        assert all(isinstance(sql, protocol) for protocol in (ResultsWriter, ResultsReader, LabelStore, TraceStore))
        assert sql.worker_url.startswith("sqlite:///") and sql.concurrent_writers is False
        with sql.lease("fp") as lease:
            assert isinstance(lease, RunLease)
    finally:
        sql.close()
    toy = MemoryStore()
    assert all(isinstance(toy, protocol) for protocol in (ResultsWriter, ResultsReader, LabelStore, TraceStore))


def test_a_project_runs_resumes_and_is_compared_on_a_registered_backend(tmp_path, memory_backend):
    from ragassay.analysis.comparison import compare
    from ragassay.results import read_run
    from ragassay.testing import run_project

    first = run_project(tmp_path, CONFIG, corpus=CORPUS, samples=SAMPLES)
    assert first.summary.completed == 8 and first.summary.failed == 0
    store = memory_backend.stores["memory://scratch"]
    assert not (tmp_path / "ragassay-results.db").exists()  # nothing went to a SQLite file
    assert len(store.tables["outputs"]) == 8 and len(store.tables["metrics"]) == 24
    assert first.judgements[("bm25", "q0", "match")] in ("correct", "incorrect")

    again = run_project(tmp_path, CONFIG, corpus=CORPUS, samples=SAMPLES)  # same config: a resume
    assert again.summary.run_id == first.summary.run_id and again.summary.skipped == 8
    assert len(store.tables["outputs"]) == 8  # nothing stored twice

    run = read_run(open_store("memory://scratch", create=False), first.summary.run_id)
    assert run.info.state == "complete" and run.systems == ["keyword", "bm25"]
    stored = [first.metrics[("keyword", q, "recall_at_k")] for q in run.question_ids]
    assert list(run.values("keyword", "recall_at_k")) == stored
    comparison = compare([run], baseline="keyword")
    assert [row.system for row in comparison.rows] == ["keyword", "bm25"]


def test_the_cli_lists_and_compares_a_run_on_the_backend(tmp_path, memory_backend):
    from click.testing import CliRunner

    from ragassay.cli.main import cli as main
    from ragassay.testing import run_project

    done = run_project(tmp_path, CONFIG, corpus=CORPUS, samples=SAMPLES)
    runner = CliRunner()
    listed = runner.invoke(main, ["runs", "--config", str(tmp_path / "ragassay.toml"), "--format", "json"])
    assert listed.exit_code == 0, listed.output
    assert [r["run"] for r in json.loads(listed.output)] == [done.summary.run_id]
    config = str(tmp_path / "ragassay.toml")
    compared = runner.invoke(main, ["compare", done.summary.run_id, "--config", config, "--format", "json"])
    assert compared.exit_code == 0, compared.output
    assert "recall_at_k" in compared.output


def _app_client(app):
    from starlette.testclient import TestClient

    return TestClient(app, base_url="http://127.0.0.1")


def test_show_and_the_served_pages_answer_on_the_backend(tmp_path, memory_backend):
    from click.testing import CliRunner

    from ragassay.cli.main import cli as main
    from ragassay.present.serve import create_app
    from ragassay.testing import run_project

    run_id = run_project(tmp_path, CONFIG, corpus=CORPUS, samples=SAMPLES).summary.run_id
    config = str(tmp_path / "ragassay.toml")
    shown = CliRunner().invoke(main, ["show", run_id, "q0", "--config", config, "--format", "json"])
    assert shown.exit_code == 0, shown.output
    detail = json.loads(shown.output)
    assert detail["sample"]["question"] == SAMPLES[0]["question"]
    assert [o["system"] for o in detail["outputs"]] == ["keyword", "bm25"]  # as the backend stored them
    for output in detail["outputs"]:
        assert output["output"]["answer"] and output["output"]["contexts"]
        assert [m["metric"] for m in output["metrics"]] == ["context_mrr", "recall_at_k", "token_recall"]
        assert [j["judge"] for j in output["judgements"]] == ["match"]
    printed = CliRunner().invoke(main, ["show", run_id, "q0", "--config", config])
    assert printed.exit_code == 0 and "judge match" in printed.output, printed.output
    with _app_client(create_app(open_store("memory://scratch", create=False), token=None)) as client:
        pages = ["/", f"/runs/{run_id}", f"/runs/{run_id}/breakdowns", f"/runs/{run_id}/cost"]
        pages += [f"/runs/{run_id}/failures", f"/runs/{run_id}/samples/q0"]
        for page in pages:
            answer = client.get(page)
            assert answer.status_code == 200, (page, answer.text[-500:])
        assert run_id[:12] in client.get("/").text and "Paris" in client.get(f"/runs/{run_id}/samples/q0").text


def test_a_label_posted_in_the_labelling_app_is_stored_in_the_backend(tmp_path, memory_backend):
    import re

    from ragassay.labels import load_rubric
    from ragassay.labels.queue import run_items
    from ragassay.present.serve.label_app import LabelQueue, labelling_app
    from ragassay.results import read_labels, read_run
    from ragassay.testing import run_project

    run_id = run_project(tmp_path, CONFIG, corpus=CORPUS, samples=SAMPLES).summary.run_id
    store = open_store("memory://scratch", create=False)
    rubric = load_rubric("correct")
    queue = LabelQueue(store, run_id, rubric, "ann", run_items(read_run(store, run_id), rubric, sample=3, seed=1))
    with _app_client(labelling_app(queue, token=None)) as client:
        page = client.get("/label/item/0")
        assert page.status_code == 200 and queue.items[0].sample_id in {s["question_id"] for s in SAMPLES}
        form = {name: re.search(rf'name="{name}" value="([^"]+)"', page.text).group(1) for name in ("csrf", "item")}
        posted = client.post("/label/item/0", data={**form, "value": "1"}, follow_redirects=False)
        assert posted.status_code == 303 and posted.headers["location"] == "/label/item/1"
    stored = read_labels(store, run_id)
    assert [(label.sample_id, label.system, label.value) for label in stored] == [
        (queue.items[0].sample_id, queue.items[0].system, 1.0)
    ]
    assert queue.state().done == 1


def test_traces_imported_into_the_backend_are_read_back(tmp_path, memory_backend):
    from click.testing import CliRunner

    from ragassay.cli.main import cli as main
    from ragassay.traces import read_traces

    from otlp_traces import genai_trace, openinference_trace
    from otlp_traces import request as otlp_request

    spans = openinference_trace(1, "Question one?", "answer one") + genai_trace(2, "Question two?", "answer two")
    (tmp_path / "t.json").write_text(json.dumps(otlp_request(spans)), encoding="utf-8")
    (tmp_path / "ragassay.toml").write_text('[project]\nname = "traced"\nresults = "memory://traces"\n')
    runner = CliRunner()
    imported = runner.invoke(main, ["traces", "import", str(tmp_path / "t.json"), "--config", str(tmp_path), "--json"])
    assert imported.exit_code == 0, imported.output
    counts = json.loads(imported.output)
    assert (counts["traces_new"], counts["spans_new"], counts["mappable"]) == (2, len(spans), 2)
    again = runner.invoke(main, ["traces", "import", str(tmp_path / "t.json"), "--config", str(tmp_path), "--json"])
    assert json.loads(again.output)["spans_already_stored"] == len(spans)  # stored once
    traces = list(read_traces(open_store("memory://traces", create=False)))
    assert [(t.question, t.answer) for t in traces] == [
        ("Question one?", "answer one"),
        ("Question two?", "answer two"),
    ]
    assert not (tmp_path / "ragassay-results.db").exists()


def test_a_ray_run_on_a_store_workers_cannot_open_refuses_workers_writing():
    from ragassay.config import RaySection
    from ragassay.engine.ray_executor import RayExecutor
    from ragassay.errors import ConfigError

    with pytest.raises(ConfigError, match='write = "workers"'):
        RayExecutor(RaySection(write="workers"), workers_can_write=False)


def test_registering_a_scheme_twice_or_a_bad_scheme_is_refused(memory_backend):
    with pytest.raises(ValueError, match="already registered"):
        register_backend("memory", Opened())
    with pytest.raises(ValueError, match="lowercase URL scheme"):
        register_backend("Mem ory", Opened())
    assert open_store("memory://other").list_runs() == []
    assert memory_backend.calls[-1] == ("memory://other", True)
