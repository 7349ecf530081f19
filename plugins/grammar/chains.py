"""The ``grammar_chains`` dataset source: follow-up conversations generated from a database, with exact per-turn gold.

GRAMMAR (seeds/000) generates single questions from SQL and text templates, each with the answer of its executed
query. A chain extends it to conversations: turn 1 asks a query (a template, or a list of an entity's rows), and
each next turn follows it: it filters the previous list ("Only those whose office is Sydney?"), joins to a related
table ("Which client commissioned that project?", "And their managers?"), or asks about an entity an earlier
answer named ("Which office is that employee based in?"), with the referring phrases and ellipsis the text
templates allow. Some turns are unanswerable by construction: a filter no listed row satisfies (the query returns
nothing) or a property the table has no column for. Every turn stores its SQL, its exact answer from executing it,
the documents of the rows it touches, whether it depends on the history, and its standalone form
(``metadata["chain"]``; docs/grammar.md, "Follow-up chains"). Generation is seeded: the same options give the same
conversations in any process.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import Field, model_validator

from ragassay import DatasetError, Sample, Turn, turn_id

from . import chains_entity as entity_moves
from . import chains_listing as listing_moves
from .chains_world import ChainState, ChainTurn, Generation, World
from .source import GrammarOptions, GrammarSource

#: What the agent's turn of the history says after an unanswerable turn (its exact answer is "no row").
NO_ANSWER = "There is no such record."
ROW_SEPARATOR = "; "
ATTEMPTS = 50

Move = Callable[[Generation, ChainState], "tuple[ChainTurn, ChainState] | None"]
_FOLLOWS: tuple[Move, ...] = (
    entity_moves.same_subject,
    entity_moves.named_entity,
    listing_moves.filter_move,
    listing_moves.join_move,
)
_UNANSWERABLE: tuple[Move, ...] = (listing_moves.unanswerable_filter, entity_moves.missing_attribute)


class ChainsOptions(GrammarOptions):
    """Options of the grammar_chains source: the grammar source's database, templates and documents, and the
    chains to generate."""

    conversations: int = Field(20, ge=1, description="How many conversations to generate.")
    min_turns: int = Field(3, ge=1, description="Fewest user turns of a conversation.")
    max_turns: int = Field(5, ge=1, description="Most user turns of a conversation.")
    seed: int = Field(0, description="Seed of every random choice (same seed and options: same conversations).")
    unanswerable_rate: float = Field(
        0.2, ge=0.0, le=1.0, description="Chance that a follow-up turn is made unanswerable, where one can be."
    )
    max_rows: int = Field(8, ge=2, description="Most rows of a list that a conversation starts with.")
    referring: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Table -> phrases a follow-up uses for an entity of it (e.g. Project = ['it', 'that project']); "
        "default: 'that <table>'.",
    )
    missing_attributes: dict[str, list[str]] = Field(
        default_factory=lambda: {"*": ["phone number", "email address"]},
        description="Table -> properties an unanswerable turn may ask of its entities ('*': any other table); "
        "those the table has a column for are skipped.",
    )

    @model_validator(mode="after")
    def _chain_options(self) -> ChainsOptions:
        if self.min_turns > self.max_turns:
            raise ValueError(f"min_turns ({self.min_turns}) is more than max_turns ({self.max_turns})")
        if self.sampling.mode != "all":
            raise ValueError("grammar_chains does not sample pairs: remove the 'sampling' option")
        return self


class GrammarChainsSource(GrammarSource):
    """Generates follow-up conversations from a relational database, each turn with its exact SQL answer."""

    name = "grammar_chains"
    Options = ChainsOptions

    def samples(self) -> Iterator[Sample]:
        """Yield the turns of each conversation, in order (turn 1 first)."""
        state = self._prepare()
        self.kinds: Counter[str] = Counter()
        with state.db.connect() as conn:
            world = World(state.db, state.compiled, conn)
            if not world.entities:
                raise DatasetError(
                    "grammar_chains: no template asks one fact of one entity (one [Table.Column] placeholder of the "
                    "table it is about); add such templates to the templates file"
                )
            for index in range(self.options.conversations):
                turns = self._conversation(world, conn, state.docs, index)
                self._check_documents(state, turns, index)
                self.kinds.update(t.kind for t in turns)
                yield from chain_samples(f"chain-{index + 1:03d}", turns)

    def plan(self) -> list[dict[str, Any]]:
        """The entities chains speak of: label, templates, filter columns and links."""
        state = self._prepare()
        with state.db.connect() as conn:
            world = World(state.db, state.compiled, conn)
        return [
            {
                "table": e.table,
                "label": e.label,
                "templates": ", ".join(t.template.id for t in e.templates),
                "filters": ", ".join(e.filters),
                "links": ", ".join(f"{x.column} -> {x.target}" for x in e.links),
            }
            for e in world.entities.values()
        ]

    def summary(self) -> list[dict[str, Any]]:
        """Turns generated by kind, after :meth:`samples` ran."""
        return [{"kind": kind, "turns": n} for kind, n in sorted(getattr(self, "kinds", Counter()).items())]

    def _conversation(self, world: World, conn, docs, index: int) -> list[ChainTurn]:
        opts = self.options
        rng = random.Random(f"grammar_chains/{opts.seed}/{index}")
        g = Generation(
            world, conn, docs or None, rng, opts.referring, opts.missing_attributes, opts.max_rows, opts.max_source_rows
        )
        for _ in range(ATTEMPTS):
            turns = build_chain(g, rng.randint(opts.min_turns, opts.max_turns), opts.unanswerable_rate)
            if len(turns) >= opts.min_turns:
                return turns
        raise DatasetError(
            f"grammar_chains: could not make a conversation of {opts.min_turns} turns or more from this database "
            f"and templates in {ATTEMPTS} tries; lower min_turns or add templates and related tables"
        )

    def _check_documents(self, state, turns: list[ChainTurn], index: int) -> None:
        for turn in turns:
            missing = [d for d in turn.doc_ids if state.corpus_ids is not None and d not in state.corpus_ids]
            if missing:
                raise DatasetError(
                    f"grammar_chains: the documents mapping gives '{missing[0]}' for a turn of chain-{index + 1:03d}, "
                    "but no corpus document has that id; fix the mapping or the 'documents' patterns"
                )


def build_chain(g: Generation, length: int, unanswerable_rate: float) -> list[ChainTurn]:
    """Up to ``length`` turns: a start, then follow-ups chosen at random among those that apply."""
    starts = [entity_moves.start_entity, listing_moves.start_listing]
    g.rng.shuffle(starts)
    state = ChainState()
    made = next((m for m in (move(g, state) for move in starts) if m is not None), None)
    if made is None:
        return []
    turns, state = [made[0]], made[1]
    while len(turns) < length:
        follows = list(_FOLLOWS)
        g.rng.shuffle(follows)
        if g.rng.random() < unanswerable_rate:
            follows = list(_UNANSWERABLE) + follows
        made = next((m for m in (move(g, state) for move in follows) if m is not None), None)
        if made is None:
            break
        turns.append(made[0])
        state = made[1]
    return turns


def answer_of(rows: list[str]) -> str:
    """A turn's exact answer as text: its result rows in query order, joined by "; " (empty: no answer)."""
    return ROW_SEPARATOR.join(rows)


