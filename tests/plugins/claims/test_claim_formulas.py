"""Every claim formula on small hand-built checks: empty lists, all neutral, a contradiction, no chunks, and the
disputed readings (RAGChecker issues #26, #36)."""

import pytest

from ragassay.plugins.claims import formulas as F
from ragassay.plugins.claims.model import ClaimChecks

WORDS = {"E": "Entailment", "N": "Neutral", "C": "Contradiction"}
RAGCHECKER = F.Readings(undefined="ragchecker")


def make(a2r: str, r2a: str, ret2resp: list[str], ret2ans: list[str], k: int) -> ClaimChecks:
    """Checks from letters: a2r one letter per response claim, ret2resp one string of k letters per claim."""
    return ClaimChecks(
        response_claims=[f"response claim {i}" for i in range(len(a2r))],
        gt_answer_claims=[["answer", "claim", str(j)] for j in range(len(r2a))],
        answer2response=[WORDS[x] for x in a2r],
        response2answer=[WORDS[x] for x in r2a],
        retrieved2response=[[WORDS[x] for x in row] for row in ret2resp],
        retrieved2answer=[[WORDS[x] for x in row] for row in ret2ans],
        chunk_ids=[f"c{c}" for c in range(k)],
    )


def values(checks, readings=F.DEFAULT):
    return {name: score.value for name, score in F.compute_all(checks, readings).items()}


# Response claims: 0 correct from relevant c0; 1 incorrect from relevant c0; 2 incorrect from irrelevant c1 and
# relevant c0; 3 incorrect, from irrelevant c1 only; 4 correct, from irrelevant c1 only; 5 correct, no chunk;
# 6 incorrect (a contradiction), no chunk. Reference claims: 0 in c0 and in the response; 1 in c0, missed;
# 2 in no chunk, in the response; 3 contradicted by c2, missed. Chunks: c0 relevant, c1 and c2 irrelevant.
MIXED = make(
    a2r="ENNNEEC",
    r2a="ENEN",
    ret2resp=["ENN", "ENN", "EEN", "NEN", "NEN", "NNN", "NNC"],
    ret2ans=["ENN", "ENN", "NNN", "NNC"],
    k=3,
)


def test_every_formula_on_a_mixed_case():
    assert values(MIXED) == pytest.approx(
        {
            "precision": 3 / 7,
            "recall": 2 / 4,
            "f1": 2 * (3 / 7) * (1 / 2) / (3 / 7 + 1 / 2),
            "claim_recall": 2 / 4,
            "context_precision": 1 / 3,
            "context_utilization": 1 / 2,
            "noise_sensitivity_in_relevant": 2 / 7,  # claims 1, 2
            "noise_sensitivity_in_irrelevant": 1 / 7,  # claim 3 (claim 2 is relevant noise only)
            "hallucination": 1 / 7,  # claim 6
            "self_knowledge": 1 / 7,  # claim 5
            "faithfulness": 5 / 7,  # claims 0-4
        }
    )


def test_disputed_readings_differ_where_the_issues_say():
    overlapping = values(MIXED, F.Readings(noise="overlapping"))
    assert overlapping["noise_sensitivity_in_irrelevant"] == pytest.approx(2 / 7)  # claims 2 and 3 (issue #36)
    assert overlapping["noise_sensitivity_in_relevant"] == pytest.approx(2 / 7)
    figure = values(MIXED, F.Readings(faithfulness="figure"))
    assert figure["faithfulness"] == pytest.approx(4 / 7)  # claim 4: correct, only an irrelevant chunk (issue #26)
    default = values(MIXED)
    assert default["faithfulness"] + default["hallucination"] + default["self_knowledge"] == pytest.approx(1)


