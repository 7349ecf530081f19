"""What the chain generator knows of a database: entities, their templates, filters and links (GRAMMAR section 3.1).

Everything is read from the schema and the templates file, nothing is written by hand per database:

- an **entity** is a table with a *label* column: the placeholder column of the one-placeholder SQL templates
  (``Project.Name`` in ``SELECT Location FROM Project WHERE Name = '[Project.Name]'``); a label value names an
  entity when exactly one row has it;
- an **entity template** is such a template: it asks one fact of one entity, through a join or not;
- a **filter column** of an entity is a text column, neither key nor label, whose values repeat (so a filter on it
  can narrow a list);
- a **link** is a foreign key from one entity to another (``Project.ManagerID -> Employee``), spoken of by the
  key's name without its ``ID`` suffix ("manager").
"""

from __future__ import annotations

import dataclasses
import random
import re

from sqlalchemy import text
from sqlalchemy.engine import Connection

from .database import SourceDatabase
from .documents import DocumentMap
from .fill import CompiledTemplate
from .sqltext import clauses, table_refs, value_text

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|_+")
_TEXT_TYPES = ("CHAR", "TEXT", "CLOB", "STRING")


def words_of(name: str) -> str:
    """A column or table name as words: ``JobTitle`` -> "job title", ``ManagerID`` -> "manager id"."""
    return " ".join(part.lower() for part in _CAMEL.split(name) if part)


def plural(noun: str) -> str:
    """A plain English plural of a lower-case noun."""
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u"):
        return noun[:-1] + "ies"
    return noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")


@dataclasses.dataclass(frozen=True)
class Link:
    """A foreign key from an entity to another entity, and what it is called ("manager")."""

    column: str
    target: str
    target_key: str
    noun: str


@dataclasses.dataclass
class Entity:
    """A table the generator can speak of: its label column, templates, filters and links."""

    table: str
    label: str
    key: str
    noun: str
    templates: list[CompiledTemplate]
    filters: list[str]
    links: list[Link]


class World:
    """The entities of a database with templates (built once per source)."""

    def __init__(self, db: SourceDatabase, compiled: list[CompiledTemplate], conn: Connection):
        self.db = db
        self.quote = db.quote
        self.entities: dict[str, Entity] = {}
        for tpl in compiled:
            if len(tpl.placeholders) == 1 and tpl.placeholders[0][0] == tpl.table:
                self._entity(tpl.table, tpl.placeholders[0][1], conn).templates.append(tpl)
        for entity in self.entities.values():
            entity.links = self._links(entity.table)

    def _entity(self, table: str, label: str, conn: Connection) -> Entity:
        if table not in self.entities:
            schema = self.db.schema.tables[table]
            key = schema.primary_key[0] if len(schema.primary_key) == 1 else "rowid"
            self.entities[table] = Entity(table, label, key, words_of(table), [], self._filters(table, label, conn), [])
        return self.entities[table]

    def _filters(self, table: str, label: str, conn: Connection) -> list[str]:
        schema = self.db.schema.tables[table]
        keyed = set(schema.primary_key) | {c for fk in schema.foreign_keys for c in fk.columns}
        found = []
        for column, kind in schema.columns.items():
            if column in keyed or column == label or not any(t in kind.upper() for t in _TEXT_TYPES):
                continue
            col, tab = self.quote(column), self.quote(table)
            top = conn.execute(
                text(f"SELECT COUNT(*) FROM {tab} WHERE {col} IS NOT NULL GROUP BY {col} ORDER BY 1 DESC LIMIT 1")
            ).scalar()
            if top and top >= 2:
                found.append(column)
        return found

    def _links(self, table: str) -> list[Link]:
        links = []
        for fk in sorted(self.db.schema.tables[table].foreign_keys, key=lambda fk: fk.columns):
            target = self.entities.get(fk.ref_table)
            if target is None or len(fk.columns) != 1:
                continue
            noun = re.sub(r"\s*\bid$", "", words_of(fk.columns[0])).strip() or target.noun
            links.append(Link(fk.columns[0], target.table, fk.ref_columns[0], noun))
        return links

    def named_entity(self, conn: Connection, value: str) -> Entity | None:
        """The entity whose label is ``value`` in exactly one row (the first such table by name), or None."""
        for table in sorted(self.entities):
            entity = self.entities[table]
            sql = f"SELECT COUNT(*) FROM {self.quote(table)} WHERE {self.quote(entity.label)} = :v"
            if conn.execute(text(sql), {"v": value}).scalar() == 1:
                return entity
        return None

    def labels(self, conn: Connection, entity: Entity) -> list:
        """The label values that name exactly one row, sorted (database values, not text)."""
        tab, col = self.quote(entity.table), self.quote(entity.label)
        sql = f"SELECT {col} FROM {tab} WHERE {col} IS NOT NULL GROUP BY {col} HAVING COUNT(*) = 1 ORDER BY {col}"
        return [row[0] for row in conn.execute(text(sql)) if value_text(row[0]).strip()]

    def distinct(self, conn: Connection, table: str, column: str) -> list:
        """The distinct non-empty values of a column, sorted (database values)."""
        col = self.quote(column)
        sql = f"SELECT DISTINCT {col} FROM {self.quote(table)} WHERE {col} IS NOT NULL ORDER BY {col}"
        return [row[0] for row in conn.execute(text(sql)) if value_text(row[0]).strip()]


