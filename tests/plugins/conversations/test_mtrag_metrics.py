"""MTRAG's algorithmic metrics equal what MTRAG's own code computes on MTRAG's sample data.

MTRAG's scorers (``scripts/evaluation/run_algorithmic.py`` at cc5b1d4) are vendored unchanged in
tests/vendor/mtrag/ (only its Hub-loading imports replaced, see its header); their ``score`` function is run with
the evaluators of MTRAG's ``config.yaml`` on ``sample_data/responses-10.jsonl``, and ragassay's metrics on the same
tasks read by the ``mtrag_tasks`` source.
"""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import pytest
import yaml

from ragassay.components import ComponentContext
from ragassay.models import MetricResult, RAGOutput, Sample, Unscored
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.conversations.mtrag import MtragTasksSource
from ragassay.plugins.conversations.mtrag_metrics import (
    METRICS,
    MtragExtractivenessRougeL,
    MtragKPrecision,
    MtragRecall,
    MtragRougeL,
    clean_words,
    extractiveness_rouge,
    k_precision,
    normalize_text,
    recall,
    rouge_l,
)

pytest.importorskip("bs4", reason="MTRAG's code needs beautifulsoup4 (pip install beautifulsoup4 lxml rouge-score)")
pytest.importorskip("lxml", reason="MTRAG's code parses with lxml")
pytest.importorskip("rouge_score", reason="MTRAG's RougeL is rouge_score's")

TESTS = Path(__file__).resolve().parents[2]
VENDORED = TESTS / "vendor" / "mtrag"
RESPONSES = TESTS / "data" / "mtrag" / "sample_data" / "responses-10.jsonl"
#: MTRAG's algorithmic evaluators (config.yaml) by ragassay's metric and ``against``; K-Precision and Recall against
#: the passages are the script's own functions with the other target config.yaml uses.
EVALUATORS = {
    (MtragRecall, "reference"): ("Recall", "recall", "target"),
    (MtragRougeL, "reference"): ("RougeL_stemFalse", "rouge_l", "target"),
    (MtragExtractivenessRougeL, "contexts"): ("Extractiveness_RougeL", "extractiveness_rouge", "passage"),
    (MtragKPrecision, "contexts"): ("KPrec_passage", "k_prec", "passage"),
    (MtragKPrecision, "reference"): ("KPrec_target", "k_prec", "target"),
    (MtragRecall, "contexts"): ("Recall_passage", "recall", "passage"),
}


