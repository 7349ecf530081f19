"""``ragassay estimate --pilot N``: run N samples for real and scale what they cost to the whole run.

The N samples are the first of the seeded order (``[evaluation] seed``, the order a budget-limited run takes:
:meth:`SampleSpool.shuffled <ragassay.engine.spool.SampleSpool.shuffled>`), so they are a uniform random subset and
the same in every process. They run through the real :class:`~ragassay.engine.runner.Runner` with the config's
systems, metrics and judges, into a throwaway results database (a temporary file, deleted afterwards: the
project's own database is not touched), with the project's LLM response cache: the pilot's replies are cached,
and the real run reuses them (unless ``[llm] cache = false``; the output says so).

What the store records per output, metric value and judgement (model calls, cache hits, input tokens) gives
the mean per sample of every (system, component); :func:`apply_pilot` scales it to the samples the estimate
counts, for the rows whose calls depend on the content (a range): segments, claims, agent steps, re-asks.
Rows with an exact pattern keep it.
"""

from __future__ import annotations

import dataclasses
import itertools
import tempfile
from pathlib import Path
from typing import Any


@dataclasses.dataclass
class Pilot:
    """What a pilot measured: per (system, component), the mean model calls and input tokens per sample."""

    samples: int
    calls: int  # model calls the pilot made (cache hits excluded)
    cache_hits: int
    failed: int  # pilot units that failed (their components were not measured on them)
    cached: bool  # whether the pilot's replies went into the LLM response cache
    per_sample: dict[tuple[str, str], tuple[float, float]]  # (system, component) -> (calls, input tokens)

    def lines(self) -> list[str]:
        """The pilot in a few lines of at most 80 columns."""
        cache = "now in the LLM response cache" if self.cached else "the LLM response cache is off: not kept"
        lines = [f"pilot: {self.samples} samples (seeded order) made {self.calls} calls ({cache})"]
        if self.cache_hits:
            lines.append(f"pilot: {self.cache_hits} replies came from the cache")
        if self.failed:
            lines.append(f"pilot: {self.failed} units failed (not measured; see the rows' calls range)")
        return lines


def run_pilot(plan: Any, samples: int) -> Pilot:
    """Run the first ``samples`` samples of ``plan``'s seeded order in a throwaway store and measure them."""
    from ...errors import ConfigError
    from ...store import open_store
    from ..interruptible import run_interruptibly
    from ..runner import Runner
    from ..spool import SampleSpool

    if samples < 1:
        raise ConfigError(f"--pilot must be at least 1 sample, got {samples}")
    order = plan.samples.shuffled(plan.loaded.config.evaluation.seed)
    chosen = SampleSpool.write(itertools.islice(iter(order), samples))
    order.close()
    pilot_plan = dataclasses.replace(plan, samples=chosen, _fingerprint=None)
    with tempfile.TemporaryDirectory(prefix="ragassay-pilot-") as folder:
        store = open_store(f"sqlite:///{Path(folder) / 'pilot.db'}")
        try:
            runner = Runner(pilot_plan, store, description="estimate --pilot (throwaway)")
            summary = run_interruptibly(lambda: runner.run(new=True))
            pilot = _measure(store, summary.run_id, len(chosen))
        finally:
            store.close()
            chosen.close()
    pilot.failed = summary.failed
    pilot.cached = bool(plan.context.settings["llm"].get("cache"))
    return pilot


def _measure(store: Any, run_id: str, samples: int) -> Pilot:
    """Per (system, component) means over the pilot's samples, from the usage columns of its rows (the store's
    read model: :meth:`output_records`, :meth:`score_records`)."""
    from ...models import JUDGEMENT_COLUMNS, METRIC_COLUMNS, OUTPUT_COLUMNS

    sums: dict[tuple[str, str], list[int]] = {}
    scored: dict[str, int] = {}  # system -> its ok outputs (what its metrics and judges were measured on)
    totals = [0, 0]  # calls, cache hits

    def add(key: tuple[str, str], record: dict[str, Any]) -> None:
        total = sums.setdefault(key, [0, 0])
        total[0] += record["calls"] + record["cache_hits"]
        total[1] += record["input_tokens"]
        totals[0] += record["calls"]
        totals[1] += record["cache_hits"]

    for row in store.output_records(run_id):
        record = dict(zip(OUTPUT_COLUMNS, row))
        scored[record["system"]] = scored.get(record["system"], 0) + (record["status"] == "ok")
        add((record["system"], "system"), record)
    for kind, columns in (("metric", METRIC_COLUMNS), ("judge", JUDGEMENT_COLUMNS)):
        for row in store.score_records(run_id, kind):
            record = dict(zip(columns, row))
            if record["repeat"] == 0:
                add((record["system"], f"{kind}:{record[kind]}"), record)
    per_sample = {
        key: (c / n, tok / n)
        for key, (c, tok) in sums.items()
        if (n := samples if key[1] == "system" else scored.get(key[0], 0))
    }
    return Pilot(samples, totals[0], totals[1], 0, False, per_sample)


def apply_pilot(rows: list[Any], pilot: Pilot) -> None:
    """Give each row whose calls are a range the pilot's figures scaled to the row's samples
    (:attr:`Row.piloted_calls`, :attr:`Row.piloted_tokens`)."""
    for row in rows:
        if row.calls_low is None or row.calls_low == row.calls_high:
            continue
        measured = pilot.per_sample.get((row.system, row.component))
        if measured is None:  # no unit of this system was scored in the pilot
            row.note = f"not piloted (no scored unit in the pilot); {row.note}".rstrip("; ")
            continue
        calls, tokens = measured
        row.piloted_calls = round(calls * row.samples)
        row.piloted_tokens = round(tokens * row.samples)
        row.note = f"piloted on {pilot.samples} samples" + (f"; {row.note}" if row.note else "")
