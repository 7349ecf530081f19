"""``ragassay.Run``: one stored run, for notebooks, scripts and tests.

::

    import ragassay

    run = ragassay.run("quickstart")        # or ragassay.open_run(config="quickstart"): the newest stored run
    run.compare()                            # DataFrame: system x metric mean, 95% CI, n, unscored, verdict
    run.verdicts().pairs                     # ragassay.analysis.verdicts.Verdicts
    run.frames().scores()                    # RunFrames (ragassay.load_run)
    run.report_html("report.html")           # the HTML report, as ``ragassay report --html``
    run                                      # in Jupyter: the comparison table and the verdicts in words

Each call reads the run once (:func:`ragassay.results.read_run`) and hands it to the same analyses as
``ragassay compare`` (:mod:`ragassay.analysis.verdicts`): the numbers are the command's. See docs/notebooks.md.
"""

from __future__ import annotations

import contextlib
import functools
import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import RagassayError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .analysis.verdicts import Verdicts
    from .engine.runner import RunSummary
    from .present.frames import RunFrames
    from .results.model import RunData

COMPARE_COLUMNS = [
    "mean",
    "ci_low",
    "ci_high",
    "n",
    "unscored",
    "direction",
    "diff",
    "diff_low",
    "diff_high",
    "p_holm",
    "verdict",
]


