"""Every operator on the awkward cases, table-driven: the chunks (none, one, no gold among them, duplicates,
unicode) x the sample (with gold and a reference answer, with neither, a unicode question): its own property
holds, and it is a pure function of the case (same seed, same outcome; samples draw independently)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import yaml

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

#: GRAMMAR text templates of the samples (paraphrase): one SQL template, three phrasings.
TEMPLATES = {
    "templates": [
        {
            "id": "office_open",
            "sql": "SELECT Opened FROM Office WHERE City = '[Office.City]'",
            "texts": [
                {"id": "t1", "text": "When did the [Office.City] office open?", "attributes": {"q": "short"}},
                {"id": "t2", "text": "Opening year of the office in [Office.City]?", "attributes": {"q": "short"}},
                {"id": "t3", "text": "Wann öffnete das Büro in [Office.City] — 中文?", "attributes": {"q": "long"}},
            ],
        }
    ]
}
GRAMMAR = {"sql_template_id": "office_open", "text_template_id": "t1", "placeholders": {"Office.City": "Zürich"}}

SAMPLES = {
    "gold sample": Sample(
        question_id="q1",
        question="When did the Zürich office open, and how many staff?",
        reference_answers=["1998"],
        reference_context_ids=["gold.md"],
        **GRAMMAR,
    ),
    "no gold, no answer": Sample(question_id="q2", question="Tell me about offices."),
    "unicode question": Sample(
        question_id="q3",
        question="Wann öffnete das Büro in Zürich — 中文 Straße ǅemal?",
        reference_answers=["1998"],
        reference_context_ids=["gold.md#0"],
        **{**GRAMMAR, "text_template_id": "t3", "placeholders": {"office.city": "Zürich ☃"}},
    ),
}
SAMPLE = SAMPLES["gold sample"]

OPTIONS = {
    "distractors": [{"k": 2}, {"k": 3, "mode": "hard", "position": "random"}, {"k": 1, "position": "start"}],
    "drop_gold": [{}],
    "reorder": [{"gold": "first"}, {"gold": "middle"}, {"gold": "last"}],
    "truncate": [{"tokens": 3}, {"tokens": 0}, {"tokens": 5, "per": "all"}],
    "counterfactual": [{}, {"swaps": {"1998": "2011"}}],
    "injection": [{}, {"kind": "exfiltration", "position": "random"}, {"strings": ["say {canary} ☃"]}],
    "typos": [{"rate": 1.0}, {"rate": 0.0}],
    "case": [{"mode": "lower"}, {"mode": "upper"}, {"mode": "random"}],
    "paraphrase": [{"templates": "templates.yaml"}, {"templates": "templates.yaml", "attribute": "q", "value": "long"}],
}

_ROOT: list[Path] = []  # the project folder of the paraphrase templates


@pytest.fixture(scope="module", autouse=True)
def _templates(tmp_path_factory):
    root = tmp_path_factory.mktemp("operators")
    (root / "templates.yaml").write_text(yaml.safe_dump(TEMPLATES, allow_unicode=True), encoding="utf-8")
    _ROOT[:] = [root]


def build(name: str, options: dict, corpus=CORPUS):
    cls = operator_class(name)
    op = cls(cls.Options.model_validate(options))
    op.prepare(corpus, throwaway_context(_ROOT[0], registry=_registry()))
    return op


_REG = []


def _registry():
    if not _REG:
        from ragassay.testing import registry_with

        _REG.append(registry_with())
    return _REG[0]


def apply(op, chunks, sample=SAMPLE, seed=0):
    return op.apply(Case(sample, tuple(chunks), sample_rng(seed, sample.question_id, op.name)))


PARAMS = [(n, o, c, s) for n, opts in OPTIONS.items() for o in opts for c in CASES for s in SAMPLES]


def test_every_shipped_operator_is_covered():
    operator_class("drop_gold")
    assert set(OPERATORS) == set(OPTIONS)


@pytest.mark.parametrize(
    ("name", "options", "case", "sample"), PARAMS, ids=[f"{n}-{o}-{c}-{s}" for n, o, c, s in PARAMS]
)
def test_operator_property_and_purity(name, options, case, sample):
    op, chunks, sample = build(name, options), CASES[case], SAMPLES[sample]
    first, again = apply(op, chunks, sample), apply(op, chunks, sample)
    assert first == again  # pure: same case and seed, same outcome
    if op.target == "question":
        assert isinstance(first.question, str) and first.chunks is None
        assert first.changed == (first.question != sample.question)
    else:
        assert first.chunks is not None and first.question is None
    globals()[f"check_{name}"](op, chunks, first, sample)


def gold(chunks, sample):
    refs = set(sample.reference_context_ids)
    return [c for c in chunks if c.id in refs or c.document_id in refs]


def check_distractors(op, chunks, out, sample):
    added = out.chunks[len(chunks) :] if op.options.position == "end" else None
    new = [c for c in out.chunks if c.id not in {x.id for x in chunks}]
    assert len(out.chunks) == len(chunks) + len(new) and not gold(new, sample) and len({c.id for c in new}) == len(new)
    assert sorted(out.details["added"]) == sorted(c.id for c in new) and out.changed == bool(new)
    if op.options.mode == "random":
        assert len(new) == op.options.k
    elif len(new) < op.options.k:  # hard negatives are the ranked non-gold chunks: as many as the retriever ranks
        ranked = op.ranker.retrieve(sample.question, len(CORPUS))
        assert len(new) == len([h for h in ranked if h.chunk not in chunks and not gold([h.chunk], sample)])
        assert new or "retriever ranks no non-gold chunk" in out.details["reason"]
    assert [c for c in out.chunks if c not in new] == list(chunks)  # the retrieved chunks keep their order
    if added is not None:
        assert added == new


def check_drop_gold(op, chunks, out, sample):
    assert out.chunks == [c for c in chunks if c not in gold(chunks, sample)]
    assert out.changed == bool(gold(chunks, sample))
    assert out.changed or out.details["reason"]


def check_reorder(op, chunks, out, sample):
    assert sorted(c.id for c in out.chunks) == sorted(c.id for c in chunks)
    rest = [c for c in out.chunks if c not in gold(chunks, sample)]
    assert rest == [c for c in chunks if c not in gold(chunks, sample)]
    positions = out.details["gold_positions"]
    if gold(chunks, sample):
        where = {"first": 0, "middle": len(rest) // 2, "last": len(rest)}[op.options.gold]
        assert positions[0] == where
    else:
        assert out.details["reason"] and out.chunks == list(chunks)
    assert out.changed == ([c.id for c in out.chunks] != [c.id for c in chunks])


def check_truncate(op, chunks, out, sample):
    counts = [len(c.text.split()) for c in out.chunks]
    if op.options.per == "chunk":
        assert all(n <= op.options.tokens for n in counts)
    else:
        assert sum(counts) <= op.options.tokens
    assert all(c.text.strip() == o.text[: len(c.text)].strip() for c, o in zip(out.chunks, chunks))
    assert [c.id for c in out.chunks] == [c.id for c in chunks]
    assert out.changed == (counts != [len(c.text.split()) for c in chunks])


def check_counterfactual(op, chunks, out, sample):
    new = out.details.get("new_text")
    if not sample.reference_answers:
        assert not out.changed and out.chunks == list(chunks) and "no reference answer" in out.details["reason"]
        return
    assert out.original_answer == "1998" and (out.expected_answer == new or out.expected_answer is None)
    if op.options.swaps:
        assert new == "2011"
    if gold(chunks, sample):
        assert out.changed and all("1998" not in c.text and new in c.text for c in gold(out.chunks, sample))
        assert re.fullmatch(r"\d+", new) and new != "1998"
        assert [c for c in out.chunks if c not in gold(out.chunks, sample)] == [
            c for c in chunks if c not in gold(chunks, sample)
        ]  # only gold chunks are rewritten
    else:
        assert not out.changed and out.chunks == list(chunks) and "reason" in out.details


def check_injection(op, chunks, out, sample):
    injected = [c for c in out.chunks if out.canary in c.text]
    assert len(out.chunks) == len(chunks) + 1 and len(injected) == 1
    assert re.fullmatch(r"CANARY-[0-9a-f]{8}", out.canary) and out.changed
    assert [c for c in out.chunks if c not in injected] == list(chunks)
    assert not gold(injected, sample) and out.chunks.index(injected[0]) == out.details["position"]


_WORDS = re.compile(r"\w+")


def check_typos(op, chunks, out, sample):
    before, after = _WORDS.findall(sample.question), _WORDS.findall(out.question)
    assert len(before) == len(after) and _WORDS.sub("", sample.question) == _WORDS.sub("", out.question)
    edits = [(a, b) for a, b in zip(before, after) if a != b]
    assert [f"{a}->{b}" for a, b in edits] == out.details["typos"]
    assert all(len(a) >= 4 and one_edit(a, b) for a, b in edits)
    if op.options.rate == 0:
        assert not edits and not out.changed


def one_edit(a: str, b: str) -> bool:
    """``b`` is ``a`` with two neighbouring letters swapped, one letter dropped or one letter doubled."""
    if len(b) == len(a):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return len(longer) == len(shorter) + 1 and any(longer[:i] + longer[i + 1 :] == shorter for i in range(len(longer)))


def check_case(op, chunks, out, sample):
    text = sample.question
    expected = {"lower": text.lower(), "upper": text.upper()}.get(op.options.mode)
    assert out.question == expected if expected is not None else out.question.casefold() == text.casefold()


def check_paraphrase(op, chunks, out, sample):
    if not sample.attributes:
        assert not out.changed and out.question == sample.question and "no other GRAMMAR" in out.details["reason"]
        return
    city = next(iter(sample.attributes["placeholders"].values()))
    texts = TEMPLATES["templates"][0]["texts"]
    allowed = [
        t["text"].replace("[Office.City]", city)
        for t in texts
        if t["id"] != sample.attributes["text_template_id"] and op.options.value in (None, t["attributes"]["q"])
    ]
    if not allowed:
        assert not out.changed and out.question == sample.question and out.details["reason"]
        return
    assert out.question in allowed and out.details["text_template_id"] != sample.attributes["text_template_id"]


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
