"""The live page of a watch in ``ragassay serve``: a watch session over imported traces, whose answers degrade after
a version change while a loopback judge is held to its hourly budget, then the page shows the watched metric with
its band and confidence sequence, the alarm with the version (a hostile string, escaped) and worst traces whose
links resolve, the judge spend against the budget with the traces unscored for budget; it follows the watch's
next commit without a restart; a store without a watch says so."""

from __future__ import annotations

import json
import re

import pytest

from ragassay.cli.watch_cmd import load_statistics as statistics
from ragassay.engine.project import Project
from ragassay.traces.ingest import import_paths
from ragassay.watch import StopRule, watch

from otlp_traces import openinference_trace, request, tid
from serve_helpers import client, text_of
from servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("opentelemetry.proto")
pytest.importorskip("openai")

QUESTION = "Which river flows through the old town of Prague in year {n}"  # each trace its own judge call
GOOD = "The river Vltava flows through the old town of Prague in year {n}."
BAD = "I cannot say for year {n}."
BEFORE, DEGRADED, CALLS_PER_HOUR = 10, 40, 4
HOSTILE = '2<script>alert("v")</script>'
NAME = 'prod <b>"live"</b>'
CONFIG = """
[project]
name = "watched"

[llm.prices."gpt-4o-mini"]
input_per_million = 1.0
output_per_million = 10.0

[watch]
name = {name}
metrics = ["answer_relevance_token_recall", {{ name = "answer_relevancy", options = {{ generator = {{ name = "openai", options = {{ model = "gpt-4o-mini", base_url = "{url}/v1" }} }} }} }}]
quiet_s = 0
poll_s = 0.05
batch = 5
budget = {{ calls_per_hour = {calls}, usd_per_day = 1000.0 }}
reference = {{ target = {{ answer_relevance_token_recall = 0.9, answer_relevancy = 0.5 }}, margin = 0.05 }}
sinks = {{ stderr = false }}
"""


def _relevant(request):
    return Turn(text=json.dumps({"feedback": "On topic.", "subject_matter": 1, "focus": 1}), usage=(50, 10, 0))