class Run:
    """A stored run: its comparison, verdicts, frames and HTML report, read from the results database.

    Returned by :func:`ragassay.run` (then ``summary`` is what the run did, and its attributes, e.g.
    ``run.failed``, ``run.completed``, ``run.warnings``, are readable on the run itself) and by
    :func:`open_run`. The database is opened for each call and closed after it.

    :ivar run_id: the run's id.
    :ivar url: the results database (SQLAlchemy URL).
    :ivar summary: the :class:`~ragassay.engine.runner.RunSummary` of the call that ran it, or None when opened.
    """

    def __init__(self, run_id: str, url: str, summary: RunSummary | None = None):
        self.run_id = run_id
        self.url = url
        self.summary = summary

    def __getattr__(self, name: str) -> Any:
        summary = self.__dict__.get("summary")
        if summary is not None and not name.startswith("_") and hasattr(summary, name):
            return getattr(summary, name)
        hint = "; it is a field of the summary of ragassay.run(...), not of an opened run" if summary is None else ""
        raise AttributeError(f"'Run' object has no attribute {name!r}{hint}")

    @property
    def id(self) -> str:
        """The run's id (same as ``run_id``)."""
        return self.run_id

    @functools.cached_property
    def info(self) -> dict[str, Any]:
        """The run's row: ``project``, ``config_path``, ``description``, ``sample_count``, ... (read once)."""
        with self._store() as store:
            return dict(store.get_run(self.run_id))

    def data(self, *, payloads: bool = False) -> RunData:
        """The run read once (:func:`ragassay.results.read_run`): what every analysis takes."""
        from .results.read import read_run

        with self._store() as store:
            return read_run(store, self.run_id, payloads=payloads)

    def verdicts(
        self, baseline: str | None = None, alpha: float = 0.05, seed: int = 0, metrics: list[str] | None = None
    ) -> Verdicts:
        """Every system against ``baseline`` (default: the first system) on the decision family (``metrics``, else
        the run's ``[evaluation] decide``, else every metric that varies): :func:`ragassay.analysis.verdicts.decide`
        (one paired procedure per pair, Holm; docs/statistics.md)."""
        from .analysis.verdicts import decide

        return decide(self.data(), baseline=baseline, alpha=alpha, seed=seed, family=metrics)

    def compare(self, baseline: str | None = None, alpha: float = 0.05, seed: int = 0) -> pd.DataFrame:
        """One row per (system, metric): the mean over scored values, its 95% bootstrap interval, scored
        ``n``, ``unscored`` count, the metric's ``direction``, and against ``baseline`` the paired mean ``diff``,
        its interval (``diff_low``, ``diff_high``, at the comparison's level), Holm-adjusted ``p_holm`` and
        ``verdict`` (empty for the baseline's own rows)."""
        return compare_frame(self.verdicts(baseline=baseline, alpha=alpha, seed=seed))

    def frames(self) -> RunFrames:
        """The run as pandas DataFrames (:func:`ragassay.load_run`)."""
        from .present.frames import frames_of

        return frames_of(self.data(payloads=True))

    def report_html(
        self, path: str | Path | None = None, *, baseline: str | None = None, alpha: float = 0.05, seed: int = 0
    ) -> str:
        """The self-contained HTML report (as ``ragassay report RUN --html``); written to ``path`` when given."""
        from .present.html_report import build_report

        with self._store() as store:
            text = build_report(store, [self.run_id], baseline=baseline, alpha=alpha, seed=seed)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the systems x metrics table with intervals, then the verdicts in words."""
        from .analysis.sentences import verdict_sentences

        try:
            verdicts = self.verdicts()
        except RagassayError as exc:
            return f"<p>{html.escape(repr(self))}: {html.escape(str(exc))}</p>"
        sentences = verdict_sentences(verdicts) or ["only one system: nothing to compare"]
        items = "".join(f"<li>{html.escape(s)}</li>" for s in sentences)
        title = html.escape(f"ragassay run {self.run_id[:12]} ({self.info['project']})")
        return (
            f'<div class="ragassay-run"><p><strong>{title}</strong></p>{cells_table(verdicts)}'
            f"<p>Verdicts against {html.escape(verdicts.baseline)} (baseline), alpha {verdicts.alpha:g}:</p>"
            f"<ul>{items}</ul></div>"
        )

    def __repr__(self) -> str:
        done = ""
        if self.summary is not None:
            done = f", {self.summary.completed} units done, {self.summary.failed} failed"
        return f"<ragassay.Run {self.run_id[:12]}{done}>"

    def _store(self) -> contextlib.closing:
        """``with`` block holding the results database, opened (never created) and then closed."""
        from .store import open_store

        return contextlib.closing(open_store(self.url, create=False))


def open_run(run_id: str | None = None, *, config: str | Path = ".", db: str | None = None) -> Run:
    """A stored run: ``run_id`` (an id or a unique prefix; default: the newest run) of the project at ``config``
    (a config file or a folder with ``ragassay.toml``), or of the results database ``db`` (a SQLite path or a
    SQLAlchemy URL) when given.

    :raises ragassay.errors.StoreError: no results database, no run yet, or no (single) run matching ``run_id``.
    """
    from .engine.project import results_location
    from .store import open_store
    from .store.locate import pick_run

    url, options = results_location(config, db)
    with contextlib.closing(open_store(url, **options)) as store:
        return Run(pick_run(store, run_id)["id"], url)


def load_run(run: str | None = None, *, config: str | Path = ".", db: str | None = None) -> RunFrames:
    """Read a stored run into DataFrames (samples, outputs, metric values, judgements, costs).

    :param run: a run id or a unique prefix of one; default: the newest run in the database.
    :param config: the project: a config file, or a folder with ``ragassay.toml``; its ``[project] results``
        names the database.
    :param db: a results database (SQLite path or SQLAlchemy URL) to read instead of the project's.
    :raises ragassay.errors.StoreError: no results database, no run yet, or no (single) run matching ``run``.

    >>> frames = ragassay.load_run(config="examples/quickstart")  # doctest: +SKIP
    >>> frames.scores().groupby("system").mean()                 # doctest: +SKIP
    """
    from .engine.project import results_location
    from .errors import ConfigError
    from .present.frames import frames_of
    from .results.read import read_run
    from .store import open_store
    from .store.locate import looks_like_project, pick_run

    try:
        url, options = results_location(config, db)
        with contextlib.closing(open_store(url, **options)) as store:
            return frames_of(read_run(store, pick_run(store, run)["id"], payloads=True))
    except RagassayError as exc:
        if run and looks_like_project(run):
            raise ConfigError(
                f"'{run}' is a project, not a run id; give it as ragassay.load_run(config={str(run)!r})"
            ) from exc
        raise


def compare_frame(verdicts: Verdicts) -> pd.DataFrame:
    """The cells of ``verdicts`` as a DataFrame indexed by (system, metric), with each pair's verdict."""
    import pandas as pd

    pairs = {(p.system, p.metric): p for p in verdicts.pairs}
    rows = []
    for cell in verdicts.cells:
        pair = pairs.get((cell.system, cell.metric))
        rows.append(
            {
                "system": cell.system,
                "metric": cell.metric,
                "mean": cell.mean,
                "ci_low": cell.ci_low,
                "ci_high": cell.ci_high,
                "n": cell.n,
                "unscored": cell.unscored,
                "direction": cell.direction,
                "diff": None if pair is None else pair.mean_diff,
                "diff_low": None if pair is None else pair.ci_low,
                "diff_high": None if pair is None else pair.ci_high,
                "p_holm": None if pair is None else pair.p_holm,
                "verdict": "" if pair is None else pair.verdict,
            }
        )
    frame = pd.DataFrame.from_records(rows, columns=["system", "metric", *COMPARE_COLUMNS])
    frame = frame.astype({c: float for c in ("mean", "ci_low", "ci_high", "diff", "diff_low", "diff_high", "p_holm")})
    return frame.set_index(["system", "metric"])


def cells_table(verdicts: Verdicts) -> str:
    """An HTML table, systems x metrics, each cell "mean [low, high] (n)"; every name escaped."""
    systems = list(dict.fromkeys(c.system for c in verdicts.cells))
    metrics = list(dict.fromkeys(c.metric for c in verdicts.cells))
    cells = {(c.system, c.metric): c for c in verdicts.cells}
    head = "".join(f"<th>{html.escape(m)}</th>" for m in metrics)
    body = "".join(
        f"<tr><th>{html.escape(s)}</th>" + "".join(f"<td>{_cell_text(cells[(s, m)])}</td>" for m in metrics) + "</tr>"
        for s in systems
    )
    return f"<table><thead><tr><th>system</th>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell_text(cell) -> str:
    if cell.mean is None:
        return f"- ({cell.unscored} unscored)" if cell.unscored else "-"
    interval = "" if cell.ci_low is None else f" [{cell.ci_low:.3f}, {cell.ci_high:.3f}]"
    unscored = f" +{cell.unscored} unscored" if cell.unscored else ""
    return f"{cell.mean:.3f}{interval} ({cell.n}){unscored}"
