"""Perturbation wrappers: their overhead per unit against generation, and the reuse of unperturbed retrieval.

1. Overhead: on the Aurp samples (GRAMMAR source over examples/aurp), each operator's ``apply`` on the sample's
   BM25 top-3 chunks (the wrapper's own work per unit), timed over all samples, against the ``extractive``
   reader's generation on the same chunks (the cheapest generator ragassay ships; an LLM call takes 0.3 to 5 s).
2. Reuse: real runs (``ragassay.testing.run_project``) with the base system and N perturbed systems of it
   (distractors at N strengths), the retriever counting its queries: retrieval calls per question. Without
   sharing it would be 1 + N per question; with it, 2 (the base system's own, and one shared by all wrappers).

    python benchmarks/robustness.py [--repeat 5] [--limit 120]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from ragassay import GenerationRequest, Retriever, hookimpl
from ragassay.plugins.robustness.operators import Case, operator_class
from ragassay.plugins.robustness.seeding import sample_rng
from ragassay.testing import component, registry_with, run_project, throwaway_context

AURP = Path(__file__).resolve().parents[1] / "examples" / "aurp"
OPERATORS = [
    ("distractors", {"k": 3}),
    ("distractors", {"k": 3, "mode": "hard"}),
    ("drop_gold", {}),
    ("reorder", {"gold": "middle"}),
    ("truncate", {"tokens": 20}),
    ("counterfactual", {"database": "aurp.sql"}),
    ("injection", {}),
    ("typos", {"rate": 0.2}),
    ("case", {"mode": "random"}),
    ("paraphrase", {"templates": "templates.yaml"}),
]


def project(root: Path) -> Path:
    for name in ("aurp.sql", "templates.yaml", "corpus"):
        (shutil.copytree if (AURP / name).is_dir() else shutil.copy)(AURP / name, root / name)
    return root


def cases(root: Path, limit: int):
    """(sample, top-3 BM25 chunks) for the first ``limit`` Aurp samples, and the corpus chunks."""
    context = throwaway_context(root, registry=registry_with())
    source = component(
        "dataset_source", "grammar", context=context, sql_dump="aurp.sql", templates="templates.yaml",
        documents=["corpus/**/*.md"],
    )  # fmt: skip
    from ragassay import Corpus

    chunks = Corpus(list(source.documents())).chunks(context.build("chunker", "recursive"))
    bm25 = context.build("retriever", "bm25")
    bm25.index(chunks)
    samples = list(source.samples())[:limit]
    return [(s, tuple(h.chunk for h in bm25.retrieve(s.question, 3))) for s in samples], chunks, context


def per_unit(seconds: float, units: int) -> float:
    return seconds / units * 1e6


def overhead(root: Path, limit: int, repeat: int) -> None:
    pairs, chunks, context = cases(root, limit)
    reader = component("generator", "extractive")
    requests = [GenerationRequest(question=s.question, contexts=list(c)) for s, c in pairs]

    async def generate():
        for request in requests:
            await reader.generate(request)

    gen = min(_timed(lambda: asyncio.run(generate())) for _ in range(repeat))
    print(f"overhead per unit, {len(pairs)} Aurp samples, best of {repeat} (microseconds per unit)")
    print(f"  {'extractive generation':44s} {per_unit(gen, len(pairs)):9.1f}")
    for name, options in OPERATORS:
        cls = operator_class(name)
        op = cls(cls.Options.model_validate(options))
        op.prepare(chunks, context)

        def run_all(op=op, name=name):
            for sample, top in pairs:
                op.apply(Case(sample, top, sample_rng(0, sample.question_id, name), ()))

        best = min(_timed(run_all) for _ in range(repeat))
        label = f"{name} {options}" if options else name
        print(f"  {label[:44]:44s} {per_unit(best, len(pairs)):9.1f}   {best / gen:6.1%} of extractive generation")


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


class Counting(Retriever):
    """BM25 (built through its public reference) that counts the queries it answers."""

    name = "counting"
    calls = 0

    def index(self, chunks):
        self.inner = self.context.build("retriever", "bm25")
        self.inner.index(chunks)

    def retrieve(self, query, k):
        type(self).calls += 1
        return self.inner.retrieve(query, k)


class Plugin:
    @hookimpl
    def register_retrievers(self, register):
        register(Counting)


def reuse(limit: int) -> None:
    print("\nretrieval calls per question, base system + N perturbed systems (distractors, k = 1..N)")
    for n in (1, 4, 8):
        with tempfile.TemporaryDirectory() as folder:
            root = project(Path(folder))
            data = {
                "project": {"results": "results.db", "concurrency": 8},
                "dataset": {"source": "grammar", "limit": limit, "options": {
                    "sql_dump": "aurp.sql", "templates": "templates.yaml", "documents": ["corpus/**/*.md"]}},
                "systems": {"base": {"retriever": "b/counting", "generator": "extractive", "options": {"top_k": 3}}}
                | {f"p{k}": {"rag": "perturbed", "options": {"system": "base", "operator": {
                    "name": "distractors", "options": {"k": k}}}} for k in range(1, n + 1)},
                "evaluation": {"metrics": ["contains_answer"]},
            }  # fmt: skip
            Counting.calls = 0
            start = time.perf_counter()
            run = run_project(root, data, plugins={"b": Plugin()})
            wall = time.perf_counter() - start
            questions = len({q for _, q in run.outputs})
            print(
                f"  N = {n}: {Counting.calls} retrieval calls for {questions} questions = "
                f"{Counting.calls / questions:.2f} per question (without sharing: {1 + n}); "
                f"{len(run.outputs)} units, run {wall:.1f} s"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--limit", type=int, default=120)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        overhead(project(Path(folder)), args.limit, args.repeat)
    reuse(args.limit)


if __name__ == "__main__":
    main()
