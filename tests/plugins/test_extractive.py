"""The extractive generator: the best-matching sentence, IDF weighting, rank tie-break, fallback."""

from __future__ import annotations

import asyncio

import pydantic
import pytest

from ragassay.components import Generation, GenerationRequest
from ragassay.models import Chunk
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.extractive import ExtractiveGenerator


def ctx(cid: str, text: str) -> Chunk:
    return Chunk(id=cid, document_id=cid.split("#")[0], text=text)


def answer(question: str, contexts: list[Chunk], **options) -> Generation:
    generator = ExtractiveGenerator(ExtractiveGenerator.Options(**options))
    return asyncio.run(generator.generate(GenerationRequest(question=question, contexts=contexts)))


CONTEXTS = [
    ctx("zurich#0", "Title: Zürich\nZürich is the largest city in Switzerland. It lies at the end of Lake Zürich."),
    ctx("obrien#0", "Sean O'Brien was born in Dublin in 1950. He opened a bakery in Basel in 1980."),
    ctx("bern#0", "Bern is the federal city. The Aare river loops around the old town."),
]


def test_registered_through_entry_point():
    info = load_plugins().registry.get("generator", "extractive")
    assert info.plugin == "extractive"
    assert info.cls is ExtractiveGenerator


def test_picks_the_answering_sentence_across_contexts():
    result = answer("Where was Sean O'Brien born?", CONTEXTS)
    assert result.text == "Sean O'Brien was born in Dublin in 1950."
    assert result.raw["context_id"] == "obrien#0"
    assert result.usage.calls == 0 and result.usage.input_tokens == 0


def test_other_questions():
    river = answer("Which river loops around the old town?", CONTEXTS)
    assert river.text == "The Aare river loops around the old town."
    assert answer("What is the largest city in Switzerland?", CONTEXTS).text.startswith("Zürich is the largest")
    assert answer("Where did he open a bakery?", CONTEXTS).raw["context_id"] == "obrien#0"


def test_rare_words_outweigh_common_ones():
    # one context: "city" is in three sentences, "basel" in one; plain overlap would tie and pick the first
    contexts = [ctx("a#0", "The city is big. A city again. Another city here. Basel is old.")]
    result = answer("Basel city", contexts)
    assert result.text == "Basel is old."
    scores = result.raw["sentence_scores"]
    assert scores[0]["sentence"] == "Basel is old."
    assert scores[0]["score"] > scores[1]["score"]
    assert len(scores) == 4


def test_higher_ranked_context_wins_ties():
    same = "The tower is 300 metres tall."
    assert answer("How tall is the tower?", [ctx("x#0", same), ctx("y#0", same)]).raw["context_id"] == "x#0"
    assert answer("How tall is the tower?", [ctx("y#0", same), ctx("x#0", same)]).raw["context_id"] == "y#0"


def test_max_sentences_keeps_text_order():
    result = answer("Where was Sean O'Brien born, and where is his bakery?", CONTEXTS, max_sentences=2)
    assert result.text == "Sean O'Brien was born in Dublin in 1950. He opened a bakery in Basel in 1980."


def test_title_line_is_not_an_answer():
    result = answer("Zürich", [ctx("z#0", "Title: Zürich\nIt has a lake. Zürich has a zoo.")])
    assert result.text == "Zürich has a zoo."
    assert all(not s["sentence"].startswith("Title:") for s in result.raw["sentence_scores"])


@pytest.mark.parametrize(
    "question, contexts",
    [("Where was Sean O'Brien born?", []), ("What is quantum chromodynamics?", CONTEXTS), ("Who is he?", CONTEXTS)],
)
def test_fallback(question, contexts):
    result = answer(question, contexts)
    assert result.text == "I don't know."
    assert result.raw["context_id"] is None


def test_custom_fallback():
    assert answer("What is quantum chromodynamics?", CONTEXTS, fallback="No answer.").text == "No answer."


def test_bad_options_are_rejected():
    with pytest.raises(pydantic.ValidationError):
        ExtractiveGenerator.Options(max_sentences=0)
    with pytest.raises(pydantic.ValidationError):
        ExtractiveGenerator.Options(model="gpt")
