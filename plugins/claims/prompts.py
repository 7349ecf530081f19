"""The claim extractor's and the claim checker's prompts (ragassay's own wording, versioned).

The ideas come from RAGChecker (Ru et al., 2024), which extracts and checks claims with RefChecker's prompts
(amazon-science/RefChecker, ``extractor_prompts.py`` and ``checker_prompts.py``): claims are fine-grained,
self-contained knowledge points of the text, conditioned on the question, written as subject-predicate-object
triplets; a claim is checked against a reference with three labels (Entailment, Neutral, Contradiction), judged by
the reference alone, several claims of one text in one prompt ("joint checking"). The text below is ragassay's:
it asks for an explanation before each answer and for structured output, so that every reply can be validated
and re-asked. Change :data:`PROMPT_VERSION` whenever a prompt changes.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Version of both prompts and their reply models (part of every claim judge's identity).
PROMPT_VERSION = "ragassay-claims-1"

LABELS = ("Entailment", "Neutral", "Contradiction")

EXTRACTION_PROMPT = """Break the text below into claims: the smallest statements of fact it makes, each one \
checkable on its own.

Rules:
- One claim holds one piece of knowledge. Keep the conditions it needs to stay true (dates, places, quantities, \
qualifiers): "won the election in 2016", not "won the election".
- Each claim stands alone: replace pronouns and references to other sentences by what they refer to.
- Take the claims from the text only, whether they are true or not: do not add, correct or judge anything.
- Opinions, questions, greetings and remarks about the text itself ("I am not sure") are not claims. A text that \
states nothing gives an empty list of claims.
- {format_rule}

First write a short explanation of what the text states, then the claims.

Question the text answers:
{question}

Text:
{text}
"""

FORMAT_RULES = {
    "triplets": 'Write each claim as a triplet: a subject, a predicate and an object (subject "Nile", predicate '
    '"flows into", object "Mediterranean Sea").',
    "sentences": "Write each claim as one short sentence that can be read alone.",
}

CHECKING_PROMPT = """Check each numbered claim below against the reference. For every claim, in order, write a \
short explanation first, then exactly one label:
- Entailment: the reference states the claim or directly implies it;
- Contradiction: the reference states something incompatible with the claim;
- Neutral: the reference neither supports nor contradicts the claim (it may not mention the matter at all).
Judge by the reference alone, never by what you know. Give exactly {count} labels, one per claim, numbered 1 to \
{count} as the claims are.

Question (for context):
{question}

Reference:
{reference}

Claims:
{claims}
"""


def render_claim(claim: str | Sequence[str]) -> str:
    """A claim as the checker reads it: a sentence as is, a triplet as ``(subject; predicate; object)``."""
    if isinstance(claim, str):
        return claim
    return "(" + "; ".join(claim) + ")"


def numbered(claims: Sequence[str | Sequence[str]]) -> str:
    """The claims as a numbered list, one per line (``1. ...``)."""
    return "\n".join(f"{i}. {render_claim(claim)}" for i, claim in enumerate(claims, start=1))
