"""The page data of a watch: the spend windows count what the watch's budget counts, each metric's detector is
restored from its stored state (or says why not), bins carry their snapshot, alarms come newest first with their
versions in the stored (first suspect first) order."""

from __future__ import annotations

import math

from ragassay.analysis.monitor import Detector, Observation
from ragassay.analysis.watch_view import spend_windows, watch_view
from ragassay.config.watch import WatchBudget
from ragassay.results.watches import WatchRecord
from ragassay.watch.budget import RollingSpend
from ragassay.watch.history import History

NOW = 1_750_000_000.0


def test_the_spend_windows_agree_with_the_watch_budget():
    limits = WatchBudget(calls_per_hour=10, usd_per_day=2.0)
    spend = RollingSpend(limits)
    for minutes_ago, calls, usd in ((30 * 60, 5, 0.5), (120, 3, 0.25), (59, 1, 0.125), (0, 2, 0.0625)):
        spend.add(NOW - minutes_ago * 60, calls, usd)
    windows = spend_windows(spend.state(), limits.model_dump(), NOW)
    report = spend.report(NOW)
    assert [(w.calls, w.usd) for w in windows] == [
        (report["last_hour"]["calls"], report["last_hour"]["usd"]),
        (report["last_day"]["calls"], report["last_day"]["usd"]),
    ]
    assert (windows[0].calls, windows[1].calls) == (3, 6)  # 59 and 0 minutes ago; 120 too; 30 hours ago: neither
    assert (windows[0].calls_limit, windows[0].usd_limit, windows[1].calls_limit, windows[1].usd_limit) == (
        10,
        None,
        None,
        2.0,
    )


def _record(state, counts=None) -> WatchRecord:
    return WatchRecord("r1", "w", "p", NOW, ("m", "judge:j"), {"budget": {"calls_per_day": 5}}, state, counts)


def test_the_view_restores_each_detector_and_keeps_the_bins_and_alarms():
    detector, history = Detector("m", 0.8, margin=0.1), History()
    for k in range(30):
        at = NOW - 3600 + 60 * k
        history.observe("m", 1.0, at, detector.summary)
        detector.observe(Observation(1.0, at, f"t{k}", {}))
    alarms = [
        {"metric": "m", "fired_at": NOW - 100, "versions": {"service.version": {"9": 7, "8": 2}}, "worst_traces": []},
        {"metric": "m", "fired_at": NOW - 50, "versions": {}, "worst_traces": ["t3"]},
    ]
    state = {
        "detectors": {"m": detector.state(), "judge:j": {"format": 99}},
        "history": history.state({"m": detector.summary}),
        "alarms": alarms,
        "spend": [[math.floor((NOW - 30) / 60), 4, 0.5]],
        "committed_at": NOW - 5,
    }
    view = watch_view(_record(state, {"scored": 30, "unscored": 6}), NOW)
    m, j = view.metrics
    assert m.summary["n"] == 30 and abs(m.summary["mean"] - 1.0) < 1e-12 and m.margin == 0.1
    assert len(m.bins) == 30 and m.bins[-1].n == 30 and m.bins[-1].end - m.bins[-1].start == 60
    assert abs(m.bins[-1].low - detector.summary()["low"]) < 1e-5  # the last bin's snapshot is the detector now
    assert [a["fired_at"] for a in view.alarms] == [NOW - 50, NOW - 100]  # newest first
    assert view.alarms[1]["versions"] == [("service.version", [("9", 7), ("8", 2)])]
    assert len(m.alarms) == 2 and j.alarms == []
    assert j.summary is None and "cannot be read" in j.problem  # a state of another format: said, not hidden
    assert view.unscored_for_budget == 6 and view.spend[1].calls == 4 and view.spend[1].calls_limit == 5
    assert view.bin_label == "1-minute"


def test_a_watch_before_its_first_commit_has_no_detector_and_no_bins():
    view = watch_view(_record({}), NOW)
    assert [t.summary for t in view.metrics] == [None, None]
    assert all("no detector yet" in t.problem and t.bins == [] for t in view.metrics)
    assert [w.calls for w in view.spend] == [0, 0] and view.alarms == []
