"""GRAMMAR: grounded query-answer generation from a relational database (seeds/000)."""

from ragassay import hookimpl

from .judge import GrammarLLMJudge
from .source import GrammarSource

__all__ = ["GrammarSource", "GrammarLLMJudge", "register_dataset_sources", "register_judges"]


@hookimpl
def register_dataset_sources(register):
    """Register the grammar dataset source."""
    register(GrammarSource)


@hookimpl
def register_judges(register):
    """Register the grammar_llm judge (Table 6 "Ours" prompt)."""
    register(GrammarLLMJudge)
