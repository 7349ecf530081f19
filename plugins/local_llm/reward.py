"""The ``answer_reward`` metric: a reward model's judgement of an answer to a question.

Source: Unitxt RAG support, section 'Answer Reward' (seeds/004); Unitxt ``metrics.Reward`` as configured by the
catalog entry ``metrics.rag.end_to_end.answer_reward`` (model OpenAssistant/reward-model-deberta-v3-large-v2).
Unitxt runs ``pipeline("text-classification")`` on ``{"text": question, "text_pair": answer}``, which for a
single-logit model returns sigmoid(logit); this module computes the same directly.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import ComponentContext, ConfigError, Metric, MetricResult, RAGOutput, Sample, Unscored, require

from .inference import length_batches, run_locked
from .loader import LoadedModel, ModelSource, load, set_threads

REWARD_HINT = (
    "There is no packaged reward model. Unitxt's default is OpenAssistant/reward-model-deberta-v3-large-v2: fetch "
    "it on a machine with network access with `huggingface-cli download OpenAssistant/reward-model-deberta-v3-"
    "large-v2 --local-dir models/reward-deberta` and set model_path to that folder (relative to the project)"
)
#: Tokens per (question, answer) when neither the option nor the model gives a limit.
FALLBACK_MAX_LENGTH = 512


@dataclasses.dataclass(frozen=True)
class RewardScore:
    """The reward of one (question, answer) pair."""

    score: float  #: sigmoid(logit), in [0, 1]
    logit: float  #: the model's single logit
    tokens: int  #: tokens the model saw
    truncated: bool  #: whether the pair was cut to ``max_length``


def score_answers(
    model: Any,
    tokenizer: Any,
    questions: Sequence[str],
    answers: Sequence[str],
    batch_size: int = 8,
    max_length: int | None = None,
) -> list[RewardScore]:
    """:class:`RewardScore` of each (question, answer), in input order; longest first in batches.

    Pairs longer than ``max_length`` (default: the tokenizer's or the model's limit) are cut, longest part first.
    Call it inside ``torch.inference_mode()`` and not from two threads at once with the same tokenizer.
    """
    limit = max_length or model_max_length(model, tokenizer)
    lengths = [len(ids) for ids in tokenizer(list(questions), list(answers))["input_ids"]]
    results: list[RewardScore | None] = [None] * len(questions)
    for batch in length_batches(lengths, batch_size):
        encoded = tokenizer(
            [questions[i] for i in batch],
            [answers[i] for i in batch],
            truncation=True,
            max_length=limit,
            padding=True,
            return_tensors="pt",
        )
        logits = model(**encoded).logits[:, 0].float()
        for row, index in enumerate(batch):
            logit = float(logits[row])
            seen = int(encoded["attention_mask"][row].sum())
            results[index] = RewardScore(_sigmoid(logit), logit, seen, lengths[index] > limit)
    return [r for r in results if r is not None]


def model_max_length(model: Any, tokenizer: Any) -> int:
    """The tokenizer's ``model_max_length`` when set, else the model's position limit, else 512."""
    limits = [getattr(tokenizer, "model_max_length", None), getattr(model.config, "max_position_embeddings", None)]
    usable = [n for n in limits if isinstance(n, int) and 0 < n < 1_000_000]
    return usable[0] if usable else FALLBACK_MAX_LENGTH


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


class RewardOptions(BaseModel):
    """Options of ``answer_reward``."""

    model_config = ConfigDict(extra="forbid")

    model_path: str = Field(
        description="A sequence-classification reward model folder with one output logit, relative to the "
        "project (e.g. OpenAssistant/reward-model-deberta-v3-large-v2 on disk). Required: none is packaged."
    )
    max_length: int | None = Field(
        None, ge=8, description="Most tokens of (question, answer); default: the tokenizer's or model's limit."
    )
    dtype: Literal["float32", "bfloat16"] = Field("float32", description="Weight dtype on CPU.")
    threads: int | None = Field(None, ge=1, description="torch CPU threads; default: all cores but one, at least 1.")


class AnswerReward(Metric):
    """Answer reward (Unitxt): a reward model's probability that a human would judge the answer good.

    Formula: sigmoid(logit) of a sequence-classification model with one output, on the pair (question, answer).
    Source: Unitxt RAG support, 'Answer Reward' (seeds/004); Unitxt ``metrics.Reward`` (catalog
    ``metrics.rag.end_to_end.answer_reward``). Unscored for an empty question or answer.
    """

    name = "answer_reward"
    requires = frozenset({"question", "answer"})
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = RewardOptions
    formula = "sigmoid(reward_model(question, answer).logit)"
    source = "Unitxt RAG support, 'Answer Reward' (seeds/004); Unitxt metrics.Reward (reward-model-deberta-v3-large-v2)"

    def __init__(self, options: BaseModel | None = None, *, context: ComponentContext | None = None):
        super().__init__(options, context=context)
        self.model_source = reward_source(self.options.model_path, self.context)

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        if not sample.question.strip():
            return Unscored(reason="empty question")
        if not output.answer.strip():
            return Unscored(reason="empty answer: nothing for the reward model to judge")
        options = self.options

        def work(loaded: LoadedModel) -> RewardScore:
            set_threads(options.threads)
            return score_answers(
                loaded.model, loaded.tokenizer, [sample.question], [output.answer], 1, options.max_length
            )[0]

        reward = await run_locked(self.loaded, work)
        details = {"model": self.model_source.label, "logit": reward.logit, "tokens": reward.tokens}
        return MetricResult(value=reward.score, details={**details, "truncated": reward.truncated})

    def loaded(self) -> LoadedModel:
        """The reward model, loaded once per process."""
        return load(self.model_source, "classifier", self.options.dtype, None)


def reward_source(path: str, context: ComponentContext) -> ModelSource:
    """The reward model folder of option ``model_path``; a ConfigError saying how to get one when it is not
    there, or when its model has more than one output (a reward model gives one logit)."""
    folder = context.resolve(path)
    if not (folder / "config.json").is_file():
        raise ConfigError(
            f"answer_reward: option model_path = {path!r}: no model folder with config.json at {folder}. {REWARD_HINT}"
        )
    transformers = require("transformers", "local", "the answer_reward metric")
    config = transformers.AutoConfig.from_pretrained(folder, local_files_only=True)
    if config.num_labels != 1:
        raise ConfigError(
            f"answer_reward: option model_path = {path!r}: the model at {folder} has {config.num_labels} labels "
            f"({', '.join(map(str, config.id2label.values()))}); a reward model has one output logit"
        )
    return ModelSource(folder)
