"""MTRAG's algorithmic (model-free) metrics, reproduced exactly: Recall, K-Precision, RougeL, Extractiveness RougeL.

Source: IBM/mt-rag-benchmark, ``scripts/evaluation/run_algorithmic.py`` at commit cc5b1d4 (Apache-2.0), with the
evaluators of ``scripts/evaluation/config.yaml``; the metrics are described in Katsis et al., "MTRAG: A Multi-Turn
Conversational Benchmark for Evaluating Retrieval-Augmented Generation Systems" (2025), Section 5 (after Adlakha et
al., 2024, for Recall and K-Precision). The script scores the prediction against every target (``targets``) or
every passage (``contexts``) and stores one value per target or passage; MTRAG's aggregate (``rb_agg``) reads the
first target's value and the maximum over passages. Here:

- against the references (``reference_answers``, MTRAG's ``targets``): the value is the first reference's, as
  ``rb_agg`` reads ``metrics[...][0]``; ``details["values"]`` holds one value per reference, as the script stores;
- against the contexts (``RAGOutput.contexts``, MTRAG's ``contexts``): the value is the maximum over passages, as
  ``rb_agg`` aggregates its passage metric; ``details["values"]`` one value per passage.

With nothing to score against (no reference answer, no context) the value is unscored: the script stores no value
then. Normalisation (``normalize_text``): lower case, ASCII punctuation removed, the articles a/an/the removed,
white space collapsed. RougeL: the F-measure of ``rouge_score`` (Lin's tokenizer: lower case, runs of characters
other than a-z0-9 split tokens; no stemming: MTRAG's ``RougeL_stemFalse``) as Hugging Face ``evaluate``'s
``rouge`` computes it. tests/plugins/conversations/test_mtrag_metrics.py runs MTRAG's own functions (vendored in
tests/vendor/mtrag/) on MTRAG's sample data and compares.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Metric, MetricResult, RAGOutput, Sample, Unscored, hookimpl

SOURCE = (
    "MTRAG, scripts/evaluation/run_algorithmic.py at commit cc5b1d4 (IBM/mt-rag-benchmark); Katsis et al. 2025, "
    "MTRAG, Section 5"
)
_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NON_ALPHANUM = re.compile(r"[^a-z0-9]+")
_SPACES = re.compile(r"\s+")
_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")
_NOT_WORD = re.compile(r"[^\w\s]")
_HTML_LEADING_SPACE = re.compile(r"^[ \t\n\x0c]+")

Against = Literal["reference", "contexts"]


# -- MTRAG's scorers (run_algorithmic.py), as pure functions ---------------------------------------------------


def normalize_text(text: str) -> str:
    """MTRAG's ``normalize_text``: lower case, punctuation removed, articles removed, white space collapsed."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(x for x in _ARTICLES.sub(" ", text).split() if x)


def _common_tokens(prediction: str, target: str) -> tuple[int, list[str], list[str]]:
    prediction_tokens = normalize_text(prediction).split()
    target_tokens = normalize_text(target).split()
    common = Counter(prediction_tokens) & Counter(target_tokens)
    return sum(common.values()), prediction_tokens, target_tokens


def recall(prediction: str, target: str) -> float:
    """MTRAG's ``recall``: the share of the target's normalised tokens found in the prediction (with counts)."""
    common, _, target_tokens = _common_tokens(prediction, target)
    return 0.0 if common == 0 else 1.0 * common / len(target_tokens)


def k_precision(prediction: str, target: str) -> float:
    """MTRAG's ``k_prec``: the share of the prediction's normalised tokens found in the target (with counts)."""
    common, prediction_tokens, _ = _common_tokens(prediction, target)
    return 0.0 if common == 0 else 1.0 * common / len(prediction_tokens)


def rouge_tokens(text: str) -> list[str]:
    """rouge_score's tokenizer without stemming: lower case, split at every run of characters other than a-z0-9."""
    return [x for x in _SPACES.split(_NON_ALPHANUM.sub(" ", text.lower())) if _VALID_TOKEN.match(x)]


def rouge_l(prediction: str, target: str) -> float:
    """MTRAG's ``rouge_l`` (use_stemmer=False): rouge_score's RougeL F-measure of the prediction against the target."""
    target_tokens, prediction_tokens = rouge_tokens(target), rouge_tokens(prediction)
    if not target_tokens or not prediction_tokens:
        return 0.0
    lcs = _lcs_length(target_tokens, prediction_tokens)
    precision = lcs / len(prediction_tokens)
    recall_ = lcs / len(target_tokens)
    return 2 * precision * recall_ / (precision + recall_) if precision + recall_ > 0 else 0.0


