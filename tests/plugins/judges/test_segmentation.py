"""Answer segmentation for citation groundedness: paragraphs, headers dropped, segments at citation markers."""

from __future__ import annotations

import pytest

from ragassay.plugins.judges.segmentation import (
    DEFAULT_CITATION_PATTERN,
    Segment,
    citation_numbers,
    paragraphs,
    segment_answer,
)

#: The groundedness blog's apples example (seeds/001), as it appears there.
APPLES = """Eating apples has various benefits for your health:

...

Cardiovascular Benefits

  1. Eating apples can reduce blood pressure [1].

...

In conclusion, eating apples is a great choice for maintaining a healthy and happy life."""

CASES = [
    pytest.param(
        APPLES,
        [
            ("Eating apples has various benefits for your health:", ()),
            ("1. Eating apples can reduce blood pressure", (1,)),
            ("In conclusion, eating apples is a great choice for maintaining a healthy and happy life.", ()),
        ],
        id="blog-apples",
    ),
    pytest.param("", [], id="empty"),
    pytest.param("## Benefits\n\n**Heart**\n\n---\n", [], id="only-headers"),
    pytest.param("Paris", [("Paris", ())], id="a-lone-short-answer-is-not-a-heading"),
    pytest.param(
        "Apples lower LDL [1]. They taste good.",
        [("Apples lower LDL", (1,)), ("They taste good.", ())],
        id="cited-then-uncited",
    ),
    pytest.param("A [1], and B [2].", [("A", (1,)), ("and B", (2,))], id="leading-punctuation-dropped"),
    pytest.param("Apples help [1, 3].", [("Apples help", (1, 3))], id="list-of-sources"),
    pytest.param("Apples help [1][2] a lot.", [("Apples help", (1, 2)), ("a lot.", ())], id="adjacent-markers-one-run"),
    pytest.param("Apples help [1] [2].", [("Apples help", (1, 2))], id="markers-separated-by-space"),
    pytest.param("Apples help [2-4].", [("Apples help", (2, 3, 4))], id="range"),
    pytest.param("Apples help [2–4].", [("Apples help", (2, 3, 4))], id="range-en-dash"),
    pytest.param(
        "1. Apples lower LDL.\n2. Pears are sweet [2].",
        [("1. Apples lower LDL.", ()), ("2. Pears are sweet", (2,))],
        id="numbered-items-are-not-citations",
    ),
    pytest.param(
        "# Health\nApples lower LDL [1].\n### Taste\nThey are sweet [2].",
        [("Apples lower LDL", (1,)), ("They are sweet", (2,))],
        id="markdown-headings",
    ),
    pytest.param(
        "**Cardiovascular benefits:**\nApples lower LDL [1].\n__Taste__\nSweet [2].",
        [("Apples lower LDL", (1,)), ("Sweet", (2,))],
        id="bold-only-lines",
    ),
    pytest.param(
        "Health\n======\nApples lower LDL [1].",
        [("Apples lower LDL", (1,))],
        id="setext-heading",
    ),
    pytest.param(
        "Key Health Benefits:\n- Apples lower LDL [1].\n- Pears are sweet [2].",
        [("- Apples lower LDL", (1,)), ("- Pears are sweet", (2,))],
        id="title-case-colon-heading",
    ),
    pytest.param(
        "Here is why:\n- Apples lower LDL [1].",
        [("Here is why:", ()), ("- Apples lower LDL", (1,))],
        id="a-sentence-introducing-a-list-is-kept",
    ),
    pytest.param(
        "The Eiffel Tower is in Paris\nIt opened in 1889 [1].",
        [("The Eiffel Tower is in Paris It opened in 1889", (1,))],
        id="a-sentence-without-a-period-is-not-a-heading",
    ),
    pytest.param(
        "- **Heart**: apples lower LDL [1].",
        [("- **Heart**: apples lower LDL", (1,))],
        id="bold-lead-in-of-a-list-item-is-text",
    ),
    pytest.param(
        "Apples lower LDL\ncholesterol [1].\n\nPears too [2].",
        [("Apples lower LDL cholesterol", (1,)), ("Pears too", (2,))],
        id="soft-wrapped-lines-join",
    ),
    pytest.param(
        "See [the docs](http://x) and [a] here.",
        [("See [the docs](http://x) and [a] here.", ())],
        id="links-are-not-citations",
    ),
]


@pytest.mark.parametrize(("answer", "expected"), CASES)
def test_segments(answer, expected):
    assert [(s.text, s.citations) for s in segment_answer(answer)] == expected


def test_segments_know_their_paragraph():
    assert segment_answer(APPLES)[1] == Segment("1. Eating apples can reduce blood pressure", (1,), 1)
    assert paragraphs(APPLES) == [
        "Eating apples has various benefits for your health:",
        "1. Eating apples can reduce blood pressure [1].",
        "In conclusion, eating apples is a great choice for maintaining a healthy and happy life.",
    ]


@pytest.mark.parametrize(
    ("pattern", "answer", "expected"),
    [
        (r"\[\^\d+\]", "Apples lower LDL[^1]. Pears [2].", [("Apples lower LDL", (1,)), ("Pears [2].", ())]),
        (r"【\d+(?:†[^】]*)?】", "Apples lower LDL【3†source】.", [("Apples lower LDL", (3,))]),
        (r"\(source \d+\)", "Apples lower LDL (source 2).", [("Apples lower LDL", (2,))]),
    ],
    ids=["footnote", "fullwidth-brackets", "words"],
)
def test_the_pattern_is_configurable(pattern, answer, expected):
    assert [(s.text, s.citations) for s in segment_answer(answer, pattern)] == expected


@pytest.mark.parametrize(
    ("marker", "numbers"),
    [("[1]", (1,)), ("[3, 1, 3]", (3, 1)), ("[4-2]", (2, 3, 4)), ("[1, 3-4]", (1, 3, 4)), ("[1-500]", (1, 500))],
)
def test_citation_numbers(marker, numbers):
    assert citation_numbers(marker) == numbers


def test_same_input_same_segments():
    assert segment_answer(APPLES, DEFAULT_CITATION_PATTERN) == segment_answer(APPLES)
