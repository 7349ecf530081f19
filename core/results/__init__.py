"""The results side's read model: a stored run read once, as one typed object every analysis takes.

::

    from ragassay.results import read_run

    data = read_run(store, "1a2b3c")          # 6 SQL statements, whatever the run's size
    data.values("bm25", "recall_at_k")        # per-sample values, NaN where unscored or missing

- :mod:`.model`: :class:`RunData` and its records (pure data, no store); :mod:`.scores`, its scores column by
  column; :mod:`.usage`, what each answer and score spent;
- :mod:`.read`: :func:`read_run`, :func:`read_sample`, :func:`read_payloads`, :func:`read_labels` and
  :func:`read_reusable_labels` (labels matched to a run's answers, from any run), :mod:`.people`:
  :func:`read_people` (the labels decisions use, per run and rubric), and
  :mod:`.headers`: :func:`read_run_headers` (every run's header, without its samples): the only readers of the
  store here, through :mod:`ragassay.store.protocols`;
- above it, :func:`ragassay.load_run` gives the run as pandas DataFrames (:mod:`ragassay.present.frames`), and
  :class:`ragassay.Run` / :func:`ragassay.open_run` hold it for notebooks and tests (:mod:`ragassay.notebook`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .headers import RunHeader, read_run_headers
    from .model import OutputRecord, RunData, RunInfo, StoredRows
    from .people import PeopleLabels, read_people
    from .read import read_labels, read_payloads, read_reusable_labels, read_run, read_sample
    from .scores import ScoreRecord, ScoreTable
    from .usage import Usage

#: Where each name lives; imported on first use (the model imports numpy, which ``ragassay run`` does not need
#: before its first call, and ``ragassay.notebook`` is imported by every run: PEP 562).
_EXPORTS = {
    "OutputRecord": ".model",
    "PeopleLabels": ".people",
    "read_people": ".people",
    "RunData": ".model",
    "RunInfo": ".model",
    "RunHeader": ".headers",
    "StoredRows": ".model",
    "ScoreRecord": ".scores",
    "ScoreTable": ".scores",
    "Usage": ".usage",
    "read_labels": ".read",
    "read_payloads": ".read",
    "read_reusable_labels": ".read",
    "read_run": ".read",
    "read_run_headers": ".headers",
    "read_sample": ".read",
}

__all__ = [
    "OutputRecord",
    "PeopleLabels",
    "RunData",
    "RunHeader",
    "RunInfo",
    "ScoreRecord",
    "ScoreTable",
    "StoredRows",
    "Usage",
    "read_labels",
    "read_payloads",
    "read_people",
    "read_reusable_labels",
    "read_run",
    "read_run_headers",
    "read_sample",
]


def __getattr__(name: str) -> Any:
    """The exported name ``name``, imported from its module on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
