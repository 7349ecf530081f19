"""``ragassay run --repeat N``: model-calling metrics and judges are scored N times with real calls, each repeat
is stored, the spread across repeats is reported, and everything else still reads repeat 0 only. The models are
a local server speaking the OpenAI protocol, driven by the real client."""

from __future__ import annotations

import itertools
import sqlite3
import threading

import pytest

from ragassay.analysis.comparison import compare
from ragassay.analysis.variance import repeat_rows, spreads
from ragassay.results import read_run
from ragassay.store import open_store
from tests.conftest import ragassay_cli, write_project
from tests.servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")
pytestmark = pytest.mark.slow

CONFIG = """
    [project]
    concurrency = 1
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = {{ path = "qa.jsonl" }}
    [defaults]
    chunker = {{ name = "recursive", options = {{ size = 200, overlap = 20 }} }}
    [systems.bm25]
    retriever = "bm25"
    generator = "extractive"
    [evaluation]
    metrics = ["exact_match", {{ name = "truthfulness", options = {{ generator = {gen} }} }}]
    judges = [{{ name = "grammar_llm", options = {{ generator = {gen} }} }}]
"""


class Replies:
    """Truthfulness 3, 4, 5, 3, ... in call order (one unit at a time: each unit's repeats 0, 1, 2 get 3, 4, 5)."""

    def __init__(self):
        self.scores = itertools.cycle([3, 4, 5])
        self.lock = threading.Lock()

    def __call__(self, request):
        if request.json.get("tools"):
            with self.lock:
                score = next(self.scores)
            return Turn(
                text=None,
                tool_calls=[
                    ("set_answer_evaluation", {"explanation": "scripted", "truthfulness": score, "relevance": 5})
                ],
            )
        return Turn(text="The answer is correct.")


def _run(path, *args):
    result = ragassay_cli("run", "--config", str(path), *args, env=_env())
    assert result.returncode == 0, result.stderr
    return result


def _env():
    from tests.conftest import cli_env

    return {**cli_env(), "OPENAI_API_KEY": "sk-test-repeat"}


def test_repeat_three_makes_three_times_the_judge_calls_and_reports_the_spread(tmp_path):
    with OpenAIChatServer() as server:
        server.default = Replies()
        gen = (
            f'{{ name = "openai", options = {{ model = "gpt-4o-mini", base_url = "{server.url}/v1", '
            'structured_mode = "tool" } }'
        )
        path = write_project(tmp_path, CONFIG.format(gen=gen))
        result = _run(path, "--repeat", "3")
        assert server.calls == 18  # 3 samples x (truthfulness + judge) x 3 repeats; without repeats: 6
        db = tmp_path / "ragassay-results.db"
        con = sqlite3.connect(db)
        per_unit = con.execute(
            "select output_id, group_concat(repeat || ':' || value) from "
            "(select * from metric_values where metric = 'truthfulness' order by repeat) group by output_id"
        ).fetchall()
        assert [values for _, values in per_unit] == ["0:3.0,1:4.0,2:5.0"] * 3  # 3 stored values per unit
        assert con.execute("select count(*), max(repeat) from judgements").fetchone() == (9, 2)
        assert con.execute("select max(repeat) from metric_values where metric = 'exact_match'").fetchone() == (0,)
        assert con.execute("select sum(calls) from metric_values").fetchone() == (9,)  # every repeat a real call

        store = open_store(f"sqlite:///{db}", create=False)
        try:
            run_id = store.list_runs()[0]["id"]
            found = spreads(repeat_rows(read_run(store, run_id)))
            truth = found[("bm25", "truthfulness")]
            assert (truth.repeats, truth.n, truth.means) == (3, 3, (3.0, 4.0, 5.0))
            assert (truth.mean, truth.low, truth.high, truth.sd) == (4.0, 3.0, 5.0, 1.0)
            assert found[("bm25", "judge:grammar_llm")].means == (1.0, 1.0, 1.0)
            assert set(found) == {("bm25", "truthfulness"), ("bm25", "judge:grammar_llm")}
            cell = compare([read_run(store, run_id)]).rows[0].cells["truthfulness"]
            assert (cell.mean, cell.n) == (3.0, 3)  # the comparison reads repeat 0 only
        finally:
            store.close()
        flat = " ".join(result.stdout.split())
        assert "run-to-run variance" in flat and "3.000-5.000" in flat

        _run(path, "--repeat", "3")  # complete: resumes and calls nothing
        assert server.calls == 18
        _run(path, "--repeat", "4")  # adds the missing repeat only
        assert server.calls == 24
        assert con.execute("select count(*) from metric_values where metric = 'truthfulness'").fetchone() == (12,)
        compared = ragassay_cli("compare", run_id, "--config", str(path), "--format", "json", env=_env())
        assert compared.returncode == 0, compared.stderr
        assert '"exceeds spread"' in compared.stdout and '"sd"' in compared.stdout
