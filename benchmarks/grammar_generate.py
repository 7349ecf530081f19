"""GRAMMAR generation speed and memory: the Aurp example, then a generated database at 10k and 100k pairs.

Each synthetic size runs in its own process (a clean peak RSS), streaming every pair through the grammar
source to a JSONL file exactly as ``ragassay generate`` does. Goal (issue 4): 100,000 pairs in under 30 s,
with memory flat between 10k and 100k pairs.

    python benchmarks/grammar_generate.py [--sizes 10000 100000]
"""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEXTS_PER_SQL = 4
SQL_TEMPLATES = {
    "item_name": "SELECT Name FROM Item WHERE Code = '[Item.Code]'",
    "item_category": "SELECT Category FROM Item WHERE Code = '[Item.Code]'",
    "item_price": "SELECT Price FROM Item WHERE Code = '[Item.Code]'",
    "item_supplier": "SELECT s.Name FROM Supplier s JOIN Item i ON i.SupplierID = s.SupplierID "
    "WHERE i.Code = '[Item.Code]'",
    "item_country": "SELECT s.Country FROM Supplier s JOIN Item i ON i.SupplierID = s.SupplierID "
    "WHERE i.Code = '[Item.Code]'",
}
TEXTS = [
    ("short1", "short", "What about item [Item.Code]?"),
    ("short2", "short", "Item [Item.Code]: tell me."),
    (
        "long1",
        "long",
        "I am preparing the quarterly catalogue review and would like to know this detail for "
        "the item with code [Item.Code], please.",
    ),
    (
        "long2",
        "long",
        "Could you look up our records and tell me the requested detail of the product whose "
        "code is [Item.Code], since a customer asked?",
    ),
]


def build_project(folder: Path, pairs: int) -> None:
    """A SQLite database with enough rows for ``pairs`` pairs, and a templates file for it."""
    rows = pairs // (len(SQL_TEMPLATES) * TEXTS_PER_SQL)
    db = sqlite3.connect(folder / "catalogue.db")
    db.executescript("""
        CREATE TABLE Supplier (SupplierID INTEGER PRIMARY KEY, Name TEXT, Country TEXT);
        CREATE TABLE Item (ItemID INTEGER PRIMARY KEY, Code TEXT UNIQUE, Name TEXT, Category TEXT, Price REAL,
                           SupplierID INTEGER REFERENCES Supplier(SupplierID));
    """)
    db.executemany(
        "INSERT INTO Supplier VALUES (?, ?, ?)",
        [(i, f"Supplier {i}", ["Zürich", "Perth", "Lyon", "Oslo"][i % 4]) for i in range(1, 51)],
    )
    db.executemany(
        "INSERT INTO Item VALUES (?, ?, ?, ?, ?, ?)",
        [
            (i, f"C-{i:06d}", f"Item {i}", f"Category {i % 37}", round(1 + i * 0.37, 2), 1 + i % 50)
            for i in range(1, rows + 1)
        ],
    )
    db.commit()
    db.close()
    lines = ["templates:"]
    for tid, sql in SQL_TEMPLATES.items():
        lines += [f"  - id: {tid}", f'    sql: "{sql}"', "    texts:"]
        lines += [
            f'      - {{ id: {i}, text: "{t}", attributes: {{ query_length: {length} }} }}' for i, length, t in TEXTS
        ]
    lines += ["documents:", "  Item: docs/item-{ItemID}.md", "  Supplier: docs/supplier-{SupplierID}.md"]
    (folder / "templates.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


CHILD = textwrap.dedent("""
    import json, resource, sys, time
    from pathlib import Path
    from ragassay.components import ComponentContext
    from ragassay.plugins.grammar.source import GrammarSource
    folder = Path(sys.argv[1])
    options = GrammarSource.Options(path="catalogue.db", templates="templates.yaml")
    source = GrammarSource(options, context=ComponentContext(project_dir=folder))
    source._prepare()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    count = 0
    with open(folder / "pairs.jsonl", "w", encoding="utf-8") as handle:
        for sample in source.samples():
            handle.write(sample.model_dump_json() + "\\n")
            count += 1
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"pairs": count, "seconds": elapsed, "rss_before_kb": before, "rss_peak_kb": peak}))
""")


def measure(pairs: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build_project(folder, pairs)
        out = subprocess.run([sys.executable, "-c", CHILD, str(folder)], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)


def aurp() -> tuple[int, int, float]:
    from ragassay.components import ComponentContext
    from ragassay.plugins.grammar.source import GrammarSource

    options = GrammarSource.Options(sql_dump="aurp.sql", templates="templates.yaml", documents=["corpus/**/*.md"])
    start = time.perf_counter()
    source = GrammarSource(options, context=ComponentContext(project_dir=REPO / "examples" / "aurp"))
    samples = list(source.samples())
    return len(samples), len({s.group_id for s in samples}), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="Pair counts to generate.")
    args = parser.parse_args()
    print(
        f"grammar generation benchmark: Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
        f"{platform.machine()}"
    )
    pairs, groups, seconds = aurp()
    print(
        f"Aurp example (open SQL dump, validate templates, read corpus, generate): {pairs} pairs in "
        f"{groups} groups, {seconds:.2f} s ({pairs / seconds:,.0f} pairs/s)"
    )
    print(
        f"generated database: {len(SQL_TEMPLATES)} SQL templates x {TEXTS_PER_SQL} text templates, "
        "documents mapping on, JSONL written"
    )
    print(f"{'pairs':>9} {'seconds':>8} {'pairs/s':>9} {'peak RSS MB':>12} {'RSS growth MB':>14}")
    results = []
    for size in args.sizes:
        r = measure(size)
        growth = (r["rss_peak_kb"] - r["rss_before_kb"]) / 1024
        results.append((r, growth))
        print(
            f"{r['pairs']:>9,} {r['seconds']:>8.2f} {r['pairs'] / r['seconds']:>9,.0f} "
            f"{r['rss_peak_kb'] / 1024:>12.1f} {growth:>14.1f}"
        )
    largest = results[-1][0]
    met = "met" if largest["pairs"] >= 100_000 and largest["seconds"] < 30 else "NOT met"
    first_rss = results[0][0]["rss_peak_kb"] / 1024
    print(
        f"goal 100,000 pairs < 30 s: {met} ({largest['pairs']:,} pairs in {largest['seconds']:.2f} s); "
        f"peak RSS {first_rss:.1f} -> {largest['rss_peak_kb'] / 1024:.1f} MB"
    )


if __name__ == "__main__":
    main()
