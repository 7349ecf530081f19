"""Runs for the HTML report tests: a real small run, and a run written through the store with planted text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragassay.models import Judgement, MetricValue, RAGOutput, Sample
from ragassay.store import open_store, store_url
from ragassay.store.database import UnitResult

PLANT = "<script>alert(1)</script>"
PLANTED_SYSTEM = f"evil{PLANT}"
PLANTED_ANSWER = f"The answer is {PLANT} and </script><b>bold</b>"
SAMPLES = 12


def write_planted_run(path: Path) -> tuple[object, str]:
    """A run of 2 systems (one named with a <script>) x 12 samples, 2 metrics and a judge with segment
    verdicts, written straight into a results store at ``path``; returns (store, run id)."""
    store = open_store(store_url(str(path), path.parent))
    spec = {"metrics": {"token_recall": {}, "latency_cost": {"direction": "lower"}}, "judges": {"match": {}}}
    samples = [
        Sample(
            question_id=f"q{i:02d}",
            question=f"Question {i} {PLANT}?",
            reference_answers=[f"ref {i}"],
            reference_context_ids=[f"doc{i}#0"],
            metadata={"kind": "short" if i % 3 else "long"},
        )
        for i in range(SAMPLES)
    ]
    store.create_run(
        {
            "id": "planted-run-0001",
            "fingerprint": "planted",
            "project": f"proj{PLANT}",
            "config_path": "x",
            "config_json": "{}",
            "spec_json": json.dumps(spec),
            "ragassay_version": "0",
            "sample_count": SAMPLES,
        },
        [("base", "{}"), (PLANTED_SYSTEM, "{}")],
        samples,
    )
    results = [
        _unit(system, k, sample, i)
        for k, system in enumerate(["base", PLANTED_SYSTEM])
        for i, sample in enumerate(samples)
    ]
    store.write_units("planted-run-0001", results)
    store.finish_run("planted-run-0001", "complete", [])
    return store, "planted-run-0001"


def _unit(system: str, k: int, sample: Sample, i: int) -> UnitResult:
    correct = (i + k) % 2 == 0
    answer = PLANTED_ANSWER if k == 1 else f"answer {i}"
    output = RAGOutput(
        answer=answer,
        contexts=[f"context text {i} {PLANT}", "other text"],
        context_ids=[f"doc{i}#0", f"doc{i + 1}#0"],
        context_document_ids=[f"doc{i}", f"doc{i + 1}"],
        latency_s=0.1 * (i + 1),
    )
    segments = [{"text": f"segment {PLANT}", "cites": [1], "round": 1, "correct": correct, "explanation": "why"}]
    return UnitResult(
        system,
        sample.question_id,
        "ok",
        output,
        metrics=[
            MetricValue(metric="token_recall", value=((i * 7 + k * 3) % 10) / 10),
            MetricValue(metric="latency_cost", value=None, unscored_reason=f"no cost {PLANT}")
            if i == 0
            else MetricValue(metric="latency_cost", value=float(i + k)),
        ],
        judgements=[
            Judgement(
                judge="match",
                verdict="correct" if correct else "incorrect",
                score=1.0 if correct else 0.0,
                explanation=f"judged {PLANT}",
                details={"segments": segments},
            )
        ],
    )


# -- a real headless Chromium (the report's and the serve pages' browser tests) --------------------------------

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
CHROMEDRIVER = shutil.which("chromedriver") or (
    "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CHROMIUM_MARKS = [  # pytestmark of a browser test module (with pytest.importorskip("selenium.webdriver"))
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian package: chromium)"),
    pytest.mark.skipif(CHROMEDRIVER is None, reason="chromedriver is not installed (Debian package: chromium-driver)"),
]


def chromium_driver():
    """A selenium driver of headless Chromium, 1280x2000, keeping the browser console's log."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument("--window-size=1280,2000")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
