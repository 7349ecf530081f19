"""The ``turn_blame`` metric: which module failed a GRAMMAR chain turn, decided exactly from the turn's gold.

GRAMMAR's modular evaluation (seeds/000, section 3.4, "Defective Modules Responsible for The Robustness Issue")
tells the retrieval module from the language model by *context comparison*: when the documents the answer needs
were retrieved and the answer is still wrong, the LM is to blame; else retrieval. A chain turn
(``grammar_chains`` source) has everything that comparison needs, exactly: its answer from executing its SQL, the
documents of the rows that SQL touches, and whether it can be understood without the conversation (``refers_to``,
``depends_on_history``). So a retrieval miss is split further into a retriever that failed on a query that said
what was needed, and a query that lost the conversation's context. The rule, in order:

1. an unanswerable turn (its SQL returns nothing, or asks for a column the database does not hold): ``ok`` when
   the answer declines (it is blank, or has a refusal phrase of the ``refusal`` metric, RGB's negative rejection
   phrases, or of the ``phrases`` option), else ``answered_unanswerable``;
2. ``ok`` when the answer contains every row of the exact answer (SQuAD-normalised whole-token containment, the
   ``contains_answer`` metric's test, per row of a list answer);
3. ``generation`` when every gold document was retrieved (``context_document_ids`` or ``context_ids``);
4. otherwise a gold document was missed: ``context_loss`` when the turn depends on the history and the retrieval
   query (``RAGOutput.query``, else the turn's question) does not carry what its reference stands for (some
   content word of ``refers_to``, stop words aside, is not in it); ``retrieval`` when the query carried it (or the
   turn needs no history).

Value 1.0 for ``ok``, 0.0 for every blame; details ``{"blame", "reason", "turn"}``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Metric, MetricResult, RAGOutput, Sample, Unscored, answer_tokens, words
from ragassay.plugins.lexical_metrics import contains_tokens
from ragassay.plugins.robustness.metrics import is_refusal

BLAMES = ("ok", "retrieval", "context_loss", "generation", "answered_unanswerable")


class TurnBlameOptions(BaseModel):
    """Options of the turn_blame metric."""

    model_config = ConfigDict(extra="forbid")

    phrases: list[str] = Field(
        default_factory=lambda: ["no such record"],
        description="Refusal phrases added to those of the 'refusal' metric (matched on the SQuAD-normalised "
        "answer, whole words): an answer to an unanswerable turn that is blank or has one declines.",
    )


def _contains(text: str, phrase: str) -> bool:
    return contains_tokens(answer_tokens(text), answer_tokens(phrase))


def carries(query: str, refers_to: str) -> bool:
    """Whether every content word of ``refers_to`` (lower-cased, accents folded, stop words dropped) is in the query."""
    needed = set(words(refers_to, drop_stopwords=True)) or set(words(refers_to))
    return bool(needed) and needed <= set(words(query))


def declines(answer: str, phrases: list[str]) -> str | None:
    """The refusal phrase the answer contains ("" for a blank answer), or None when it answers. The phrases are
    those of the robustness ``refusal`` metric (:func:`is_refusal`, RGB's negative rejection) and ``phrases``."""
    if not answer_tokens(answer):
        return ""
    return is_refusal(answer, tuple(phrases))


class TurnBlame(Metric):
    """Per-turn blame of a GRAMMAR chain turn: ok, retrieval, context_loss, generation or answered_unanswerable.

    Decided from the turn's exact gold (answer rows, gold documents, ``refers_to``) by GRAMMAR's context comparison
    (seeds/000, section 3.4): gold retrieved but answer wrong -> the LM (generation); gold missed -> retrieval, or
    context loss when the turn needs the history and the retrieval query lacks what its reference stands for.
    """

    name = "turn_blame"
    requires = frozenset({"answerability", "answer"})
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = TurnBlameOptions
    formula = (
        "1 if (unanswerable and the answer declines) or (answerable and every answer row is contained in the "
        "answer) else 0; blame = answered_unanswerable | generation (all gold retrieved) | context_loss (depends on "
        "history, query lacks refers_to) | retrieval"
    )
    source = "GRAMMAR (seeds/000) section 3.4, modular evaluation by context comparison; ragassay grammar_chains"

    def score(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        chain = (sample.metadata or {}).get("chain")
        if not isinstance(chain, dict):
            return Unscored(
                reason="not a GRAMMAR chain turn: the sample has no metadata['chain'] (generate the dataset with the "
                "grammar_chains source)"
            )
        if sample.answerability is None:
            return Unscored(
                reason="the chain turn has no answerability label, so a missing answer cannot be told from a right "
                "refusal (the grammar_chains source labels every turn)"
            )
        if sample.answerability == "unanswerable" or not sample.reference_answers:
            return self._unanswerable(sample, output, chain)
        rows = [r for r in (chain.get("rows") or sample.reference_answers) if answer_tokens(r)]
        missing = [r for r in rows if not _contains(output.answer, r)]
        if not missing:
            return _result(sample, "ok", "the answer contains the exact answer of the turn's SQL")
        gold = list(sample.reference_context_ids)
        if not gold:
            return Unscored(
                reason="the turn has no gold documents (the templates file maps no documents), so retrieval "
                "cannot be told from generation"
            )
        retrieved = set(output.context_document_ids) | set(output.context_ids)
        missed = [d for d in gold if d not in retrieved]
        lacking = f"the answer lacks {missing[0]!r}" + (
            f" and {len(missing) - 1} more row(s)" if len(missing) > 1 else ""
        )
        if not missed:
            return _result(sample, "generation", f"every gold document was retrieved but {lacking}")
        return self._missed(sample, output, chain, missed, lacking)

    def _unanswerable(self, sample: Sample, output: RAGOutput, chain: dict) -> MetricResult:
        column = chain.get("missing_column")
        why = f"the database has no column {column}" if column else "its SQL returns no row"
        phrase = declines(output.answer, self.options.phrases)
        if phrase is not None:
            said = "the answer is blank" if phrase == "" else f"the answer declines ({phrase!r})"
            return _result(sample, "ok", f"unanswerable turn ({why}) and {said}")
        return _result(sample, "answered_unanswerable", f"unanswerable turn ({why}) but the system answered")

    def _missed(self, sample: Sample, output: RAGOutput, chain: dict, missed: list[str], lacking: str):
        query = output.query if output.query is not None else sample.question
        refers_to = chain.get("refers_to")
        miss = f"gold document {missed[0]!r}" + (f" and {len(missed) - 1} more" if len(missed) > 1 else "")
        if chain.get("depends_on_history") and refers_to and not carries(query, refers_to):
            return _result(
                sample,
                "context_loss",
                f"the turn refers to {refers_to!r} from the history, the retrieval query does not name it, "
                f"{miss} was not retrieved and {lacking}",
            )
        carried = "the turn needs no history" if not chain.get("depends_on_history") else f"it names {refers_to!r}"
        return _result(
            sample, "retrieval", f"the retrieval query carried what the turn needs ({carried}) but {miss} was missed"
        )


def _result(sample: Sample, blame: str, reason: str) -> MetricResult:
    return MetricResult(
        value=1.0 if blame == "ok" else 0.0, details={"blame": blame, "reason": reason, "turn": sample.turn}
    )