def _lcs_length(first: list[str], second: list[str]) -> int:
    """Length of the longest common subsequence of two token lists (dynamic programming, one row at a time)."""
    previous = [0] * (len(second) + 1)
    for token in first:
        current = [0]
        for j, other in enumerate(second, start=1):
            current.append(previous[j - 1] + 1 if token == other else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def clean_words(text: str) -> str:
    """MTRAG's ``clean_html(strip_newline_words(text))``: new lines to spaces, every character that is neither a word
    character nor white space removed, lower case; then what BeautifulSoup's lxml parse changes in such a text
    (carriage returns become new lines, leading HTML white space is dropped; nothing is left for ``html.unescape``)."""
    text = _NOT_WORD.sub("", text.replace("\n", " ")).lower()
    return _HTML_LEADING_SPACE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def extractiveness_rouge(prediction: str, passage: str) -> float:
    """MTRAG's ``extractiveness_rouge``: 1 when the cleaned passage (spaces removed) occurs in the cleaned prediction,
    else the RougeL F-measure of the cleaned prediction against the cleaned passage."""
    text, target = clean_words(prediction), clean_words(passage)
    if target.replace(" ", "") in text.replace(" ", ""):
        return 1.0
    return rouge_l(text, target)


# -- the metrics --------------------------------------------------------------------------------------------------


class _AgainstOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    against: Against = Field(
        "reference",
        description="'reference': score the answer against the reference answers (MTRAG's targets; the value is "
        "the first reference's); 'contexts': against the retrieved contexts (MTRAG's passages, the faithfulness "
        "variant; the value is the maximum over contexts).",
    )


class _MtragMetric(Metric):
    """An MTRAG scorer applied per reference answer or per context, aggregated as MTRAG's ``rb_agg`` does."""

    direction = "higher"
    value_range = (0.0, 1.0)
    source: ClassVar[str] = SOURCE
    scorer: ClassVar[Callable[[str, str], float]]
    Options = _AgainstOptions

    @classmethod
    def required(cls, options: BaseModel) -> frozenset[str]:
        """The answer, and the reference answers or the contexts by ``against``."""
        return frozenset({"answer", "reference_answers" if options.against == "reference" else "contexts"})

    def score(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        """The value against the first reference answer, or the maximum over the contexts."""
        against = self.options.against
        targets = sample.reference_answers if against == "reference" else output.contexts
        if not targets:
            what = "reference answer" if against == "reference" else "retrieved context"
            return Unscored(reason=f"no {what} to score against (MTRAG's script stores no value then)")
        values = [type(self).scorer(output.answer, target) for target in targets]
        value = values[0] if against == "reference" else max(values)
        return MetricResult(value=value, details={"against": against, "values": values})


class MtragRecall(_MtragMetric):
    """MTRAG's Recall: the share of the reference's normalised tokens that the answer contains."""

    name = "mtrag_recall"
    requires = frozenset({"answer", "reference_answers"})
    formula = "|tokens(answer) ∩ tokens(target)| / |tokens(target)|, tokens normalised (MTRAG normalize_text)"
    scorer = staticmethod(recall)


class MtragKPrecision(_MtragMetric):
    """MTRAG's K-Precision: the share of the answer's normalised tokens found in a passage (faithfulness; by default
    against the contexts, the maximum over passages)."""

    name = "mtrag_k_precision"
    requires = frozenset({"answer", "contexts"})
    formula = "|tokens(answer) ∩ tokens(passage)| / |tokens(answer)|, max over passages (MTRAG k_prec)"
    scorer = staticmethod(k_precision)

    class Options(_AgainstOptions):
        """Options of mtrag_k_precision (against the contexts by default: K-Precision is a faithfulness measure)."""

        against: Against = Field(
            "contexts",
            description="'contexts' (default): the answer's tokens found in each retrieved context, the maximum over "
            "contexts; 'reference': in the first reference answer (token precision).",
        )


class MtragRougeL(_MtragMetric):
    """MTRAG's RougeL_stemFalse: rouge_score's RougeL F-measure of the answer against the reference answer."""

    name = "mtrag_rouge_l"
    requires = frozenset({"answer", "reference_answers"})
    formula = "RougeL F1 = 2PR/(P+R), P = LCS/|answer|, R = LCS/|target| (rouge_score tokens, no stemming)"
    scorer = staticmethod(rouge_l)


class MtragExtractivenessRougeL(_MtragMetric):
    """MTRAG's Extractiveness_RougeL: RougeL of the answer against each context after MTRAG's cleaning, 1 when the
    whole context occurs in the answer; the maximum over contexts (faithfulness variant of RougeL)."""

    name = "mtrag_extractiveness_rouge_l"
    requires = frozenset({"answer", "contexts"})
    formula = "1 if clean(passage) ⊂ clean(answer) else RougeL(clean(answer), clean(passage)); max over passages"
    scorer = staticmethod(extractiveness_rouge)

    class Options(_AgainstOptions):
        """Options of mtrag_extractiveness_rouge_l (against the contexts by default, as MTRAG's config.yaml)."""

        against: Against = Field(
            "contexts",
            description="'contexts' (default, MTRAG's passage target): the maximum over retrieved contexts; "
            "'reference': against the first reference answer.",
        )


METRICS = (MtragRecall, MtragKPrecision, MtragRougeL, MtragExtractivenessRougeL)


@hookimpl
def register_metrics(register):
    """Register MTRAG's algorithmic metrics."""
    for metric in METRICS:
        register(metric)
