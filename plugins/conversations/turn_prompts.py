"""The prompts of the per-turn conversation judges (ragassay's own wording, versioned) and how a turn is shown.

- :data:`SUPPORT_PROMPT` (``turn_*_support``, ``turn_unsupported``): split the answer into claims, as RAGChecker
  (Ru et al., 2024) and RefChecker do, and say for each where its support is: this turn's retrieved contexts, an
  earlier turn of the conversation, or nothing (issue 39's "supported by an earlier turn" distinction, which
  DeepEval's turn faithfulness does not make: it checks claims against the retrieval context only).
- :data:`BEHAVIOUR_PROMPT` (``answerability_behaviour``): did the system answer, refuse or ask for clarification.
- :data:`RETENTION_PROMPT` (``knowledge_retention``): the facts the user gave in earlier turns, each kept, asked
  again or contradicted by the answer (DeepEval's knowledge retention, made per turn and per fact).

Every reply is structured output with the explanation before the verdict, so that it can be validated and
re-asked. Change the matching version whenever a prompt or its reply model changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SUPPORT_VERSION = "ragassay-turn-support-1"
BEHAVIOUR_VERSION = "ragassay-answerability-1"
RETENTION_VERSION = "ragassay-retention-1"

SUPPORT_PROMPT = """You check where the claims of an answer in a conversation come from.

First split the answer into claims: the smallest statements of fact it makes, each checkable on its own and \
readable alone (replace pronouns by what they refer to). Opinions, questions, greetings and remarks about the \
answer itself are not claims; an answer that states nothing has no claims. Give at most {max_claims} claims.

Then, for every claim, write a short explanation first, then its support:
- "context": one of this turn's retrieved contexts states the claim or directly implies it; give the number of \
that context in "context" (and no turn);
- "history": no retrieved context supports it, but an earlier turn of the conversation (what the user said or \
what the assistant answered before) states it or directly implies it; give that turn's number in "turn" (and no \
context);
- "none": neither supports it; give no turn and no context.
Prefer "context" when both a context and an earlier turn support a claim. Judge by the texts alone, never by what \
you know.

Earlier turns of the conversation:
{history}

Current question:
{question}

Retrieved contexts of this turn:
{contexts}

Answer:
{answer}
"""

BEHAVIOUR_PROMPT = """You classify what an assistant did with the user's last question in a conversation.

- "answer": it gives the information asked for, in full or in part (an answer with caveats, or one that says some \
part is not known but answers the rest, is an answer);
- "refuse": it gives none of the information asked for: it says it cannot answer, does not know, or the \
information is not available;
- "clarify": instead of answering, it asks the user to clarify or specify what they mean.

Do not judge whether the answer is correct, only what the assistant did. Write a short explanation first, then \
the behaviour.

Earlier turns of the conversation:
{history}

Current question:
{question}

Assistant's reply:
{answer}
"""

RETENTION_PROMPT = """You check whether an assistant remembers what the user told it earlier in a conversation.

First list the facts the user gave about themselves, their situation or their request in the earlier turns below \
(not the questions they asked, and nothing the assistant said); give the number of the turn where the user gave \
each fact. Give at most {max_facts} facts; none is a valid answer.

Then, for every fact, write a short explanation first, then its status in the assistant's reply to the current \
question:
- "asked_again": the reply asks the user for this fact again;
- "contradicted": the reply states or assumes something incompatible with the fact;
- "kept": neither (the reply uses the fact, or does not need it).

Earlier turns of the conversation:
{history}

Current question:
{question}

Assistant's reply:
{answer}
"""


def turn_numbers(history: Sequence[Any]) -> list[int]:
    """The turn number of each utterance of ``history``: a user utterance starts the next turn (1, 2, ...), an
    agent's reply belongs to the user turn it follows (0 for an agent utterance before any user turn)."""
    numbers, current = [], 0
    for utterance in history:
        if utterance.speaker == "user":
            current += 1
        numbers.append(current)
    return numbers


def render_history(history: Sequence[Any], limit: int, users_only: bool = False) -> str:
    """The earlier turns, one utterance per line as ``Turn 2, user: ...`` (each cut at ``limit`` characters);
    ``(none: this is the first turn)`` when there are none."""
    lines = [
        f"Turn {number}, {'user' if u.speaker == 'user' else 'assistant'}: {u.text[:limit]}"
        for u, number in zip(history, turn_numbers(history))
        if not users_only or u.speaker == "user"
    ]
    return "\n".join(lines) if lines else "(none: this is the first turn)"


def render_contexts(contexts: Sequence[str], limit: int) -> str:
    """The retrieved contexts numbered from 1 (``[1] ...``), or ``(none retrieved)``."""
    if not contexts:
        return "(none retrieved)"
    return "\n\n".join(f"[{i}] {text[:limit]}" for i, text in enumerate(contexts, start=1))
