"""Helpers for the grammar tests: a small shop database with awkward values, templates, a source."""

from __future__ import annotations

import hashlib
import sqlite3
import textwrap
from pathlib import Path

from ragassay.components import ComponentContext
from ragassay.plugins.grammar.source import GrammarSource

CUSTOMERS = [
    (1, "Ada", "London", "gold"),
    (2, "O'Brien", "Zürich", "silver"),
    (3, "Chen", "Zürich", "gold"),
    (4, "Dupont", "Paris", None),
    (5, "Dupont", "Lyon", "bronze"),  # a duplicate name: 'Dupont' questions have two answers
    (6, "Zoë", "Oslo", "silver"),
]
ORDERS = [
    (10, 1, "lamp", 30.0),
    (11, 2, "desk", 120.5),
    (12, 3, "chair", 45.0),
    (13, 3, "rug", 80.0),
    (14, 6, "mirror", 60.0),
]

SCHEMA = """
CREATE TABLE Customer (CustomerID INTEGER PRIMARY KEY, Name TEXT, City TEXT, Tier TEXT);
CREATE TABLE Orders (OrderID INTEGER PRIMARY KEY, CustomerID INTEGER REFERENCES Customer(CustomerID),
                     Item TEXT, Amount REAL);
CREATE TABLE Empty (EmptyID INTEGER PRIMARY KEY, Label TEXT);
"""

TEMPLATES = """
templates:
  - id: city
    sql: SELECT City FROM Customer WHERE Name = '[Customer.Name]'
    texts:
      - { id: s, text: "Where does [Customer.Name] live?", attributes: { query_length: short } }
      - { id: l, text: "Could you please tell me in which city the customer [Customer.Name] lives?",
          attributes: { query_length: long } }
  - id: item
    sql: SELECT o.Item FROM Orders o JOIN Customer c ON c.CustomerID = o.CustomerID WHERE c.City = '[Customer.City]' AND c.Tier = [Customer.Tier]
    table: Orders
    texts:
      - { id: s, text: "What did the [Customer.Tier] customer in [Customer.City] order?", attributes: { query_length: short } }
documents:
  Customer: docs/customer-{CustomerID}.md
  Orders: docs/order-{OrderID}.md
"""


def make_db(path: Path, schema: str = SCHEMA) -> Path:
    """Create the shop database file at ``path``."""
    connection = sqlite3.connect(path)
    connection.executescript(schema)
    connection.executemany("INSERT INTO Customer VALUES (?, ?, ?, ?)", CUSTOMERS)
    connection.executemany("INSERT INTO Orders VALUES (?, ?, ?, ?)", ORDERS)
    connection.commit()
    connection.close()
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def project(tmp_path: Path, templates: str = TEMPLATES) -> Path:
    """A folder with shop.db and templates.yaml."""
    make_db(tmp_path / "shop.db")
    write(tmp_path / "templates.yaml", templates)
    return tmp_path


def source(tmp_path: Path, registry=None, **options) -> GrammarSource:
    """A grammar source over ``tmp_path`` (defaults: shop.db and templates.yaml)."""
    options.setdefault("path", "shop.db") if not ({"url", "sql_dump"} & set(options)) else None
    context = ComponentContext(project_dir=tmp_path, cache_dir=tmp_path / ".cache", registry=registry)
    return GrammarSource(GrammarSource.Options.model_validate(options), context=context)
