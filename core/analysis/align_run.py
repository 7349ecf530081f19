"""``ragassay align`` carried out on a project: the judge of the config, the run's outputs, people's binary labels;
the procedure itself is :mod:`ragassay.analysis.align`."""

from __future__ import annotations

import asyncio
import dataclasses
import statistics
from typing import Any

from ..errors import ConfigError
from .align import Change, Split, assert_disjoint, choose_exemplars, compare, split_questions
from .human_labels import HumanLabel, latest, rubric_of


@dataclasses.dataclass(frozen=True)
class AlignResult:
    """The variant and what it changed on the held-out split."""

    judge: str
    run_id: str
    rule: str
    seed: int
    split: Split
    exemplar_items: list[tuple[str, str]]
    prompt_version: str
    variant_ref: dict[str, Any]
    change: Change
    ties: int


def align_judge(
    project,
    run,
    labels: list[HumanLabel],
    judge_key: str,
    *,
    examples: int,
    rule: str,
    seed: int,
    pool_share: float = 0.5,
    rubric: str = "correct",
    embedder: str | None = None,
) -> AlignResult:
    """Choose exemplars, build the variant, judge the held-out items with both, and measure the change."""
    refuse_non_binary(rubric)
    truth, ties = _truth(labels, run, rubric)
    ref = _judge_ref(project, judge_key)
    original = project.context.build("judge", {"name": ref.name, "options": ref.options})
    if not hasattr(getattr(original, "options", None), "exemplars"):
        raise ConfigError(
            f"judge '{judge_key}' takes no exemplars: align works on LLM judges (ragassay.llm.JudgeOptions)"
        )
    split = split_questions([q for _, q in truth], pool_share, seed)
    pool = [item for item in sorted(truth) if item[1] in set(split.pool)]
    test = {item: truth[item] for item in sorted(truth) if item[1] in set(split.test)}
    if not test:
        raise ConfigError(
            f"no labelled question is left for the held-out split ({len(truth)} items); lower --pool-share"
        )
    embed = _embedder(project, run, embedder) if rule == "nearest" else None
    chosen = choose_exemplars(pool, truth, examples, rule, seed, embed)
    content = {item: _content(run, item) for item in [*chosen, *test]}
    carried = {
        f"exemplar {i + 1} in the judge's options": (e.question, e.answer)
        for i, e in enumerate(original.options.exemplars)
    }
    assert_disjoint({**{i: content[i] for i in chosen}, **carried}, {i: content[i] for i in test})
    exemplars = [*original.options.exemplars, *(_exemplar(run, item, truth[item]) for item in chosen)]
    options = {k: v for k, v in ref.options.items() if k != "prompt_version"}
    options["exemplars"] = [e.model_dump(exclude_none=True, exclude_defaults=True) for e in exemplars]
    variant = project.context.build("judge", {"name": ref.name, "options": options})
    verdicts = asyncio.run(_judge_all([original, variant], run, list(test), project.config.project.concurrency))
    change = compare(test, verdicts[0], verdicts[1], seed=seed)
    variant_ref = {
        "name": ref.name,
        "label": f"{judge_key}_aligned",
        "options": {**options, "prompt_version": variant.options.prompt_version},
    }
    return AlignResult(
        judge_key, run.id, rule, seed, split, chosen, variant.options.prompt_version, variant_ref, change, ties
    )


def refuse_non_binary(rubric: str) -> None:
    """ConfigError for a rubric that is not binary, saying why and what to use instead (docs/labelling.md)."""
    found = rubric_of(rubric)
    if found.kind == "binary":
        return
    scale = f"{found.values[0]:g}..{found.values[-1]:g}" if found.values else "no scale"
    raise ConfigError(
        f"align works on binary rubrics only: '{rubric}' is {found.kind} ({scale}), and no shipped judge gives a "
        "score on such a scale (correctness, grammar_llm and match say correct or incorrect; holistic_correctness "
        "scores 1-5 but is a metric, of correctness, not a judge). Align against a binary rubric (--rubric "
        f"correct), or measure the judge against the '{rubric}' labels with ragassay meta-eval (weighted kappa, "
        "Spearman)"
    )


def _truth(labels: list[HumanLabel], run, rubric: str) -> tuple[dict, int]:
    mine = [label for label in latest(labels) if label.run_id == run.id and label.rubric == rubric]
    if not mine:
        raise ConfigError(f"no '{rubric}' label is for run {run.id[:12]}")
    values: dict = {}
    for label in mine:
        values.setdefault((label.system, label.sample_id), []).append(label.value)
    truth, ties = {}, 0
    for item, vs in values.items():
        share = statistics.fmean(vs)
        if share == 0.5:
            ties += 1
        elif run.payload(*item) is None:
            raise ConfigError(f"a label names system '{item[0]}', question '{item[1]}', which run {run.id[:12]} lacks")
        else:
            truth[item] = share > 0.5
    return truth, ties


def _judge_ref(project, key: str):
    refs = project.config.evaluation.judges
    for ref in refs:
        if ref.key == key:
            return ref
    raise ConfigError(f"the config has no judge '{key}'; its judges: {', '.join(r.key for r in refs) or 'none'}")


def _sample(run, question_id: str):
    return next(s for s in run.samples if s.question_id == question_id)


def _content(run, item) -> tuple[str, str]:
    return _sample(run, item[1]).question, run.payload(*item).answer


def _exemplar(run, item, correct: bool):
    from ..llm.exemplars import Exemplar

    sample = _sample(run, item[1])
    reference = " | ".join(sample.reference_answers) or None
    return Exemplar(
        question=sample.question,
        answer=run.payload(*item).answer,
        reference=reference,
        verdict="correct" if correct else "incorrect",
    )


def _embedder(project, run, name: str | None):
    if name is None:
        return None
    model = project.context.build("embedder", name)
    return lambda items: model.embed([" ".join(_content(run, item)) for item in items])


async def _judge_all(judges, run, items, concurrency: int) -> list[dict]:
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(judge, item):
        async with gate:
            judgement = await judge.judge(_sample(run, item[1]), run.payload(*item))
        if judgement.verdict in ("correct", "incorrect"):
            return judgement.verdict == "correct"
        return None if judgement.score is None else judgement.score >= 0.5

    out = []
    for judge in judges:
        out.append(dict(zip(items, await asyncio.gather(*(one(judge, item) for item in items)))))
    return out
