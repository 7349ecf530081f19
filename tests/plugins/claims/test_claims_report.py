"""``ragassay show`` and the HTML report's failure browser mark the claims of a replayed RAGChecker result (the
reference claims retrieved / used / missed, the response claims entailed / hallucinated / from self-knowledge,
with the supporting chunk), all text escaped."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

import ragassay
from ragassay.cli.main import cli
from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.present.html_report import build_report

from claims_llm import REFERENCE
from conftest import write_project

PLANTED = ["[bold]Nile[/bold]", "is", "<b>longest</b> river"]


def replayed_run(tmp_path):
    data = json.loads(REFERENCE.read_text(encoding="utf-8"))
    data["results"][0]["response_claims"][0] = PLANTED  # markup in a claim: must stay text
    (tmp_path / "rc.json").write_text(json.dumps(data), encoding="utf-8")
    metrics = ["rc_precision_offline", "rc_hallucination_offline", "rc_claim_recall_offline"]
    config = (
        '[dataset]\nsource = "ragchecker"\noptions = { path = "rc.json" }\n'
        '[systems.rc]\nrag = "ragchecker"\noptions = { path = "rc.json" }\n'
        f"[evaluation]\nmetrics = {json.dumps(metrics)}\n"
    )
    path = write_project(tmp_path, config, qa=[], docs={})
    return path, ragassay.run(path)


def test_show_and_the_report_mark_every_claim(tmp_path):
    path, run = replayed_run(tmp_path)
    shown = CliRunner().invoke(cli, ["show", run.run_id, "0", "--config", str(path)], env={"COLUMNS": "300"})
    assert shown.exit_code == 0, shown.output
    text = shown.output
    assert "claims of the reference answer (22, checks stored with rc_precision_offline)" in text
    assert "claims of the response (11" in text
    assert "hallucinated: (Amazon River; length; 4,350 miles)" in text
    assert (
        "retrieved, used [chunk 000]: (The Nile; has historically been considered; the longest river in the world)"
        in text
    )
    assert "self-knowledge: (Nile; stretches; approximately 6,650 kilometers)" in text
    assert "missed: (The Nile's drainage basin; includes; Tanzania)" in text
    assert "(shown as claims below" in text and '"gt_answer_claims"' not in text
    assert "[bold]Nile[/bold]; is; <b>longest</b> river" in text  # escaped for rich: printed as written

    store = Project(load_config(path)).open_store(create=False)
    try:
        page = build_report(store, [run.run_id])
    finally:
        store.close()
    assert "<b>longest</b>" not in page and "cl-bad" in page
    block = re.search(r'<script type="application/json" id="browser-data">(.*?)</script>', page, re.S)
    data = json.loads(block.group(1))
    entry = next(s for sample in data["samples"] if sample["id"] == "0" for s in sample["systems"])
    claims = entry["claims"]
    assert claims["metric"] == "rc_precision_offline" and len(claims["reference"]) == 22
    marks = {c["text"]: (c["mark"], c["tone"], c["chunk"]) for c in claims["response"]}
    assert marks["(Amazon River; length; 4,350 miles)"] == ("hallucinated", "bad", None)
    assert marks["(Amazon River; length; about 7,000 kilometers)"][0] in ("entailed", "noise")
