"""Perturbation wrappers: their overhead per unit against generation, and the reuse of unperturbed retrieval.

1. Overhead: on the Aurp samples (GRAMMAR source over examples/aurp), each operator's ``apply`` on the sample's
   BM25 top-3 chunks (the wrapper's own work per unit), timed over all samples, against the ``extractive``
   reader's generation on the same chunks (the cheapest generator ragassay ships; an LLM call takes 0.3 to 5 s).
2. Reuse: real runs (``ragassay.testing.run_project``) with the base system and N perturbed systems of it
   (distractors at N strengths), the retriever counting its queries: retrieval calls per question. Without
   sharing it would be 1 + N per question; with it, 2 (the base system's own, and one shared by all wrappers).
3. The whole wrapper through a real run: the base system alone, then with 4 perturbed systems of it (distractors,
   reorder, truncate, drop_gold), then with 4 unperturbed systems (the same BM25 + extractive pipeline, each its
   own retrieval); wall and CPU of the whole in-process run, best of ``--repeat``, and the marginal cost per unit
   of the added systems: (run with them - base run) / added units, so fixed costs (loading, indexing, the store)
   cancel. A perturbed unit costs the shared retrieval lookup, the operator, generation, metrics and storage; an
   unperturbed one its own retrieval instead.

    python benchmarks/robustness.py [--repeat 5] [--limit 120]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

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


class CountingOptions(BaseModel):
    """Options of the counting retriever."""

    model_config = ConfigDict(extra="forbid")

    instance: int = Field(0, description="Distinguishes otherwise identical systems (no effect on retrieval).")


class Counting(Retriever):
    """BM25 (built through its public reference) that counts the queries it answers."""

    name = "counting"
    Options = CountingOptions
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


WRAPPED = [
    ("distractors", {"k": 3}),
    ("reorder", {"gold": "middle"}),
    ("truncate", {"tokens": 20}),
    ("drop_gold", {}),
]


def _data(limit: int, extra: dict) -> dict:
    return {
        "project": {"results": "results.db", "concurrency": 8},
        "dataset": {"source": "grammar", "limit": limit, "options": {
            "sql_dump": "aurp.sql", "templates": "templates.yaml", "documents": ["corpus/**/*.md"]}},
        "systems": {"base": {"retriever": "b/counting", "generator": "extractive", "options": {"top_k": 3}}} | extra,
        "evaluation": {"metrics": ["contains_answer", "token_f1"]},
    }  # fmt: skip


def _timed_run(limit: int, extra: dict) -> tuple[float, float, int, int, int]:
    """(wall s, CPU s, units, questions, retrieval calls) of one fresh in-process run."""
    with tempfile.TemporaryDirectory() as folder:
        root = project(Path(folder))
        Counting.calls = 0
        wall, cpu = time.perf_counter(), time.process_time()
        run = run_project(root, _data(limit, extra), plugins={"b": Plugin()})
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        return wall, cpu, len(run.outputs), len({q for _, q in run.outputs}), Counting.calls


def whole_run(limit: int, repeat: int) -> None:
    perturbed = {
        f"p_{name}": {"rag": "perturbed", "options": {"system": "base", "operator": {"name": name, "options": o}}}
        for name, o in WRAPPED
    }
    plain = {
        f"u{k}": {"retriever": {"name": "b/counting", "options": {"instance": k}}, "generator": "extractive",
                  "options": {"top_k": 3}}
        for k in range(1, len(WRAPPED) + 1)
    }  # fmt: skip
    _timed_run(min(limit, 10), perturbed)  # warm-up: imports, first builds
    runs = {}
    for label, extra in (("base alone", {}), ("+ 4 perturbed", perturbed), ("+ 4 unperturbed", plain)):
        timings = [_timed_run(limit, extra) for _ in range(repeat)]
        best_wall, best_cpu = min(t[0] for t in timings), min(t[1] for t in timings)
        runs[label] = (best_wall, best_cpu, *timings[0][2:])
    print(f"\nthe whole wrapper through a real run: {limit} Aurp samples, BM25 + extractive, 2 lexical metrics, "
          f"best of {repeat} (wall and CPU of the whole in-process run)")  # fmt: skip
    base_wall, base_cpu, base_units = runs["base alone"][:3]
    for label, (wall, cpu, units, questions, calls) in runs.items():
        line = (
            f"  {label:16s} {units:5d} units  wall {wall:6.2f} s  CPU {cpu:6.2f} s  "
            f"retrieval calls {calls} ({calls / questions:.2f} per question)"
        )
        if units > base_units:
            added = units - base_units
            line += (
                f"\n  {'':16s} per added unit: wall {(wall - base_wall) / added * 1e3:6.2f} ms, "
                f"CPU {(cpu - base_cpu) / added * 1e3:6.2f} ms"
            )
        print(line)
    print(f"  {'':16s} (base alone, whole run per unit: wall {base_wall / base_units * 1e3:.2f} ms, "
          f"CPU {base_cpu / base_units * 1e3:.2f} ms, fixed costs included)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--limit", type=int, default=120)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        overhead(project(Path(folder)), args.limit, args.repeat)
    reuse(args.limit)
    whole_run(args.limit, args.repeat)


if __name__ == "__main__":
    main()
