"""Chain moves about one entity: ask a fact of it with a template, refer back to it, ask what it does not hold.

A follow-up turn is a text template of the templates file rendered with a *referring phrase* in place of the
entity's name ("When did that project start?", "Who managed it?"); its standalone form is the same template
rendered with the name. A text template is used with a phrase only where the phrase reads as English: not after
an article or "called" ("the project called that project"), not before the entity's own noun ("the that project
project"), and a bare pronoun never before "'s".
"""

from __future__ import annotations

from .chains_world import ChainState, ChainTurn, Entity, Generation, joins, words_of
from .fill import CompiledTemplate, answer_text, fill, render_text
from .hops import hop_gold
from .sqltext import display_sql, sql_literal, value_text

_BEFORE = {"the", "a", "an", "called", "named", "of the"}
_QUESTION_WORDS = {"who", "what", "where", "when", "which", "how"}
_POSSESSIVE = {"it": "its", "they": "their", "them": "their", "he": "his", "she": "her", "him": "his"}
TRIES = 10


def referable(parts: list[str | int], phrase: str, noun: str) -> bool:
    """Whether a text template still reads as English with ``phrase`` in place of its one placeholder."""
    k = next(i for i, p in enumerate(parts) if isinstance(p, int))
    before = parts[k - 1] if k > 0 and isinstance(parts[k - 1], str) else ""
    after = parts[k + 1] if k + 1 < len(parts) and isinstance(parts[k + 1], str) else ""
    last = before.split()[-1].lower() if before.split() else ""
    following = after.split()[0].lower().strip("?.,!") if after.split() else ""
    if last in _BEFORE or last == noun or following == noun:
        return False
    return not (after.startswith("'s") and " " not in phrase.strip())


def capitalised(question: str) -> str:
    return question[:1].upper() + question[1:]


def and_prefixed(g: Generation, question: str) -> str:
    """Half of the follow-ups open with "And" ("And who managed it?"), where they open with a question word."""
    first = question.split(" ", 1)[0].lower()
    if first in _QUESTION_WORDS and g.rng.random() < 0.5:
        return "And " + question[:1].lower() + question[1:]
    return question


def ask(g: Generation, tpl: CompiledTemplate, value: object, phrase: str | None, kind: str) -> ChainTurn | None:
    """A turn asking ``tpl`` of the entity ``value`` (named, or referred to by ``phrase``); None when the template
    gives no single answer for it or no text template reads well with the phrase."""
    filled = next(fill(g.conn, tpl, [[value]], {}, g.max_source_rows), None)
    if filled is None:
        return None
    entity = g.world.entities[tpl.table]
    texts = tpl.texts if phrase is None else [(i, p) for i, p in tpl.texts if referable(p, phrase, entity.noun)]
    if not texts:
        return None
    _, parts = g.rng.choice(texts)
    standalone = render_text(parts, (value,))
    question = standalone if phrase is None else and_prefixed(g, capitalised(render_text(parts, (phrase,))))
    doc_ids = g.docs.reference_ids(g.conn, filled.source_rows, tpl.answer_columns) if g.docs else []
    sql = display_sql(tpl.template.sql, {tpl.placeholders[0]: value})
    turn = ChainTurn(kind, question, standalone, None if phrase is None else value_text(value), sql, [], doc_ids)
    turn.rows = [answer_text(filled.answer)]
    turn.named = g.world.named_entity(g.conn, filled.answer[0]) if len(filled.answer) == 1 else None
    turn.named_value = filled.answer[0]
    plan = tpl.hop_plan
    turn.hop_count = plan.hop_count if plan is not None else None
    turn.hops = hop_gold(g.conn, plan, {"p0": value}, g.docs, tpl.answer_columns, g.max_source_rows)
    return turn


def _after(state: ChainState, turn: ChainTurn, subject: tuple[str, object], key: str) -> ChainState:
    named = (turn.named.table, turn.named_value) if turn.named is not None else None
    state.asked.add(key)
    return ChainState(subject=subject, listing=None, named=named, asked=state.asked)


def start_entity(g: Generation, state: ChainState) -> tuple[ChainTurn, ChainState] | None:
    """Turn 1 about one entity, fully explicit: a template of a random entity filled with a random label."""
    entities = [g.world.entities[t] for t in sorted(g.world.entities) if g.world.entities[t].templates]
    for _ in range(TRIES):
        entity = g.rng.choice(entities)
        labels = g.world.labels(g.conn, entity)
        if not labels:
            continue
        value, tpl = g.rng.choice(labels), g.rng.choice(entity.templates)
        turn = ask(g, tpl, value, None, "start")
        if turn is not None:
            return turn, _after(state, turn, (entity.table, value), f"{tpl.template.id}|{value!r}")
    return None


def _about(g: Generation, state: ChainState, entity: Entity, value: object, kind: str | None):
    templates = list(entity.templates)
    g.rng.shuffle(templates)
    for tpl in templates:
        key = f"{tpl.template.id}|{value!r}"
        if key in state.asked:
            continue
        turn = ask(g, tpl, value, g.referring_phrase(entity), kind or ("join" if joins(tpl) else "entity"))
        if turn is not None:
            return turn, _after(state, turn, (entity.table, value), key)
    return None


def ambiguous(state: ChainState) -> bool:
    """Whether "that <noun>" could mean two entities: the previous answer named another one of the subject's table."""
    return (
        state.subject is not None
        and state.named is not None
        and state.named != state.subject
        and (state.named[0] == state.subject[0])
    )


def same_subject(g: Generation, state: ChainState) -> tuple[ChainTurn, ChainState] | None:
    """Another fact of the entity the conversation is about, referred to ("When did it start?"); a template that
    joins to a related table makes a ``join`` turn ("Which client commissioned that project?")."""
    if state.subject is None or ambiguous(state):
        return None
    table, value = state.subject
    return _about(g, state, g.world.entities[table], value, None)


def named_entity(g: Generation, state: ChainState) -> tuple[ChainTurn, ChainState] | None:
    """A fact of the entity the previous answer named, referred to ("Which office is that employee based in?")."""
    if state.named is None:
        return None
    table, value = state.named
    return _about(g, state, g.world.entities[table], value, "entity")


def missing_attribute(g: Generation, state: ChainState) -> tuple[ChainTurn, ChainState] | None:
    """Unanswerable by construction: a property of the current entity that its table has no column for."""
    if state.subject is None or ambiguous(state):
        return None
    table, value = state.subject
    entity = g.world.entities[table]
    schema = g.world.db.schema.tables[table]
    held = {words_of(c) for c in schema.columns} | {c.lower() for c in schema.columns}
    wanted = g.missing.get(table, g.missing.get("*", []))
    absent = [a for a in wanted if a.lower() not in held and a.replace(" ", "").lower() not in held]
    key = f"missing|{table}|{value!r}"
    if not absent or key in state.asked:
        return None
    attribute = g.rng.choice(absent)
    column = "".join(w.capitalize() for w in attribute.split())
    phrase = g.referring_phrase(entity)
    q = g.world.quote
    sql = f"SELECT t.{q(column)} FROM {q(table)} AS t WHERE t.{q(entity.label)} = {sql_literal(value)}"
    possessive = _POSSESSIVE.get(phrase.strip().lower())
    asked = f"What is {possessive} {attribute}?" if possessive else f"What is the {attribute} of {phrase}?"
    turn = ChainTurn(
        "unanswerable",
        and_prefixed(g, asked),
        f"What is the {attribute} of {value_text(value)}?",
        value_text(value),
        sql,
        [],
        [],
        missing_column=column,
    )
    state.asked.add(key)
    return turn, state
