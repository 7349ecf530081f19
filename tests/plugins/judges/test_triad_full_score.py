"""Eq. 5.1's comprehensive score (full_score): hand-computed values in both readings, unscored inputs, declared
range; and one real run in which the triad, full_score and the correctness judge are stored with their cost."""

from __future__ import annotations

import json
import sqlite3

import pytest
from pydantic import ValidationError

from ragassay import Unscored, testing
from ragassay.plugins.judges.triad import FullScore

from servers.openai_chat import OpenAIChatServer, Turn

VALUES = {"answer_relevancy": 1.0, "holistic_correctness": 4.0, "faithfulness": 1.0, "context_relevancy": 0.625}


def test_text_reading_is_half_of_the_printed_formula():
    text, printed = FullScore(), FullScore(FullScore.Options(reading="printed"))
    generation = (1.0 + (4.0 - 1) / 4 + 1.0) / 3  # 0.9166...
    assert text.derive(VALUES).value == pytest.approx((generation + 0.625) / 2)
    assert printed.derive(VALUES).value == pytest.approx(generation + 0.625)
    assert text.derive(VALUES).details["correctness_scaled"] == 0.75
    assert (text.value_range, printed.value_range) == ((0.0, 1.0), (0.0, 2.0))
    assert FullScore.declared(FullScore.Options(reading="printed")) == ("higher", (0.0, 2.0))
    assert text.inputs() == ["answer_relevancy", "context_relevancy", "faithfulness", "holistic_correctness"]


def test_other_inputs_and_correctness_ranges():
    options = FullScore.Options(correctness="judge01", correctness_range=(0, 1), faithfulness="k_precision")
    metric = FullScore(options)
    values = {**VALUES, "judge01": 1.0, "k_precision": 0.5}
    assert metric.derive(values).value == pytest.approx(((1.0 + 1.0 + 0.5) / 3 + 0.625) / 2)
    with pytest.raises(ValidationError, match="low < high"):
        FullScore.Options(correctness_range=(5, 1))


def test_an_unscored_input_makes_it_unscored():
    result = FullScore().derive({**VALUES, "faithfulness": None})
    assert result == Unscored(reason="input metric(s) unscored for this output: faithfulness")


def _judge_reply(request):
    schema = request.json["response_format"]["json_schema"]["name"]
    fields = {
        "RelevancyPoints": {"feedback": "On topic.", "subject_matter": 1, "focus": 1},
        "ContextPoints": {"feedback": "Half.", "subject_matter": 1, "full_answer": 0.5},
        "SupportVerdict": {"explanation": "Supported.", "answer": "YES"},
        "CorrectnessScore": {"explanation": "Matches.", "score": 5},
        "Judged": {"explanation": "Same city.", "judgement": "Correct"},
    }[schema]
    return Turn(text=json.dumps(fields), usage=(100, 10, 0))


@pytest.mark.slow
def test_a_real_run_stores_the_values_and_their_evaluation_cost(tmp_path, monkeypatch):
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-triad-run")
    with OpenAIChatServer() as server:
        server.default = _judge_reply
        gen = {"name": "openai", "options": {"model": "gpt-4o-mini", "base_url": server.url + "/v1"}}
        names = ["answer_relevancy", "context_relevancy", "faithfulness", "holistic_correctness"]
        config = {
            "systems": {"bm25": {"retriever": "bm25", "generator": "extractive"}},
            "evaluation": {
                "metrics": [{"name": n, "options": {"generator": gen}} for n in names] + ["full_score"],
                "judges": [{"name": "correctness", "options": {"generator": gen}}],
            },
        }
        run = testing.run_project(
            tmp_path,
            config,
            corpus={"a.md": "The bridge opened in Zürich in 2023.", "b.md": "Salmon swim up rivers."},
            samples=[{"question_id": "q1", "question": "Where did the bridge open?", "reference_answers": ["Zürich"]}],
        )
        assert run.failed == 0 and server.calls == 5  # four metrics and one judge, one call each
    assert [run.metric("bm25", "q1", n) for n in names] == [1.0, 0.75, 1.0, 5.0]
    assert run.metric("bm25", "q1", "full_score") == pytest.approx(((1 + 1 + 1) / 3 + 0.75) / 2)
    assert run.judgements[("bm25", "q1", "correctness")] == "correct"
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    rows = dict(con.execute("select metric, calls from metric_values").fetchall())
    assert rows == {**dict.fromkeys(names, 1), "full_score": 0}
    tokens = con.execute("select sum(input_tokens), sum(output_tokens) from metric_values").fetchone()
    assert tokens == (400, 40)
    assert con.execute("select calls, input_tokens from judgements").fetchone() == (1, 100)
    details = json.loads(
        con.execute("select details_json from metric_values where metric = 'faithfulness'").fetchone()[0]
    )
    assert details["verdict"] == "YES" and details["explanation"] == "Supported."
