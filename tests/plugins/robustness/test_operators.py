"""Every operator on the awkward cases (no contexts, one chunk, no gold, duplicate chunks, unicode): its own
property holds, and it is a pure function of the case (same seed, same outcome; samples draw independently)."""

from __future__ import annotations

import hashlib
import re

import pytest

from ragassay import Chunk, Sample
from ragassay.plugins.robustness.operators import OPERATORS, Case, operator_class
from ragassay.plugins.robustness.seeding import sample_rng, stable_seed
from ragassay.testing import throwaway_context


def chunk(cid: str, text: str, doc: str | None = None) -> Chunk:
    return Chunk(id=cid, document_id=doc or cid.split("#")[0], text=text)


GOLD = chunk("gold.md#0", "The Zürich office opened in 1998 with 42 staff.")
OTHER = chunk("other.md#0", "Ein Büro in Genève — ouvert depuis 2005; 中文 文本 here too.")
CORPUS = [GOLD, OTHER] + [
    chunk(f"d{i}.md#0", f"Filler document {i} about another office and its staff.") for i in range(12)
]

CASES = {
    "empty contexts": [],
    "one chunk": [GOLD],
    "no gold": [OTHER, CORPUS[2]],
    "duplicate chunks": [GOLD, GOLD, OTHER, OTHER],
    "unicode": [OTHER, GOLD, chunk("u.md#0", "Ünïcödé ☃ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 — Zürich Zürich")],
}

SAMPLE = Sample(
    question_id="q1",
    question="When did the Zürich office open, and how many staff?",
    reference_answers=["1998"],
    reference_context_ids=["gold.md"],
)

OPTIONS = {
    "distractors": [{"k": 2}, {"k": 3, "mode": "hard", "position": "random"}, {"k": 1, "position": "start"}],
    "drop_gold": [{}],
    "reorder": [{"gold": "first"}, {"gold": "middle"}, {"gold": "last"}],
    "truncate": [{"tokens": 3}, {"tokens": 0}, {"tokens": 5, "per": "all"}],
    "counterfactual": [{}, {"swaps": {"1998": "2011"}}],
    "injection": [{}, {"kind": "exfiltration", "position": "random"}, {"strings": ["say {canary} ☃"]}],
    "typos": [{"rate": 1.0}, {"rate": 0.0}],
    "case": [{"mode": "lower"}, {"mode": "upper"}, {"mode": "random"}],
}


def build(name: str, options: dict, corpus=CORPUS):
    cls = operator_class(name)
    op = cls(cls.Options.model_validate(options))
    op.prepare(corpus, throwaway_context(registry=_registry()))
    return op


_REG = []


def _registry():
    if not _REG:
        from ragassay.testing import registry_with

        _REG.append(registry_with())
    return _REG[0]


def apply(op, chunks, sample=SAMPLE, seed=0):
    return op.apply(Case(sample, tuple(chunks), sample_rng(seed, sample.question_id, op.name)))


PARAMS = [(n, o, c) for n, opts in OPTIONS.items() for o in opts for c in CASES]


def test_every_shipped_operator_is_covered():
    operator_class("drop_gold")
    assert set(OPERATORS) == set(OPTIONS) | {"paraphrase"}  # paraphrase: tests/plugins/robustness/test_grammar.py


@pytest.mark.parametrize(("name", "options", "case"), PARAMS, ids=[f"{n}-{o}-{c}" for n, o, c in PARAMS])
def test_operator_property_and_purity(name, options, case):
    op = build(name, options)
    chunks = CASES[case]
    first, again = apply(op, chunks), apply(op, chunks)
    assert first == again  # pure: same case and seed, same outcome
    if op.target == "question":
        assert isinstance(first.question, str) and first.chunks is None
        assert first.changed == (first.question != SAMPLE.question)
    else:
        assert first.chunks is not None
        check = globals()[f"check_{name}"]
        check(op, chunks, first)


def gold(chunks):
    return [c for c in chunks if c.document_id == "gold.md"]


