"""Chain moves on a list of an entity's rows: list, narrow with a filter, follow a link to a related table.

A list is ``SELECT t.<label> FROM <table> AS t WHERE <conditions> ORDER BY t.<label>``; a condition is a filter
column equal to a value ("whose office is Sydney") or a link whose target has a label ("whose manager is Mei
Chen"). The follow-ups speak with ellipsis: "Only those whose office is Sydney?" (a ``filter`` turn, standing for
"List the employees whose department is X and whose office is Sydney."), "And their managers?" (a ``join`` turn).
A filter whose value no row of the current list has returns nothing: an ``unanswerable`` turn by construction.
The gold documents of a list are those of the rows it lists.
"""

from __future__ import annotations

import dataclasses
import re

from sqlalchemy import text

from .chains_world import ChainState, ChainTurn, Entity, Generation, Listing, plural, words_of
from .hops import rows_hops
from .sqltext import sql_literal, value_text

_PARAM = re.compile(r":(v\d+)\b")


def display(listing: Listing, sql: str) -> str:
    """``sql`` with the listing's bound values written as literals (the stored, executable query)."""
    values = dict(listing.params)
    return _PARAM.sub(lambda m: sql_literal(values[m.group(1)]), sql)


def _condition(g: Generation, entity: Entity, name: str, param: str) -> tuple[str, str]:
    """(SQL on alias t, words) of "<name> equals :param", for a filter column or a link."""
    q = g.world.quote
    link = next((x for x in entity.links if x.column == name), None)
    if link is None:
        return f"t.{q(name)} = :{param}", words_of(name)
    target = g.world.entities[link.target]
    sub = f"SELECT x.{q(link.target_key)} FROM {q(target.table)} AS x WHERE x.{q(target.label)} = :{param}"
    return f"t.{q(link.column)} IN ({sub})", link.noun


def _value_counts(g: Generation, entity: Entity, name: str, listing: Listing | None) -> list[tuple[object, int]]:
    """(value, rows) of a filter column or a link's target label, over the listing's rows (or the whole table)."""
    q = g.world.quote
    link = next((x for x in entity.links if x.column == name), None)
    where = " AND ".join(listing.where) if listing else "1 = 1"
    params = dict(listing.params) if listing else {}
    if link is None:
        column, joined = f"t.{q(name)}", ""
    else:
        target = g.world.entities[link.target]
        column = f"x.{q(target.label)}"
        joined = f" JOIN {q(target.table)} AS x ON x.{q(link.target_key)} = t.{q(link.column)}"
    sql = (
        f"SELECT {column}, COUNT(*) FROM {q(entity.table)} AS t{joined} WHERE {where} AND {column} IS NOT NULL "
        f"GROUP BY {column} ORDER BY {column}"
    )
    return [(v, n) for v, n in g.conn.execute(text(sql), params) if value_text(v).strip()]


def rows_of(g: Generation, listing: Listing) -> tuple[str, list[object], list[tuple[str, tuple]]]:
    """The listing's SQL (executable), its label values in order, and its rows as (table, key) for documents."""
    entity = g.world.entities[listing.table]
    q = g.world.quote
    body = f"FROM {q(entity.table)} AS t WHERE {' AND '.join(listing.where)} ORDER BY t.{q(entity.label)}"
    sql = f"SELECT t.{q(entity.label)} {body}"
    keyed = f"SELECT t.{q(entity.label)}, t.{q(entity.key)} {body}, t.{q(entity.key)}"
    found = g.conn.execute(text(keyed), dict(listing.params)).fetchall()
    return display(listing, sql), [r[0] for r in found], [(entity.table, (r[1],)) for r in found]


def _turn(g: Generation, listing: Listing, kind: str, question: str, standalone: str, refers_to: str | None):
    sql, labels, keys = rows_of(g, listing)
    entity = g.world.entities[listing.table]
    doc_ids = g.docs.reference_ids(g.conn, keys, [(entity.table, entity.label)]) if g.docs and keys else []
    turn = ChainTurn(kind, question, standalone, refers_to, sql, [value_text(v) for v in labels], doc_ids)
    turn.hop_count = 1  # the listed table's rows (a link filter names its value); a join turn sets its own
    if len(labels) == 1:
        turn.named, turn.named_value = entity, labels[0]
    return turn


def _listed(state: ChainState, turn: ChainTurn, listing: Listing) -> ChainState:
    state.asked.add(listing.phrase)
    named = (turn.named.table, turn.named_value) if turn.named is not None else None
    return ChainState(subject=named, listing=listing, named=named, asked=state.asked)