def chain_samples(conversation_id: str, turns: list[ChainTurn]) -> list[Sample]:
    """The samples of one conversation: each turn with the history before it and ``metadata["chain"]``."""
    samples: list[Sample] = []
    history: list[Turn] = []
    earlier: list[dict[str, Any]] = []
    for number, turn in enumerate(turns, start=1):
        answer = answer_of(turn.rows)
        depends = turn.refers_to is not None and turn.refers_to.lower() not in turn.question.lower()
        chain = {
            "sql": turn.sql,
            "kind": turn.kind,
            "standalone_question": turn.standalone,
            "refers_to": turn.refers_to,
            "depends_on_history": depends,
            "earlier": list(earlier),
            "rows": list(turn.rows),
            "missing_column": turn.missing_column,
        }
        samples.append(
            Sample(
                question_id=turn_id(conversation_id, number),
                question=turn.question,
                conversation_id=conversation_id,
                turn=number,
                history=list(history),
                reference_answers=[answer] if turn.rows else [],
                reference_context_ids=turn.doc_ids,
                is_answerable=turn.answerable,
                answerability="answerable" if turn.answerable else "unanswerable",
                metadata={"chain": chain},
                turn_kind=turn.kind,
                hops=turn.hops,
                **({"hop_count": turn.hop_count} if turn.hop_count is not None else {}),
            )
        )
        history += [Turn(speaker="user", text=turn.question), Turn(speaker="agent", text=answer or NO_ANSWER)]
        earlier.append({"question": turn.question, "standalone_question": turn.standalone, "refers_to": turn.refers_to})
    return samples
