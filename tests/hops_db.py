"""The hops test database (tests/data/hops_db: Employee -> Department -> Site) as samples with per-hop gold, and
hand-built trajectory steps, for the per-hop metrics and step_blame tests."""

from __future__ import annotations

from pathlib import Path

from ragassay import RAGOutput, Sample, Step
from ragassay.components import ComponentContext
from ragassay.plugins.grammar.source import GrammarSource

HOPS_DB = Path(__file__).resolve().parent / "data" / "hops_db"


def samples(cache: Path) -> dict[tuple[str, str], Sample]:
    """The grammar source's samples of the hops database, by (template id, placeholder value)."""
    context = ComponentContext(project_dir=HOPS_DB, cache_dir=cache)
    source = GrammarSource(GrammarSource.Options.model_validate({"sql_dump": "hops.sql"}), context=context)
    return {(s.sql_template_id, next(iter(s.placeholders.values()))): s for s in source.samples()}


def doc(name: str) -> str:
    """The document id of ``employee-100`` and the like."""
    return f"docs/{name}.md"


def retrieval(step_id: str, *names: str, error: str | None = None) -> Step:
    """A retrieval step that returned the first chunk of each named document, in order."""
    return Step(
        id=step_id,
        kind="retrieval",
        name="search",
        query=f"query of {step_id}",
        context_ids=[f"{doc(n)}#0" for n in names],
        document_ids=[doc(n) for n in names],
        scores=[1.0 / (i + 1) for i in range(len(names))],
        error=error,
    )


def model(step_id: str) -> Step:
    """A model call."""
    return Step(id=step_id, kind="model_call", name="scripted", output="thinking")


def tool(step_id: str, error: str | None = None) -> Step:
    """A tool call (a SQL tool), failed when ``error`` is given."""
    return Step(id=step_id, kind="tool_call", name="sql", arguments={"q": "SELECT 1"}, call_id=step_id, error=error)


def answer(step_id: str, text: str) -> Step:
    """The answer step."""
    return Step(id=step_id, kind="answer", output=text)


def agent_output(steps: list[Step]) -> RAGOutput:
    """An agent's output: its trajectory, the union of what it retrieved, and its answer (the last answer step's)."""
    answers = [s.output for s in steps if s.kind == "answer"]
    context_ids = list(dict.fromkeys(c for s in steps if s.kind == "retrieval" for c in s.context_ids))
    return RAGOutput(
        answer=answers[-1] if answers else "",
        contexts=[f"text of {c}" for c in context_ids],
        context_ids=context_ids,
        context_document_ids=[c.split("#")[0] for c in context_ids],
        retrieved=True,
        trajectory=steps,
    )


def plain_output(answer_text: str, *names: str) -> RAGOutput:
    """A non-agent output: its contexts (first chunks of the named documents) and its answer, no trajectory."""
    return RAGOutput(
        answer=answer_text,
        contexts=[f"text of {n}" for n in names],
        context_ids=[f"{doc(n)}#0" for n in names],
        context_document_ids=[doc(n) for n in names],
        retrieved=True,
    )
