"""``answerability_behaviour_offline``: the reply's behaviour by phrase lists, no model; weak.

The reply is split into sentences (:func:`ragassay.sentences`), each lower-cased with curly apostrophes made
straight.

1. ``clarify`` when it contains a phrase of :data:`CLARIFY_PHRASES`, or a sentence ending in ``?`` addresses the
   user (has the word "you" or "your"): a question put to the user instead of an answer;
2. else ``refuse`` when the reply is empty, or at least half of its sentences contain a phrase of
   :data:`REFUSAL_PHRASES` (a reply that is mostly a refusal; "X is not mentioned, but Y is Z" is one refusing
   sentence out of one and counts as a refusal, a weakness);
3. else ``answer``.

Why weak: a refusal or clarification worded otherwise is read as an answer; an answer that says "I don't know the
exact date, but it was in spring" as a refusal; a rhetorical question to the user as a clarification. The judge
metric ``answerability_behaviour`` is the measurement; this one is for smoke tests and model-free runs.
"""

from __future__ import annotations

from ragassay import MetricResult, RAGOutput, Sample, Unscored, sentences, words

from .answerability_base import BehaviourMetric, scored, unlabelled

#: A sentence with one of these refuses (lower case, straight apostrophes).
REFUSAL_PHRASES = (
    "i don't know",
    "i do not know",
    "i cannot answer",
    "i can't answer",
    "unable to answer",
    "not able to answer",
    "cannot be answered",
    "can't be answered",
    "i am unable",
    "i'm unable",
    "unable to find",
    "cannot find",
    "can't find",
    "could not find",
    "couldn't find",
    "no information",
    "not enough information",
    "don't have information",
    "do not have information",
    "don't have any information",
    "do not have any information",
    "don't have that information",
    "do not have that information",
    "not mentioned",
    "does not mention",
    "doesn't mention",
    "do not mention",
    "don't mention",
    "not provided",
    "does not provide",
    "doesn't provide",
    "do not provide",
    "don't provide",
    "not available in",
    "no mention of",
)

#: A reply with one of these asks for clarification (lower case, straight apostrophes).
CLARIFY_PHRASES = (
    "could you clarify",
    "can you clarify",
    "please clarify",
    "could you specify",
    "can you specify",
    "please specify",
    "could you be more specific",
    "can you be more specific",
    "do you mean",
    "did you mean",
    "are you asking",
    "are you referring",
    "what do you mean",
    "which one do you",
    "which one are you",
    "could you provide more details",
    "can you provide more details",
)

WEAK = "offline, weak: refusal and clarification phrase lists (docs/metrics.md)"


def behaviour_of(reply: str) -> tuple[str, list[str]]:
    """(behaviour, what decided it: the phrases found, or the question put to the user) by the module's rules."""
    parts = [s.lower().replace("\u2019", "'") for s in sentences(reply)]  # split before lower-casing
    clarifying = [p for p in CLARIFY_PHRASES if any(p in s for s in parts)]
    to_user = [s for s in parts if s.endswith("?") and {"you", "your"} & set(words(s))]
    if clarifying or to_user:
        return "clarify", clarifying + [f"question to the user: {s}" for s in to_user[:1]]
    if not parts:
        return "refuse", ["empty reply"]
    refusing = [s for s in parts if any(p in s for p in REFUSAL_PHRASES)]
    if 2 * len(refusing) >= len(parts):
        return "refuse", sorted({p for s in refusing for p in REFUSAL_PHRASES if p in s})
    return "answer", []


class AnswerabilityBehaviourOffline(BehaviourMetric):
    """1 when the reply's behaviour read by phrase lists (answer, refuse, clarify) is the one the turn's
    answerability label expects, else 0; offline and weak (the phrase lists in the module docstring)."""

    name = "answerability_behaviour_offline"
    requires = frozenset({"answerability", "answer"})

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        if (skipped := unlabelled(sample)) is not None:
            return skipped
        behaviour, found = behaviour_of(output.answer)
        why = f"offline: {', '.join(found)}" if found else "offline: no refusal or clarification phrase"
        return scored(behaviour, sample.answerability, why, offline=WEAK)
