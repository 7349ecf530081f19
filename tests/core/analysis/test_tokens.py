"""``tokens`` as a decidable column beside ``latency_s`` (issue 40, Decisions): the per-sample input + output
tokens of each output (stored usage), NaN for a failed output, lower is better, decided by the one paired
procedure, whole conversations flipped when samples are turns."""

from __future__ import annotations

import numpy as np
import pytest

from ragassay.analysis.tokens import OUTPUT_COLUMNS, TOKENS, output_columns, tokens_column
from ragassay.analysis.verdicts import BETTER, METHOD_CLUSTERED, NO_DIFFERENCE, TOO_FEW, WORSE, decide
from ragassay.errors import ConfigError
from ragassay.results import read_run

from trajectory_runs import write_trajectory_run
from written_runs import write_run

N = 12


def _cells(tokens: tuple[int, int], quality: list[float], failed: set[int] = frozenset()) -> list[dict]:
    return [
        {"status": "failed"}
        if i in failed
        else {"metrics": {"recall": q}, "usage": (*tokens, "local/qwen"), "latency": 1.0 + 0.01 * i}
        for i, q in enumerate(quality)
    ]


@pytest.fixture
def written(tmp_path):
    store, run_id = write_run(
        tmp_path / "results.db",
        {
            "single": _cells((80, 20), [0.5] * N),  # 100 tokens a sample
            "decompose": _cells((300, 100), [0.5] * N, failed={3}),  # 400 tokens, one failed output
            "lean": _cells((40, 10), [0.5] * N),  # 50 tokens
        },
        config={"evaluation": {"decide": ["recall", "tokens"]}},
    )
    yield read_run(store, run_id)
    store.close()


def test_the_tokens_column_is_input_plus_output_and_unscored_for_a_failed_output(written):
    assert tokens_column(written, "single").tolist() == [100.0] * N
    decompose = tokens_column(written, "decompose")
    assert np.isnan(decompose[3]) and np.delete(decompose, 3).tolist() == [400.0] * (N - 1)
    assert list(OUTPUT_COLUMNS) == ["latency_s", TOKENS] and output_columns(["tokens", "recall"]) == [TOKENS]
    assert output_columns(None) == []  # the default family names no output column


def test_tokens_are_decided_lower_is_better_by_the_paired_procedure(written):
    verdicts = decide(written)  # the stored [evaluation] decide names tokens
    assert verdicts.family == ["recall", "tokens"]
    pairs = {(p.system, p.metric): p for p in verdicts.pairs}
    more = pairs[("decompose", TOKENS)]
    # 400 - 100 on the 11 samples both answered: every one a loss (fewer tokens win), exact sign-flip p = 2 / 2^11
    assert (more.n, more.mean_diff, more.wins, more.losses, more.ties) == (11, 300.0, 0, 11, 0)
    assert more.p_value == pytest.approx(2 / 2**11) and more.verdict == WORSE
    fewer = pairs[("lean", TOKENS)]
    assert (fewer.n, fewer.mean_diff, fewer.wins, fewer.losses) == (12, -50.0, 12, 0) and fewer.verdict == BETTER
    cells = {(c.system, c.metric): c for c in verdicts.cells}
    assert cells[("decompose", TOKENS)].direction == "lower"
    assert (cells[("decompose", TOKENS)].mean, cells[("decompose", TOKENS)].unscored) == (400.0, 1)
    assert pairs[("decompose", "recall")].verdict == TOO_FEW  # equal on every sample


def test_tokens_and_latency_decide_together_and_are_absent_unless_declared(written):
    verdicts = decide(written, family=["latency_s", "tokens"])
    assert verdicts.family == ["latency_s", "tokens"]
    latency = next(p for p in verdicts.pairs if (p.system, p.metric) == ("lean", "latency_s"))
    assert latency.verdict == TOO_FEW and latency.mean_diff == 0.0  # the same planted latencies
    undeclared = decide(written, family=["recall"])
    assert {p.metric for p in undeclared.pairs} == {"recall"}
    with pytest.raises(ConfigError, match="decide names tokenz.*also latency_s and tokens"):
        decide(written, family=["tokenz"])


def test_tokens_of_conversation_turns_flip_whole_conversations(tmp_path):
    store, run_id = write_trajectory_run(tmp_path / "results.db")  # tests/trajectory_runs.py: c1 has two turns
    try:
        verdicts = decide(read_run(store, run_id), family=[TOKENS])
    finally:
        store.close()
    assert verdicts.method == METHOD_CLUSTERED and verdicts.conversations == 5
    pairs = {p.system: p for p in verdicts.pairs}
    # single 120 120 130 110 120 120; decompose stores 300 320 450 0 (no usage on q4) 300 310
    decompose = pairs["decompose"]
    assert (decompose.n, decompose.n_clusters, decompose.mean_diff) == (6, 5, pytest.approx(960 / 6))
    # iterate 400 380 600 250 420, its c1::2 failed: 5 turns in 5 conversations
    iterate = pairs["iterate"]
    assert (iterate.n, iterate.n_clusters, iterate.mean_diff) == (5, 5, pytest.approx(290.0))
    # 5 conversations: the smallest exact two-sided p-value is 2 / 2^5 = 0.0625, above 0.05: never decided
    assert {decompose.verdict, iterate.verdict} <= {TOO_FEW, NO_DIFFERENCE}
    assert iterate.losses == 5 and iterate.wins == 0
