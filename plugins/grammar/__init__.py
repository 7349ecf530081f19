"""GRAMMAR: grounded query-answer generation from a relational database (seeds/000)."""

from ragassay import hookimpl

from .chains import GrammarChainsSource
from .judge import GrammarLLMJudge
from .source import GrammarSource

__all__ = ["GrammarChainsSource", "GrammarSource", "GrammarLLMJudge", "register_dataset_sources", "register_judges"]


@hookimpl
def register_dataset_sources(register):
    """Register the grammar dataset source and its follow-up chains (grammar_chains)."""
    register(GrammarSource)
    register(GrammarChainsSource)


@hookimpl
def register_judges(register):
    """Register the grammar_llm judge (Table 6 "Ours" prompt)."""
    register(GrammarLLMJudge)
