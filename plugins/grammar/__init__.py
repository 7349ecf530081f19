"""GRAMMAR: grounded query-answer generation from a relational database (seeds/000)."""

from ragassay import hookimpl

from .blame import TurnBlame
from .chains import GrammarChainsSource
from .judge import GrammarLLMJudge
from .source import GrammarSource

__all__ = [
    "TurnBlame",
    "GrammarChainsSource",
    "GrammarSource",
    "GrammarLLMJudge",
    "register_dataset_sources",
    "register_judges",
    "register_metrics",
]


@hookimpl
def register_dataset_sources(register):
    """Register the grammar dataset source and its follow-up chains (grammar_chains)."""
    register(GrammarSource)
    register(GrammarChainsSource)


@hookimpl
def register_judges(register):
    """Register the grammar_llm judge (Table 6 "Ours" prompt)."""
    register(GrammarLLMJudge)


@hookimpl
def register_metrics(register):
    """Register turn_blame (per-turn blame of GRAMMAR chain turns, section 3.4 context comparison)."""
    register(TurnBlame)