def _import(folder, project, traces: list[tuple[int, str, str]], name: str) -> None:
    """Traces one minute apart (trace n starts n minutes after T0)."""
    lines = [
        json.dumps(
            request(openinference_trace(n, QUESTION.format(n=n), answer.format(n=n), start=n * 60_000), version=version)
        )
        for n, version, answer in traces
    ]
    (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = project.open_store()
    try:
        import_paths(store, [folder / f"{name}.jsonl"])
    finally:
        store.close()


@pytest.fixture(scope="module")
def watched(tmp_path_factory):
    """A project whose watch scored BEFORE good traces of version 1 and DEGRADED bad ones of version HOSTILE."""
    folder = tmp_path_factory.mktemp("watched")
    with OpenAIChatServer() as server:
        server.default = _relevant
        config = CONFIG.format(name=json.dumps(NAME), url=server.url, calls=CALLS_PER_HOUR)
        (folder / "ragassay.toml").write_text(config, encoding="utf-8")
        project = Project.load(folder)
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OPENAI_API_KEY", "sk-test-watch-page")
            watch(project, statistics(), stop=StopRule(seconds=0), say=lambda line: None)  # the watch run starts
            traces = [(n, "1", GOOD) for n in range(1, BEFORE + 1)]
            traces += [(n, HOSTILE, BAD) for n in range(BEFORE + 1, BEFORE + DEGRADED + 1)]
            _import(folder, project, traces, "stream")
            report = watch(project, statistics(), stop=StopRule(traces=BEFORE + DEGRADED), say=lambda line: None)
        calls = server.calls
    return folder, project, report, calls


def test_the_watch_page_shows_the_metric_the_alarm_with_its_version_and_traces_and_the_spend(watched):
    folder, project, report, calls = watched
    assert calls == CALLS_PER_HOUR and len(report.alarms) == 1
    alarm = report.alarms[0]
    store = project.open_store()
    try:
        web = client(store)
        index = web.get("/").text
        assert f'href="/watch/{_quoted(NAME)}"' in index
        page = web.get(f"/watch/{_quoted(NAME)}")
        assert page.status_code == 200
        html, text = page.text, text_of(page.text)
        assert '<meta http-equiv="refresh" content="15">' in html
        # the watched metric: the detector now, its band, its chart with every time bin
        assert "answer_relevance_token_recall" in text
        assert "0.900 ± 0.050" in text and f"{BEFORE + DEGRADED:,}" in text
        assert f"the {BEFORE + DEGRADED} bins as a table" in text  # one trace per minute: a bin each
        svg = html[html.index("<svg") : html.index("</svg>")]
        assert "confidence sequence" in svg and "reference ± margin 0.05" in svg and "alarm" in svg
        # the alarm: metric, change with its interval, the degraded version first, the worst traces linked
        row = text[text.index("Alarms") : text.index("Judge spend")]
        assert f"answer_relevance_token_recall worse: change {alarm['change']:+.3f}" in row
        assert f"[{alarm['low']:+.3f}, {alarm['high']:+.3f}]" in row
        assert f"service.version: {HOSTILE} (" in row
        suspects = list(alarm["versions"]["service.version"])
        assert suspects[0] == HOSTILE
        links = re.findall(r'href="(/runs/[^"]+/samples/[^"]+)"', html)
        assert links and len(links) == len(alarm["worst_traces"])
        degraded = {tid(n) for n in range(BEFORE + 1, BEFORE + DEGRADED + 1)}
        for link, trace in zip(links, alarm["worst_traces"]):
            assert link == f"/runs/{report.run_id}/samples/{trace}" and trace in degraded
            sample = web.get(link)
            assert sample.status_code == 200 and "I cannot say" in text_of(sample.text)
        # the judge spend against the budget: 4 calls of 0.00015 USD, the rest unscored for budget
        assert f"last hour {CALLS_PER_HOUR} {CALLS_PER_HOUR} 0.0006 no limit" in text
        assert "last 24 hours 4 no limit 0.0006 1000.0000" in text
        unscored = BEFORE + DEGRADED - CALLS_PER_HOUR
        assert f"{unscored} traces unscored for budget" in text
        assert f"scored {CALLS_PER_HOUR}, unscored {unscored}" in text
        # every stored string escaped: the version and the watch's name never become markup
        assert "<script>" not in html and "<b>" not in html
        assert "&lt;script&gt;alert(&#34;v&#34;)&lt;/script&gt;" in html
        assert f"Watch {NAME} (watched)" in text
    finally:
        store.close()


def test_the_index_lists_the_watch_and_the_page_takes_its_run_id_and_a_refresh(watched):
    _, project, report, _ = watched
    store = project.open_store()
    try:
        web = client(store)
        listing = web.get("/watch")
        assert listing.status_code == 200
        assert f"{NAME} watched {report.run_id[:12]}" in text_of(listing.text)
        assert "<b>" not in listing.text
        by_id = web.get(f"/watch/{report.run_id[:8]}?refresh=0")
        assert by_id.status_code == 200 and "http-equiv" not in by_id.text
        assert web.get(f"/watch/{_quoted(NAME)}?refresh=soon").status_code == 400
        missing = web.get("/watch/nightly")
        assert missing.status_code == 404 and "no watch 'nightly'" in text_of(missing.text)
    finally:
        store.close()


def test_the_page_follows_the_watch_while_it_writes(watched, tmp_path):
    """serve keeps its store open; a later watch session commits more traces; the same app shows them."""
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(watched[0], folder)  # the other tests keep the fixture's store as it was
    project = Project.load(folder)
    store = project.open_store()
    try:
        web = client(store)
        before = text_of(web.get(f"/watch/{_quoted(NAME)}").text)
        assert f"the {BEFORE + DEGRADED} bins as a table" in before
        later = BEFORE + DEGRADED + 1
        _import(folder, project, [(later, "1", GOOD)], "later")
        with pytest.MonkeyPatch.context() as patch:  # the hour's judge budget is spent: no call is made
            patch.setenv("OPENAI_API_KEY", "sk-test-watch-page")
            watch(project, statistics(), stop=StopRule(traces=1), say=lambda line: None)
        after = text_of(web.get(f"/watch/{_quoted(NAME)}").text)
        assert f"the {BEFORE + DEGRADED + 1} bins as a table" in after
    finally:
        store.close()


def test_a_project_without_a_watch_says_so(tmp_path):
    (tmp_path / "ragassay.toml").write_text('[project]\nname = "quiet"\n', encoding="utf-8")
    project = Project.load(tmp_path)
    store = project.open_store()
    try:
        web = client(store)
        listing = web.get("/watch")
        assert listing.status_code == 200
        assert "No watch in this results store yet. Start one with: ragassay watch" in text_of(listing.text)
        assert "Watches:" not in web.get("/").text
        assert web.get("/watch/prod").status_code == 404
    finally:
        store.close()


def _quoted(name: str) -> str:
    from urllib.parse import quote

    return quote(name, safe="")
