"""The claim view reads stored claim checks as plain JSON and marks each claim as RAGChecker's Figure 1 does."""

from __future__ import annotations

from ragassay.present.claim_view import claim_view, find_checks

E, N, C = "Entailment", "Neutral", "Contradiction"

CHECKS = {
    "response_claims": [["Nile", "is", "long"], "It rains.", "Paris is in Spain.", "Cats purr."],
    "gt_answer_claims": ["The Nile is long.", "It flows north.", "It has floods.", "It is old."],
    "chunk_ids": ["d1", "d2"],
    "answer2response": [E, E, C, N],
    "response2answer": [E, N, E, N],
    "retrieved2response": [[N, E], [N, N], [N, N], [E, N]],
    "retrieved2answer": [[E, N], [N, E], [N, N], [N, N]],
}


def marks(view, side):
    return [(c["mark"], c["chunk"]) for c in view[side]]


def test_every_claim_is_marked_with_the_chunk_that_supports_it():
    view = claim_view(CHECKS)
    assert view["response"][0]["text"] == "(Nile; is; long)"
    assert marks(view, "response") == [
        ("entailed", "d2"),
        ("self-knowledge", None),
        ("hallucinated", None),
        ("noise", "d1"),
    ]
    assert marks(view, "reference") == [
        ("retrieved, used", "d1"),
        ("retrieved, not used", "d2"),
        ("used, not retrieved", None),
        ("missed", None),
    ]
    assert [c["tone"] for c in view["response"]] == ["good", "warn", "bad", "bad"]


def test_a_missing_check_list_marks_only_what_is_known():
    partial = {**CHECKS, "answer2response": None, "retrieved2answer": None}
    view = claim_view(partial)
    assert [c["mark"] for c in view["response"]] == ["grounded", "ungrounded", "ungrounded", "grounded"]
    assert [c["mark"] for c in view["reference"]] == ["used", "not used", "used", "not used"]
    none = claim_view({**partial, "retrieved2response": None, "response2answer": None})
    assert {c["mark"] for c in none["response"] + none["reference"]} == {"unchecked"}


def test_the_first_details_with_checks_are_found():
    found = find_checks([("exact_match", {}), ("rc_precision", {"checks": CHECKS}), ("rc_f1", {"checks": {}})])
    assert found == ("rc_precision", CHECKS)
    assert find_checks([("m", {"checks": "not a layout"}), ("n", None)]) is None
