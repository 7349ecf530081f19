"""Results-store size with contexts stored by reference (schema 4) against inline (schema 3), and the migration.

A seeded synthetic retrieval run: a corpus of 5,000 documents of about 250 words, 4 systems x 300 questions =
1,200 outputs, each with 100 contexts drawn from the corpus (ids, document ids, scores) and two metric values,
written through the store's write API into a SQLite file. The same rows are then rewritten with their contexts
inline, as schema 3 stored them (``output_json`` = the output's full JSON), and that copy is migrated to schema 4
by opening it. Prints the corpus size, each store's size (after VACUUM), the ratios to the corpus (goal: under 3x)
and the write and migration times.

    python benchmarks/store_size.py [--documents 5000] [--outputs 1200] [--k 100] [--folder DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

GOAL_RATIO = 3.0
SYSTEMS = 4


def corpus(documents: int, seed: int = 0) -> list[str]:
    """``documents`` texts of 150-350 words (mean 250) drawn from a 20,000-word vocabulary."""
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(3, 10))) for _ in range(20_000)]
    return [" ".join(rng.choices(vocabulary, k=rng.randint(150, 350))) + "." for _ in range(documents)]


def results(texts: list[str], outputs: int, k: int, seed: int = 1):
    """Unit results of ``SYSTEMS`` systems with ``k`` scored contexts each (whole documents as chunks)."""
    from ragassay.models import MetricValue, RAGOutput
    from ragassay.store.database import UnitResult

    rng = random.Random(seed)
    questions = outputs // SYSTEMS
    for system in range(SYSTEMS):
        for q in range(questions):
            picked = rng.sample(range(len(texts)), k)
            scores = sorted((rng.uniform(0, 30) for _ in picked), reverse=True)
            output = RAGOutput(
                answer="",
                contexts=[texts[i] for i in picked],
                context_ids=[f"doc{i:05d}#0" for i in picked],
                context_document_ids=[f"doc{i:05d}" for i in picked],
                retrieved=True,
                latency_s=0.01,
                trace={"scores": scores, "retrieval": {}},
            )
            metrics = [MetricValue(metric=m, value=rng.random()) for m in ("ndcg_at_k", "recall_at_k")]
            yield UnitResult(
                f"system{system}", f"q{q:04d}", "ok", output, metrics=metrics, system_key="s", sample_key="x"
            )


def write_store(path: Path, texts: list[str], outputs: int, k: int) -> float:
    """Write the run into a new store at ``path``; returns the seconds the writes took."""
    from ragassay.models import Sample
    from ragassay.store import open_store

    store = open_store(f"sqlite:///{path}")
    try:
        store.create_run(
            {
                "id": "run",
                "fingerprint": "f",
                "project": "store-size",
                "config_path": "-",
                "config_json": "{}",
                "spec_json": "{}",
                "ragassay_version": "0",
                "sample_count": outputs // SYSTEMS,
            },
            [(f"system{s}", "{}") for s in range(SYSTEMS)],
            [Sample(question_id=f"q{q:04d}", question=f"question {q}") for q in range(outputs // SYSTEMS)],
        )
        batch, start = [], time.perf_counter()
        for result in results(texts, outputs, k):
            batch.append(result)
            if len(batch) == 256:
                store.write_units("run", batch)
                batch = []
        store.write_units("run", batch)
        return time.perf_counter() - start
    finally:
        store.close()


def inline_copy(source: Path, target: Path) -> None:
    """``source`` (schema 4) rewritten as schema 3 stored it: contexts inline, no context_texts table."""
    from ragassay.store.contexts import unpack

    shutil.copy(source, target)
    con = sqlite3.connect(target)
    texts = dict(con.execute("select key, text from context_texts"))
    rows = con.execute("select id, output_json from outputs where output_json is not null").fetchall()
    con.executemany(
        "update outputs set output_json = ? where id = ?",
        [(unpack(raw, texts).model_dump_json(), i) for i, raw in rows],
    )
    con.execute("drop table context_texts")
    con.execute("update schema_version set version = 3")
    con.commit()
    con.close()


def vacuumed_size(path: Path) -> int:
    """The file's size once its WAL is checkpointed and free pages are given back (VACUUM)."""
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("VACUUM")
    con.close()
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=5_000)
    parser.add_argument("--outputs", type=int, default=1_200)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="ragassay-store-size-"))
    folder.mkdir(parents=True, exist_ok=True)
    texts = corpus(args.documents)
    corpus_bytes = sum(len(text.encode("utf-8")) for text in texts)
    by_reference, inline, migrated = folder / "v4.db", folder / "v3-inline.db", folder / "v3-migrated.db"
    for path in (by_reference, inline, migrated):
        path.unlink(missing_ok=True)
    write_s = write_store(by_reference, texts, args.outputs, args.k)
    inline_copy(by_reference, inline)
    shutil.copy(inline, migrated)
    start = time.perf_counter()
    from ragassay.store import open_store

    open_store(f"sqlite:///{migrated}", create=False).close()
    migrate_s = time.perf_counter() - start
    sizes = {path: vacuumed_size(path) for path in (by_reference, inline, migrated)}
    run = f"{args.outputs} outputs x {args.k} contexts"
    print(f"corpus: {args.documents} documents, {corpus_bytes / 1e6:.1f} MB; run: {run}")
    print("| store | size (MB) | x corpus |")
    print("|---|---|---|")
    for label, path in (
        ("schema 3, contexts inline", inline),
        ("schema 4, contexts by reference", by_reference),
        ("schema 3 migrated to 4 (then VACUUM)", migrated),
    ):
        print(f"| {label} | {sizes[path] / 1e6:.1f} | {sizes[path] / corpus_bytes:.2f} |")
    ratio = sizes[by_reference] / corpus_bytes
    print(f"writes: {write_s:.2f} s; migration of the inline store: {migrate_s:.2f} s")
    print(f"goal under {GOAL_RATIO:.0f}x the corpus: {'met' if ratio < GOAL_RATIO else 'NOT met'} ({ratio:.2f}x)")
    print(json.dumps({"corpus_bytes": corpus_bytes, **{p.name: s for p, s in sizes.items()}}))


if __name__ == "__main__":
    main()