def joins(tpl: CompiledTemplate) -> bool:
    """Whether a template's query joins tables (its answer comes from a related table)."""
    return len(table_refs(clauses(tpl.sql).get("FROM", ""))) > 1


@dataclasses.dataclass(frozen=True)
class Listing:
    """A list of an entity's rows that a conversation is narrowing: SQL conditions on alias ``t`` and their words.

    ``params`` are the bound values of the conditions (``:v0``, ``:v1``, ...); ``phrase`` names the list in words
    ("the employees whose office is Sydney"); ``used`` the columns and links already filtered on; ``joined``: the
    list was reached through a link (no further filter is asked of it)."""

    table: str
    where: tuple[str, ...]
    params: tuple[tuple[str, str], ...]
    phrase: str
    used: frozenset[str] = frozenset()
    joined: bool = False

    def param(self) -> str:
        """The name of the next bound value."""
        return f"v{len(self.params)}"


@dataclasses.dataclass
class ChainTurn:
    """One generated turn: what is asked, its resolved form, its query and exact answer, and its gold documents."""

    kind: str  # start | filter | join | entity | unanswerable
    question: str
    standalone: str
    refers_to: str | None
    sql: str  # executable, values written as literals
    rows: list[str]  # the answer, one text per result row
    doc_ids: list[str]
    missing_column: str | None = None  # an unanswerable turn asking for a column the database does not hold
    named: Entity | None = None  # the entity the answer names (one row, one value that labels one entity row)
    named_value: object = None
    hops: list = dataclasses.field(default_factory=list)  # per-hop gold (ragassay.Hop), path order; hops.py
    hop_count: int | None = None  # tables along the turn's join path (1: one table); None: unknown

    @property
    def answerable(self) -> bool:
        return bool(self.rows)


@dataclasses.dataclass
class ChainState:
    """Where a conversation is: the entity it speaks of, the list it narrows, the entity the last answer named."""

    subject: tuple[str, str] | None = None  # (table, label value)
    listing: Listing | None = None
    named: tuple[str, str] | None = None
    asked: set[str] = dataclasses.field(default_factory=set)  # standalone questions already asked


@dataclasses.dataclass
class Generation:
    """What every move of one conversation reads: the world, an open connection, the documents mapping, the
    conversation's random generator and the source's options."""

    world: World
    conn: Connection
    docs: DocumentMap | None
    rng: random.Random
    referring: dict[str, list[str]]
    missing: dict[str, list[str]]
    max_rows: int
    max_source_rows: int

    def referring_phrase(self, entity: Entity) -> str:
        """A phrase that refers back to an entity of this table ("that project", or the configured ones)."""
        return self.rng.choice(self.referring.get(entity.table) or [f"that {entity.noun}"])
