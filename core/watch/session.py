"""One session of ``ragassay watch``: open (or resume) the watch run, then, look after look, take the complete
traces stored since the last look that the watch has not decided on (:mod:`ragassay.watch.tail`: a cursor kept
with the progress, so a look's work does not grow with the stream), score the selected ones, feed each watched
value to its detector (and to its metric's history per time bin, :mod:`.history`, which ``ragassay serve``'s live
page draws), and commit the batch (samples, values, decisions, progress) in one transaction; only then send the
evaluation events and the alarms (an alarm is stored first, marked delivered once every sink had it, so one raised
just before a crash, or one a sink refused, is delivered by the next session).

Decisions per trace (``watch_traces.status``): ``scored``; ``unscored`` (reason ``budget``: the judge budget refused
a call); ``unmapped`` (no question or answer, with the reason); ``skipped`` (not in the sample: decided by the trace id
before the trace is read, so a small sample keeps a watch's work small; or left out by ``where``); ``failed`` (the
replay failed); ``reference`` (scored for a reference window, not watched).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..models import Sample
from ..store.protocols import SettlingWriter
from ..traces.model import Trace, Unmapped
from ..traces.reading import traces_read
from .budget import RollingSpend
from .detect import Monitors, Statistics
from .history import History
from .plan import WatchPlan
from .scoring import BUDGET, Scored, column_values, refused, score_samples
from .sinks import Sinks
from .source import FolderFeed, Selection, mapped, trace_sample, version_values
from .tail import Tail


@dataclasses.dataclass
class WatchReport:
    """What a session did (JSON with :meth:`as_dict`)."""

    run_id: str
    resumed: bool
    decided: dict[str, int] = dataclasses.field(default_factory=dict)  # this session: status -> traces
    alarms: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # delivered in this session
    notes: list[str] = dataclasses.field(default_factory=list)
    totals: dict[str, int] = dataclasses.field(default_factory=dict)  # the whole watch run
    budget: dict[str, Any] = dataclasses.field(default_factory=dict)
    detectors: dict[str, Any] = dataclasses.field(default_factory=dict)
    events_sent: int = 0
    events_failed: int = 0

    @property
    def count(self) -> int:
        return sum(self.decided.values())

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class WatchSession:
    """See the module docstring. ``say`` prints a line (stderr); ``clock`` gives seconds since the epoch."""

    def __init__(
        self,
        plan: WatchPlan,
        store: Any,
        statistics: Statistics,
        *,
        sinks: Sinks,
        say: Callable[[str], None],
        folder: FolderFeed | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self.plan, self.store, self.statistics = plan, store, statistics
        self.rules = plan.rules
        self.sinks, self.say, self.folder, self.clock = sinks, say, folder, clock
        self.selection = Selection(self.rules.sample, dict(self.rules.where))
        self.write_context = plan.write_context()
        self.system_key = plan.system_key()
        self.processor = plan.processor()
        self.state: dict[str, Any] = {}
        self.report: WatchReport | None = None
        margin = self.rules.reference.margin if self.rules.reference is not None else 0.0
        self.monitors = Monitors(
            statistics, plan.watched(), alpha=self.rules.alpha, margin=margin, keys=self.rules.version_keys
        )

    # -- opening ---------------------------------------------------------------------------------------------

    async def open(self) -> WatchReport:
        """Find or create the watch run, restore its progress, set the references, handle a changed judge and
        deliver alarms a crash left undelivered."""
        from .opening import open_run, start_detectors

        run_id, resumed = open_run(self)
        self.report = WatchReport(run_id, resumed)
        raw = self.store.watch_state(run_id)
        self.state = json.loads(raw) if raw else {"since": self.clock(), "alarms": [], "drift": []}
        self.spend = RollingSpend(self.rules.budget, self.state.get("spend"))
        self.history = History(self.state.get("history"))
        self.tail = Tail(self.state.get("tail"), self.state["since"])
        if self.folder is not None:
            self.folder.seen.update(self.state.get("files") or {})
        await start_detectors(self)
        self.state["detectors"] = self.monitors.states()
        self.store.set_watch_state(run_id, json.dumps(self.state))
        self.redeliver(retry=True)
        return self.report

    # -- the loop --------------------------------------------------------------------------------------------

    async def look(self, limit: int) -> int:
        """One look at the store: decide on at most ``limit`` complete traces; the number decided."""
        if self.folder is not None:
            self.folder.poll(self.store)
        limit = max(1, min(limit, self.rules.batch))
        self.tail.read(self.store, self.report.run_id, limit)
        ids = self.tail.complete(self.store, self.clock() - self.rules.quiet_s, limit)
        if not ids:
            return 0
        inside = {trace_id: self.selection.in_sample(trace_id) for trace_id in ids}  # by the id: not read when out
        outside = [trace_id for trace_id in ids if not inside[trace_id]]
        wanted = [trace_id for trace_id in ids if inside[trace_id]]
        found = mapped(self.store, wanted, self.plan.mapping) if wanted else {}
        traces = sorted(found.values(), key=lambda t: (getattr(t, "start_ns", 0), t.trace_id))
        await self.decide(traces, outside=outside)
        return len(outside) + len(traces)

    async def decide(
        self, traces: list[Trace | Unmapped], status: str = "scored", outside: Sequence[str] = ()
    ) -> list[Scored]:
        """Score the selected ``traces``, feed the detectors (unless ``status`` is ``reference``), commit, then
        send; returns what was kept of each scored trace. ``outside``: the ids of traces not in the sample, decided
        ``skipped`` by their id alone (never read: no start time)."""
        reason = self.selection.sample_reason
        decisions: list[tuple[str, str, str | None, float | None]] = [(i, "skipped", reason, None) for i in outside]
        chosen: list[Trace] = []
        for trace in traces:
            if isinstance(trace, Unmapped):
                decisions.append((trace.trace_id, "unmapped", trace.reason, None))
                continue
            reason = self.selection.reason(trace)
            if reason is not None:
                decisions.append((trace.trace_id, "skipped", reason, trace.start_ns / 1e9))
            else:
                chosen.append(trace)
        samples = [trace_sample(t) for t in chosen]
        raws = [s.model_dump_json() for s in samples]  # hashed for the sample key, stored with the run
        pairs = [(s.question_id, raw) for s, raw in zip(samples, raws)]
        scored = await self._score(chosen, samples, raws) if chosen else []
        del samples  # what is left of them is in pairs
        alarms = []
        for trace, kept in zip(chosen, scored):
            decided = _status(kept, status)
            decisions.append((trace.trace_id, decided[0], decided[1], trace.start_ns / 1e9))
            if status != "reference" and kept.result.status == "ok":
                alarms += self._observe(trace, kept.values)
        self.tail.decided([decision[0] for decision in decisions])
        self._commit(pairs, [kept.result for kept in scored], decisions, alarms)
        self._count(decisions)
        self._send(scored)
        self.redeliver()
        return scored

    async def _score(self, traces: list[Trace], samples: list[Sample], raws: list[str]) -> list[Scored]:
        ledger = self.spend.ledger(self.clock(), self.write_context.prices)
        concurrency = self.plan.loaded.config.project.concurrency
        keep = functools.partial(self._keep, self.plan.spec() if self.rules.otlp else None)
        with traces_read(self.store, self.plan.mapping, {t.trace_id: t for t in traces}):  # trace_replay reads none
            results = await score_samples(
                self.processor, self.plan.system, self.system_key, samples, ledger, concurrency, raws, keep
            )
        if ledger is not None:
            spent = ledger.spent()
            self.spend.add(self.clock(), int(spent["calls"]), float(spent["usd"]))
        return results

    def _keep(self, spec: dict | None, result: Any) -> Scored:
        """What is kept of ``result`` as soon as it is scored (:class:`Scored`); ``spec``: the run's spec, when the
        evaluation events are sent."""
        from .events import evaluation_events

        values = column_values(result) if result.status == "ok" else {}
        events = evaluation_events(self.report.run_id, spec, [result]) if spec is not None else []
        kept = Scored(result, values, refused(result), events)
        if isinstance(self.store, SettlingWriter):
            kept.result = self.store.settle_units([result], self.write_context)[0]
        return kept

    def _observe(self, trace: Trace, values: dict[str, float]) -> list[dict[str, Any]]:
        attributes = version_values(trace, self.rules.version_keys)
        found, at = [], trace.start_ns / 1e9
        for column, value in values.items():
            detector = self.monitors.detectors.get(column)
            if detector is not None:
                self.history.observe(column, float(value), at, detector.summary)
            alarm = self.monitors.observe(column, value, at, trace.trace_id, attributes)
            if alarm is not None:
                from .alarms import alarm_record  # imported once an alarm needs it

                reference = (self.state.get("references") or {}).get(column)
                record = alarm_record(alarm, self.report.run_id, self.rules.name, reference)
                found.append({**record, "delivered": False})
        return found

    def _commit(self, samples: list[tuple[str, str]], results, decisions, alarms) -> None:
        """Store ``samples`` ((question id, sample JSON)), the results, decisions and alarms with the progress."""
        self.state["alarms"] = [*self.state.get("alarms", []), *alarms]
        self.state["detectors"] = self.monitors.states()
        self.state["spend"] = self.spend.state()
        self.state["history"] = self.history.state({c: d.summary for c, d in self.monitors.detectors.items()})
        self.state["committed_at"] = self.clock()
        self.state["tail"] = self.tail.state()
        if self.folder is not None:
            self.state["files"] = self.folder.state()
        self.store.commit_watch(
            self.report.run_id, samples, results, self.write_context, decisions, json.dumps(self.state)
        )

    def _count(self, decisions) -> None:
        for _, status, _, _ in decisions:
            self.report.decided[status] = self.report.decided.get(status, 0) + 1

    def _send(self, scored: list[Scored]) -> None:
        """The evaluation events of committed results, when ``[watch] otlp`` is set (a failure is said once)."""
        events = [event for kept in scored for event in kept.events]
        if not self.rules.otlp or not events:
            return
        from .events import send_events

        try:
            self.report.events_sent += send_events(self.report.run_id, events, self.rules.otlp, self.rules.otlp_headers)
        except Exception as exc:  # noqa: BLE001 - the watch goes on; the events of this batch are counted
            if not self.report.events_failed:
                self.say(f"warning: evaluation events not sent to {self.rules.otlp}: {exc}")
            self.report.events_failed += len(events)

    def redeliver(self, retry: bool = False) -> None:
        """Send the stored alarms no sink has had yet; with ``retry`` (when a session opens) also those a sink
        failed, to the sinks that failed only. An alarm is delivered once every sink had it."""
        pending = [
            record
            for record in self.state.get("alarms", [])
            if not record.get("delivered") and (retry or "sinks" not in record)
        ]
        for record in pending:
            failed = {sink for sink, outcome in (record.get("sinks") or {}).items() if outcome != "ok"}
            record["sinks"] = {**(record.get("sinks") or {}), **self.sinks.deliver(record, failed or None)}
            record["delivered"] = all(outcome == "ok" for outcome in record["sinks"].values())
            self.report.alarms.append(record)
        if pending:
            self.store.set_watch_state(self.report.run_id, json.dumps(self.state))

    def finish(self) -> WatchReport:
        """The report of the session, with the run's totals, the budget spent and the detectors' summaries."""
        self.report.totals = self.store.watch_counts(self.report.run_id)
        self.report.budget = self.spend.report(self.clock())
        self.report.detectors = self.monitors.summaries()
        return self.report


def _status(kept: Scored, status: str) -> tuple[str, str | None]:
    """(decision, reason) of a scored trace."""
    if kept.result.status != "ok":
        return "failed", kept.result.error
    if kept.refused:
        return "unscored", BUDGET
    return status, None