@pytest.fixture(scope="module")
def mtrag():
    spec = importlib.util.spec_from_file_location("mtrag_run_algorithmic", VENDORED / "run_algorithmic.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def theirs(mtrag):
    """Every task of responses-10.jsonl scored by MTRAG's ``score`` with the evaluators above."""
    config = yaml.safe_load((VENDORED / "config.yaml").read_text(encoding="utf-8"))
    evaluators = {}
    for name, func, target in EVALUATORS.values():
        entry = config.get(name, {"func": func, "prediction": "prediction", "target": target})
        assert (entry["func"], entry["target"]) == (func, target)
        evaluators[name] = {**entry, "func": getattr(mtrag, func)}
    scored = {}
    for line in RESPONSES.read_text(encoding="utf-8").splitlines():
        instance = json.loads(line)
        mtrag.score(instance=instance, metrics=evaluators)
        scored[instance["task_id"]] = instance
    return scored


@pytest.fixture(scope="module")
def ours():
    """The same tasks read by the mtrag_tasks source: (sample, output) with MTRAG's prediction and contexts."""
    source = MtragTasksSource(
        MtragTasksSource.Options(path=str(RESPONSES)), context=ComponentContext(project_dir=RESPONSES.parent)
    )
    predictions = {
        json.loads(line)["task_id"]: json.loads(line)["predictions"][0]["text"]
        for line in RESPONSES.read_text(encoding="utf-8").splitlines()
    }
    pairs = {}
    for sample in source.samples():
        task_id = sample.attributes["mtrag_task_id"]
        pairs[task_id] = (sample, RAGOutput(answer=predictions[task_id], contexts=sample.reference_contexts))
    return pairs


@pytest.mark.parametrize("metric, against", list(EVALUATORS), ids=lambda x: getattr(x, "name", x))
def test_each_value_equals_mtrags_script(theirs, ours, metric, against):
    name = EVALUATORS[metric, against][0]
    assert set(theirs) == set(ours) and len(ours) == 10
    scored = unscored = 0
    for task_id, instance in theirs.items():
        sample, output = ours[task_id]
        result = metric(metric.Options(against=against)).score(sample, output)
        values = instance["metrics"].get(name)
        if values is None:  # MTRAG stores nothing without targets or passages (turn 1 has no passage)
            assert isinstance(result, Unscored), (task_id, result)
            unscored += 1
            continue
        assert isinstance(result, MetricResult)
        assert result.details["values"] == pytest.approx(values, abs=1e-9, rel=0)
        expected = values[0] if against == "reference" else max(values)  # rb_agg: [0] per target, max per passage
        assert result.value == pytest.approx(expected, abs=1e-9, rel=0)
        scored += 1
    assert scored >= 9 and unscored == (1 if against == "contexts" else 0)


def test_values_spread_so_the_comparison_means_something(theirs):
    for name in ("Recall", "RougeL_stemFalse", "Extractiveness_RougeL", "KPrec_passage"):
        values = {round(v, 6) for inst in theirs.values() for v in inst["metrics"].get(name, [])}
        assert len(values) >= 5, (name, values)


def test_every_prediction_against_every_passage_and_target(mtrag, theirs):
    """The scorers on all 10 predictions x all passages and targets of the file (more pairs than the tasks pair)."""
    predictions = [inst["predictions"][0]["text"] for inst in theirs.values()]
    texts = [c["text"] for inst in theirs.values() for c in inst["contexts"]]
    texts += [t["text"] for inst in theirs.values() for t in inst["targets"]]
    for prediction in predictions:
        for text in texts:
            assert recall(prediction, text) == pytest.approx(mtrag.recall(prediction, text), abs=1e-9, rel=0)
            assert k_precision(prediction, text) == pytest.approx(mtrag.k_prec(prediction, text), abs=1e-9, rel=0)
            assert rouge_l(prediction, text) == pytest.approx(mtrag.rouge_l(prediction, text), abs=1e-9, rel=0)
            theirs_ext = mtrag.extractiveness_rouge(prediction, text)
            assert extractiveness_rouge(prediction, text) == pytest.approx(theirs_ext, abs=1e-9, rel=0)


ALPHABET = "aAbZ 09é中_.,!?'\"<>&;#\n\r\t\x0b\x0c\x00\x1c\x85\xa0\u2028-"


def test_normalisation_and_cleaning_equal_theirs_on_awkward_text(mtrag):
    """Seeded random strings of punctuation, HTML characters, control and Unicode white space."""
    rng = random.Random(39)
    for _ in range(3000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 14)))
        assert normalize_text(text) == mtrag.normalize_text(text), repr(text)
        assert clean_words(text) == mtrag.clean_html(mtrag.strip_newline_words(text)), repr(text)
        other = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 14)))
        assert extractiveness_rouge(text, other) == mtrag.extractiveness_rouge(text, other), (text, other)


def test_edge_cases_by_hand():
    assert recall("The cat sat.", "a cat") == 1.0  # articles and punctuation dropped: 'cat' of ['cat']
    assert k_precision("The cat sat.", "a cat") == 0.5  # 'cat' of ['cat', 'sat']
    assert recall("", "cat") == 0.0 and k_precision("dog", "cat") == 0.0
    assert rouge_l("a b c d", "a c d") == pytest.approx(2 * 0.75 * 1.0 / 1.75)
    assert extractiveness_rouge("It said: Hello, World!", "hello world") == 1.0  # the passage occurs in the answer
    assert extractiveness_rouge("anything", "") == 1.0  # as MTRAG's: an empty passage occurs everywhere


def test_unscored_without_references_or_contexts():
    sample = Sample(question_id="q", question="q?")
    output = RAGOutput(answer="an answer")
    for metric in METRICS:
        for against in ("reference", "contexts"):
            result = metric(metric.Options(against=against)).score(sample, output)
            assert isinstance(result, Unscored) and "no " in result.reason


def test_requires_follows_against():
    assert MtragRecall.required(MtragRecall.Options()) == {"answer", "reference_answers"}
    assert MtragKPrecision.required(MtragKPrecision.Options()) == {"answer", "contexts"}
    assert MtragExtractivenessRougeL.Options().against == "contexts"


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: m.name)
def test_registered_through_entry_point(metric):
    info = load_plugins().registry.get("metric", metric.name)
    assert info.cls is metric and info.plugin == "conversations_mtrag_metrics"
    assert "run_algorithmic.py" in metric.source and "cc5b1d4" in metric.source
    assert metric.value_range == (0.0, 1.0) and metric.direction == "higher"
