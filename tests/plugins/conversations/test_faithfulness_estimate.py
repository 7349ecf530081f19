"""``ragassay estimate`` for the per-turn judges, before any call: one support call per output (made by the first
rate, none by the other two), one behaviour call per labelled turn, one retention call per turn with an earlier
user turn; corrective re-asks are the upper end. No model is asked (the judge points at a closed port)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import cli_env, ragassay_cli

from conversation_judge import COPIES, project_config, write_conversations

pytest.importorskip("openai")

METRICS = ["turn_context_support", "turn_history_support", "turn_unsupported", "answerability_behaviour"]
METRICS += ["knowledge_retention", "turn_unsupported_offline"]


def test_the_estimate_counts_one_call_per_output_and_none_for_the_sharing_rates(tmp_path):
    config = write_conversations(tmp_path, project_config("http://127.0.0.1:9", METRICS))
    result = ragassay_cli("estimate", str(config), "--format", "json", env={**cli_env(), "OPENAI_API_KEY": "sk-test"})
    assert result.returncode == 0, result.stderr
    rows = {r["component"]: (r["calls_low"], r["calls_high"]) for r in json.loads(result.stdout)}
    turns = COPIES * 5
    assert rows["metric:turn_context_support"] == (turns, 3 * turns)  # 2 corrective re-asks at most
    assert rows["metric:turn_history_support"] == rows["metric:turn_unsupported"] == (0, 0)
    assert rows["metric:answerability_behaviour"] == (turns, 3 * turns)  # every turn has a label
    assert rows["metric:knowledge_retention"] == (3 * COPIES, 9 * COPIES)  # nile::2, nile::3, moon::2
    assert rows["metric:turn_unsupported_offline"] == (0, 0)
