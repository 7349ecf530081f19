"""Programmatic entry points, for notebooks, scripts and tests.

>>> run = ragassay.run("examples/quickstart")              # doctest: +SKIP
>>> run.run_id, run.failed                                 # doctest: +SKIP
>>> run.compare()                                          # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import LoadedConfig
from .engine.executor import executor_for
from .engine.interruptible import run_interruptibly
from .engine.project import Project
from .engine.runner import Runner, RunSummary, plan_run
from .phases import PhaseProgress
from .plugin_manager import PluginHost, get_plugin_host, load_plugins
from .store.units import UnitResult

if TYPE_CHECKING:  # the results model imports numpy: on first use, after the run (ragassay run -q never needs it)
    from .notebook import Run
    from .store.lease import Holder


def run(
    config: str | Path | LoadedConfig,
    *,
    plugins: Iterable[tuple[str, Any]] = (),
    new: bool = False,
    no_cache: bool = False,
    description: str = "",
    wait: bool = False,
    on_wait: Callable[[Holder], None] | None = None,
    on_start: Callable[[RunSummary], None] | None = None,
    on_result: Callable[[UnitResult], None] | None = None,
    repeats: int = 1,
    on_plan: Callable[[Any], None] | None = None,
    on_progress: Callable[[PhaseProgress], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
    budget: Any = None,
    sequential: Any = None,
    baseline: str | None = None,
) -> Run:
    """Run (or resume) the evaluation a config describes and return it as a :class:`~ragassay.Run`.

    The run carries the :class:`~ragassay.engine.runner.RunSummary` of this call (``run.summary``; its fields are
    readable on the run: ``run.run_id``, ``run.failed``, ``run.completed``, ``run.warnings``, ...) and reads
    its comparison, verdicts, frames and HTML report from the results database (docs/notebooks.md).

    :param config: a config file, a folder holding one, or a loaded config.
    :param plugins: extra in-process plugins as ``(name, module_or_object)``; their components are
        addressed as ``name/component``.
    :param new: start a new run even if one with the same fingerprint exists.
    :param no_cache: neither read nor write the LLM response cache in this run.
    :param description: free text stored with a new run and shown by ``ragassay runs``.
    :param wait: if another process is running this config, wait for it (calling ``on_wait`` with who holds
        it) and then resume; by default raise :class:`~ragassay.store.lease.LeaseHeldError`.
    :param repeats: score every model-calling metric and judge this many times per output (``run --repeat``);
        the spread across repeats is reported by :mod:`ragassay.analysis.variance`.
    :param on_plan: called with the :class:`~ragassay.engine.runner.RunPlan` once it is planned, before anything runs
        (``ragassay gate`` checks its baseline there); an exception it raises stops the run.
    :param on_progress: called with each :class:`~ragassay.PhaseProgress` that components report while the
        systems are built (chunking, indexing, corpus embedding); ``ragassay run`` shows them.
    :param on_warning: called with each warning components report (``context.warn``) when it is reported; all
        of them are also in ``run.warnings`` and stored with the run.
    :param budget: a :class:`~ragassay.llm.budget.Budget` (or its dict) for this session, in place of
        ``[evaluation] budget``; a session stopped by it has ``run.summary.budget_limited`` set (docs/llm.md).
    :param sequential: True (``run --sequential``: ``[evaluation] sequential``, else its defaults), or a
        :class:`~ragassay.config.sequential.SequentialSettings` (or its dict) in its place; None: as configured;
        False: off even when configured.
        What it decided is ``run.summary.sequential`` (docs/statistics.md, Stopping early).
    :param baseline: the system a sequential run tests the others against (default: the first system).
    """
    if repeats < 1:
        from .errors import ConfigError

        raise ConfigError(f"--repeat must be at least 1, got {repeats}")
    project = Project.load(config, _host(plugins).registry, no_cache=no_cache)
    project.context.observe(on_progress, on_warning)
    plan = plan_run(project)
    if on_plan is not None:
        on_plan(plan)
    options = {
        "on_result": on_result,
        "description": description,
        "repeats": repeats,
        "budget": _budget(budget),
        "sequential": _sequential(sequential, project.config.evaluation.sequential, project.config.evaluation.labelled),
        "baseline": baseline,
    }
    store = project.open_store()
    try:
        return _run_in(store, project, plan, new=new, wait=wait, on_wait=on_wait, on_start=on_start, **options)
    finally:
        store.close()


def _run_in(store: Any, project: Project, plan: Any, *, new, wait, on_wait, on_start, **options: Any) -> Run:
    """Take the run's lease in ``store`` and run ``plan`` there (``options``: the :class:`Runner`'s)."""
    with store.lease(plan.fingerprint(), wait=wait, on_wait=on_wait) as lease:
        for note in lease.notes:
            plan.context.warn(note)
        runner = Runner(plan, store, executor=executor_for(project.config, store), lease=lease, **options)
        summary = run_interruptibly(lambda: runner.run(new=new, on_start=on_start))
        if lease.lost:
            summary.warnings.append(lease.lost)
        summary.warnings += store.recoveries  # outages of the database that the run waited out
        from .notebook import Run

        return Run(summary.run_id, project.results_url, summary)


def _budget(budget: Any) -> Any:
    from .llm.budget import Budget

    return None if budget is None else budget if isinstance(budget, Budget) else Budget.model_validate(budget)


def _sequential(value: Any, configured: Any, labelled: Any = None) -> Any:
    from .config.sequential import LABELLED_NOT_LIVE, SequentialSettings
    from .errors import ConfigError

    if value is None or value is False:
        return value  # None: as configured; False: off
    if labelled:
        raise ConfigError(f"--sequential and [evaluation] labelled: {LABELLED_NOT_LIVE}")
    if value is True:
        return configured or SequentialSettings()
    return value if isinstance(value, SequentialSettings) else SequentialSettings.model_validate(value)


def _host(plugins: Iterable[tuple[str, Any]]) -> PluginHost:
    plugins = list(plugins)
    return load_plugins(plugins) if plugins else get_plugin_host()