def start_listing(g: Generation, state: ChainState) -> tuple[ChainTurn, ChainState] | None:
    """Turn 1 listing an entity's rows by one condition that holds for 2 to ``max_rows`` rows."""
    starts = []
    for table in sorted(g.world.entities):
        entity = g.world.entities[table]
        for name in entity.filters + [link.column for link in entity.links]:
            counts = _value_counts(g, entity, name, None)
            starts += [(entity, name, v) for v, n in counts if 2 <= n <= g.max_rows]
    if not starts:
        return None
    entity, name, value = g.rng.choice(starts)
    where, words = _condition(g, entity, name, "v0")
    phrase = f"the {plural(entity.noun)} whose {words} is {value_text(value)}"
    listing = Listing(entity.table, (where,), (("v0", value),), phrase, frozenset({name}))
    question = g.rng.choice([f"List {phrase}.", f"Which are {phrase}?"])
    turn = _turn(g, listing, "start", question, question, None)
    return turn, _listed(state, turn, listing)


def filter_move(g: Generation, state: ChainState, empty: bool = False) -> tuple[ChainTurn, ChainState] | None:
    """Narrow the current list by one more condition ("Only those whose office is Sydney?"); with ``empty``, a
    value of the column that no listed row has, so the query returns nothing (unanswerable by construction)."""
    listing = state.listing
    if listing is None or listing.joined:
        return None
    entity = g.world.entities[listing.table]
    total = len(rows_of(g, listing)[1])
    choices = []
    for name in [n for n in entity.filters + [link.column for link in entity.links] if n not in listing.used]:
        present = _value_counts(g, entity, name, listing)
        if empty:
            held = {v for v, _ in present}
            choices += [(name, v) for v, _ in _value_counts(g, entity, name, None) if v not in held]
        else:
            choices += [(name, v) for v, n in present if n < total]
    if not choices:
        return None
    name, value = g.rng.choice(choices)
    where, words = _condition(g, entity, name, listing.param())
    clause = f"whose {words} is {value_text(value)}"
    narrowed = dataclasses.replace(
        listing,
        where=listing.where + (where,),
        params=listing.params + ((listing.param(), value),),
        phrase=f"{listing.phrase} and {clause}",
        used=listing.used | {name},
    )
    if narrowed.phrase in state.asked:
        return None
    question = g.rng.choice([f"Only those {clause}?", f"And just the ones {clause}?"])
    turn = _turn(g, narrowed, "unanswerable" if empty else "filter", question, f"List {narrowed.phrase}.", None)
    turn.refers_to = listing.phrase
    if empty:
        state.asked.add(narrowed.phrase)
        return turn, state
    return turn, _listed(state, turn, narrowed)


def unanswerable_filter(g: Generation, state: ChainState) -> tuple[ChainTurn, ChainState] | None:
    """A filter no listed row satisfies: the turn's query returns nothing."""
    return filter_move(g, state, empty=True)


def join_move(g: Generation, state: ChainState) -> tuple[ChainTurn, ChainState] | None:
    """Follow a link from the current list to the related entity's rows ("And their managers?")."""
    listing = state.listing
    if listing is None or listing.joined:
        return None
    entity = g.world.entities[listing.table]
    if not entity.links:
        return None
    link = g.rng.choice(entity.links)
    target = g.world.entities[link.target]
    q = g.world.quote
    inner = f"SELECT t.{q(link.column)} FROM {q(entity.table)} AS t WHERE {' AND '.join(listing.where)}"
    nouns = plural(link.noun)
    joined = Listing(
        target.table,
        (f"t.{q(link.target_key)} IN ({inner})",),
        listing.params,
        f"the {nouns} of {listing.phrase}",
        joined=True,
    )
    if joined.phrase in state.asked:
        return None
    question = g.rng.choice([f"And their {nouns}?", f"What about their {nouns}?"])
    turn = _turn(g, joined, "join", question, f"List {joined.phrase}.", listing.phrase)
    if not turn.rows:
        return None
    linked = dataclasses.replace(listing, where=listing.where + (f"t.{q(link.column)} IS NOT NULL",))
    turn.hop_count = 2
    turn.hops = rows_hops(
        g.conn,
        g.docs,
        [
            (entity.table, rows_of(g, linked)[2], [(entity.table, entity.label)]),
            (target.table, rows_of(g, joined)[2], [(target.table, target.label)]),
        ],
    )
    return turn, _listed(state, turn, joined)