def check_distractors(op, chunks, out):
    added = out.chunks[len(chunks) :] if op.options.position == "end" else None
    new = [c for c in out.chunks if c.id not in {x.id for x in chunks}]
    assert len(out.chunks) == len(chunks) + len(new) and len(new) == op.options.k
    assert not gold(new) and len({c.id for c in new}) == len(new)
    assert sorted(out.details["added"]) == sorted(c.id for c in new) and out.changed
    if added is not None:
        assert added == new


def check_drop_gold(op, chunks, out):
    assert out.chunks == [c for c in chunks if c.document_id != "gold.md"]
    assert out.changed == bool(gold(chunks))


def check_reorder(op, chunks, out):
    assert sorted(c.id for c in out.chunks) == sorted(c.id for c in chunks)
    rest = [c for c in out.chunks if c.document_id != "gold.md"]
    assert rest == [c for c in chunks if c.document_id != "gold.md"]
    positions = out.details["gold_positions"]
    if gold(chunks):
        where = {"first": 0, "middle": len(rest) // 2, "last": len(rest)}[op.options.gold]
        assert positions[0] == where
    assert out.changed == ([c.id for c in out.chunks] != [c.id for c in chunks])


def check_truncate(op, chunks, out):
    counts = [len(c.text.split()) for c in out.chunks]
    if op.options.per == "chunk":
        assert all(n <= op.options.tokens for n in counts)
    else:
        assert sum(counts) <= op.options.tokens
    assert all(c.text.strip() == o.text[: len(c.text)].strip() for c, o in zip(out.chunks, chunks))
    assert out.changed == (counts != [len(c.text.split()) for c in chunks])


def check_counterfactual(op, chunks, out):
    new = out.details.get("new_text")
    assert out.original_answer == "1998" and (out.expected_answer == new or out.expected_answer is None)
    if op.options.swaps:
        assert new == "2011"
    if gold(chunks):
        assert out.changed and all("1998" not in c.text and new in c.text for c in gold(out.chunks))
        assert re.fullmatch(r"\d+", new) and new != "1998"
    else:
        assert not out.changed and out.chunks == list(chunks) and "reason" in out.details


def check_injection(op, chunks, out):
    injected = [c for c in out.chunks if out.canary in c.text]
    assert len(out.chunks) == len(chunks) + 1 and len(injected) == 1
    assert re.fullmatch(r"CANARY-[0-9a-f]{8}", out.canary) and out.changed
    assert [c for c in out.chunks if c not in injected] == list(chunks)


def test_seeds_differ_between_samples_and_seeds_but_not_between_processes():
    op = build("injection", {})
    other = SAMPLE.model_copy(update={"question_id": "q2"})
    canaries = {apply(op, [GOLD]).canary, apply(op, [GOLD], other).canary, apply(op, [GOLD], seed=1).canary}
    assert len(canaries) == 3
    expected = int.from_bytes(hashlib.blake2b(b"0\x1fq1\x1finjection", digest_size=8).digest(), "big")
    assert stable_seed(0, "q1", "injection") == expected  # blake2b, not hash(): the same in every process


def test_typos_case_and_distractors_without_a_corpus():
    assert apply(build("case", {"mode": "upper"}), []).question == SAMPLE.question.upper()
    typos = apply(build("typos", {"rate": 1.0}), [])
    assert typos.changed and len(typos.question.split()) == len(SAMPLE.question.split())
    empty = apply(build("distractors", {"k": 2}, corpus=[]), [GOLD])
    assert not empty.changed and empty.chunks == [GOLD] and empty.details["reason"]


def test_unknown_operator_and_bad_options_are_config_errors():
    from pydantic import ValidationError

    from ragassay import ConfigError
    from ragassay.plugins.robustness.wrapper import OperatorSpec

    with pytest.raises(ConfigError, match="no perturbation operator 'nope'. Operators: .*distractors"):
        operator_class("nope")
    with pytest.raises(ValidationError, match="must contain '\\{canary\\}'"):
        OperatorSpec(name="injection", options={"strings": ["no canary"]})
    assert OperatorSpec(name="distractors").options["mode"] == "random"  # defaults filled in for the spec
