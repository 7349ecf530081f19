"""The failure browser of ``ragassay serve``: every (system, sample) of a run, filtered and ordered worst first.

Filters (all optional, combined): ``system``; ``metric`` (a column: a metric label or ``judge:<label>``) with
``below`` (keep values strictly below the threshold; for a lower-is-better metric, strictly above) or
``unscored`` (keep outputs the metric left unscored); ``status`` (ok, failed, missing); ``q`` (text, case
insensitive, in the question, the reference answers or the stored output). The rows are ordered worst first:
with a metric by its value (unscored last, unless asked for), else by the mean rank over every metric and judge
(:func:`ragassay.analysis.worst.badness`, as the HTML report's failure browser), ties in dataset then system
order; each shown row carries every column's value. :data:`PAGE` rows per page.
"""

from __future__ import annotations

import dataclasses
import json
import math

from ...errors import ConfigError

PAGE = 50
QUESTION_CHARS = 160


@dataclasses.dataclass(frozen=True)
class Filters:
    """What the failure browser shows (query parameters of the page)."""

    system: str = ""
    metric: str = ""
    below: float | None = None
    unscored: bool = False
    status: str = ""
    q: str = ""
    page: int = 1

    @classmethod
    def of(cls, params, run) -> Filters:
        """The filters from the page's query parameters; an unknown system, metric or status, or a threshold that
        is not a number, is a :class:`ConfigError` naming the choices."""
        system, metric, status = params.get("system", ""), params.get("metric", ""), params.get("status", "")
        _check("system", system, run.systems)
        _check("metric", metric, run.columns)
        _check("status", status, ["ok", "failed", "missing"])
        below = params.get("below", "").strip()
        try:
            threshold = float(below) if below else None
            page = max(1, int(params.get("page", "1") or 1))
        except ValueError:
            raise ConfigError(f"'below' and 'page' take numbers, not {below!r} / {params.get('page')!r}") from None
        if threshold is not None and not math.isfinite(threshold):
            raise ConfigError(f"'below' must be a finite number, not {below!r}")
        unscored = params.get("unscored", "") in ("1", "on", "true")
        return cls(system, metric, threshold, unscored, status, params.get("q", "").strip(), page)


def _check(name: str, value: str, choices: list[str]) -> None:
    if value and value not in choices:
        raise ConfigError(f"{name} {value!r} is not one of this run's: {', '.join(choices)}")


@dataclasses.dataclass(frozen=True)
class Row:
    """One (system, sample) the filters keep."""

    question_id: str
    system: str
    status: str
    question: str
    value: float | None
    scores: tuple[tuple[str, float | None], ...] = ()  # every column's value (filled for the rows shown)


def rows(run, filters: Filters, searched: set[tuple[str, str]] | None) -> list[Row]:
    """Every row the filters keep, ordered; ``searched``: the (system, question_id) pairs whose stored output
    contains ``filters.q`` (None when there is no text filter)."""
    import numpy as np

    questions = _questions(run, filters.q) if filters.q else None
    systems = [filters.system] if filters.system else run.systems
    found = []
    for system in systems:
        values = run.values(system, filters.metric) if filters.metric else None
        keep = _keep(values, filters, run.direction(filters.metric) if filters.metric else "higher")
        for index in np.flatnonzero(keep) if keep is not None else range(len(run.question_ids)):
            qid = run.question_ids[index]
            status = run.status(system, qid)
            if filters.status and status != filters.status:
                continue
            if filters.unscored and status != "ok":
                continue
            if questions is not None and index not in questions and (system, qid) not in searched:
                continue
            value = None if values is None or math.isnan(values[index]) else float(values[index])
            found.append(Row(qid, system, status, "", value))
    return [found[i] for i in _order(run, found, filters)]


def _keep(values, filters: Filters, direction: str):
    import numpy as np

    if values is None:
        return None
    if filters.unscored:
        return np.isnan(values)
    if filters.below is not None:
        return values > filters.below if direction == "lower" else values < filters.below
    return np.ones(len(values), dtype=bool)


def _questions(run, text: str) -> set[int]:
    """Positions of the samples whose question or reference answers contain ``text`` (case insensitive)."""
    needle = text.casefold()
    found = set()
    for index, raw in enumerate(run.sample_json):
        sample = json.loads(raw)
        haystack = [sample.get("question") or "", *(sample.get("reference_answers") or [])]
        if any(needle in str(part).casefold() for part in haystack):
            found.add(index)
    return found


def _order(run, found: list[Row], filters: Filters):
    """The order of ``found``: worst value of the metric first (unscored last), then dataset order; without a
    metric, the worst mean rank first, then dataset order, then system order. Stable: equal keys keep the order
    they were found in."""
    import numpy as np

    from ...analysis.worst import badness

    position = np.array([run.position[r.question_id] for r in found], dtype=np.int64)
    if not filters.metric:
        place = {system: i for i, system in enumerate(run.systems)}
        ranks = badness(run)
        worst = np.array([-ranks[r.system][run.position[r.question_id]] for r in found], dtype=np.float64)
        return np.lexsort((np.array([place[r.system] for r in found], dtype=np.int64), position, worst))
    sign = -1.0 if run.direction(filters.metric) == "lower" else 1.0
    missing = np.array([r.value is None for r in found], dtype=bool)
    values = np.array([sign * r.value if r.value is not None else 0.0 for r in found], dtype=np.float64)
    return np.lexsort((position, values, missing))


def page_of(run, found: list[Row], filters: Filters) -> list[Row]:
    """The rows of the filters' page, with their questions (cut to :data:`QUESTION_CHARS`) and every column's
    value."""
    start = (filters.page - 1) * PAGE
    rows = found[start : start + PAGE]
    columns = {(s, c): run.values(s, c) for s in {r.system for r in rows} for c in run.columns}
    shown = []
    for row in rows:
        index = run.position[row.question_id]
        question = json.loads(run.sample_json[index]).get("question") or ""
        if len(question) > QUESTION_CHARS:
            question = question[:QUESTION_CHARS] + "..."
        scores = tuple((c, _number(columns[(row.system, c)][index])) for c in run.columns)
        shown.append(dataclasses.replace(row, question=question, scores=scores))
    return shown


def _number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)