def test_all_neutral_checks_give_the_formula_values():
    checks = make(a2r="NN", r2a="NNN", ret2resp=["NN", "NN"], ret2ans=["NN", "NN", "NN"], k=2)
    assert values(checks) == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "claim_recall": 0.0,
        "context_precision": 0.0,
        "context_utilization": None,  # no reference claim in the chunks: 0/0
        "noise_sensitivity_in_relevant": 0.0,
        "noise_sensitivity_in_irrelevant": 0.0,
        "hallucination": 1.0,
        "self_knowledge": 0.0,
        "faithfulness": 0.0,
    }
    reason = F.context_utilization(checks).reason
    assert reason == "no reference claim is entailed by a retrieved chunk"
    assert F.context_utilization(checks, RAGCHECKER) == F.Score(0.0, f"{reason}: 0 by RAGChecker's convention")


def test_a_contradiction_is_not_an_entailment():
    checks = make(a2r="C", r2a="C", ret2resp=["C"], ret2ans=["C"], k=1)
    got = values(checks)
    assert (got["precision"], got["recall"], got["claim_recall"], got["context_precision"]) == (0.0, 0.0, 0.0, 0.0)
    assert (got["hallucination"], got["faithfulness"]) == (1.0, 0.0)


def test_no_retrieved_chunks():
    checks = make(a2r="EN", r2a="EN", ret2resp=["", ""], ret2ans=["", ""], k=0)
    got = F.compute_all(checks)
    assert got["precision"].value == 0.5 and got["claim_recall"].value == 0.0
    for name in ("context_precision", "context_utilization"):
        assert got[name] == F.Score(None, "no chunk was retrieved")
    assert got["noise_sensitivity_in_relevant"].value == 0.0 == got["faithfulness"].value
    # every claim is unfaithful: the formula's values, where RAGChecker's code gives 0 (its guard needs k > 0)
    assert (got["hallucination"].value, got["self_knowledge"].value) == (0.5, 0.5)
    compat = F.compute_all(checks, RAGCHECKER)
    assert (compat["hallucination"].value, compat["self_knowledge"].value) == (0.0, 0.0)
    assert compat["context_precision"].value == 0.0


def test_empty_claim_lists():
    no_response = make(a2r="", r2a="EN", ret2resp=[], ret2ans=["E", "N"], k=1)
    got = F.compute_all(no_response)
    for name in ("precision", "f1", "noise_sensitivity_in_irrelevant", "hallucination", "faithfulness"):
        assert got[name].value is None and "the response has no claims" in got[name].reason
    assert got["recall"].value == 0.5 and got["claim_recall"].value == 0.5
    no_answer = make(a2r="E", r2a="", ret2resp=["E"], ret2ans=[], k=1)
    got = F.compute_all(no_answer)
    for name in ("recall", "claim_recall", "context_precision", "context_utilization", "noise_sensitivity_in_relevant"):
        assert got[name].value is None and got[name].reason.startswith("the reference answer has no claims")
    assert (got["precision"].value, got["faithfulness"].value, got["hallucination"].value) == (1.0, 1.0, 0.0)
    assert all(s.value == 0.0 for s in F.compute_all(no_answer, RAGCHECKER).values() if s.value != 1.0)


def test_unchecked_lists_leave_only_their_metrics_unscored():
    checks = MIXED.model_copy(update={"answer2response": None})
    got = F.compute_all(checks)
    assert got["precision"] == F.Score(None, "answer2response not checked")
    assert got["hallucination"].reason == "answer2response not checked"
    assert got["faithfulness"].value == pytest.approx(5 / 7)  # needs retrieved2response only
    assert F.faithfulness(checks, F.Readings(faithfulness="figure")).reason == "answer2response not checked"


def test_aggregation_is_the_mean_of_per_result_values_and_percent_rounds_like_ragchecker():
    assert F.system_mean([0.5, None, 1.0]) == 0.75
    assert F.system_mean([None]) is None
    assert F.to_percent(0.61363636) == 61.4 and F.to_percent(None) is None
    block = F.ragchecker_block([F.compute_all(MIXED), F.compute_all(MIXED)])
    assert block["overall_metrics"]["precision"] == 42.9
    assert list(block) == ["overall_metrics", "retriever_metrics", "generator_metrics"]  # RAGChecker's keys
