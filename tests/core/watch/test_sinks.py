"""Alarm sinks against loopback servers: the webhook is retried a bounded number of times (a 5xx, 429 or a refused
connection; a 4xx is not retried) with doubling waits; an alarm a sink did not get stays undelivered and the next
session sends it to that sink only; the alarm also goes out as a ``ragassay.watch.alarm`` OTLP event."""

from __future__ import annotations

import json
import threading

import pytest

from ragassay.cli.watch_cmd import load_statistics
from ragassay.config.watch import WatchSinks
from ragassay.watch import StopRule, watch
from ragassay.watch.sinks import Sinks

from servers.base import JSONServer, Reply
from watch_streams import BAD, DEGRADED, GOOD, METRIC, project, store_traces, traces_file

pytest.importorskip("opentelemetry.proto")

RECORD = {"text": "ALARM [w] m worse", "metric": "m", "watch": "w", "run": "r", "delivered": False, "sinks": {}}


class FlakyHook(JSONServer):
    """A webhook that answers ``status`` to the first ``failing`` posts, then 200; it keeps every body."""

    def __init__(self, failing: int, status: int = 503):
        self.failing, self.status, self.bodies = failing, status, []
        self.lock = threading.Lock()
        super().__init__({("POST", "/hook"): self._answer})

    def _answer(self, request) -> Reply:
        with self.lock:
            self.bodies.append(request.json)
            return Reply(self.status if len(self.bodies) <= self.failing else 200, {})


def _sinks(url: str, retries: int, waits: list[float]) -> Sinks:
    settings = WatchSinks(stderr=False, webhook=url, webhook_retries=retries, webhook_timeout_s=30)
    return Sinks(settings, base_dir=None, say=lambda _: None, sleep=waits.append)


def test_a_webhook_that_fails_twice_gets_the_alarm_on_the_third_post():
    waits: list[float] = []
    with FlakyHook(failing=2) as hook:
        outcome = _sinks(f"{hook.url}/hook", 3, waits).deliver(RECORD)
    assert outcome == {"webhook": "ok"} and len(hook.bodies) == 3 and waits == [0.5, 1.0]
    assert hook.bodies[0] == {k: v for k, v in RECORD.items() if k not in ("delivered", "sinks")}


def test_the_retries_are_bounded_and_the_failure_says_why():
    waits: list[float] = []
    with FlakyHook(failing=100) as hook:
        outcome = _sinks(f"{hook.url}/hook", 2, waits).deliver(RECORD)
    assert len(hook.bodies) == 3 and waits == [0.5, 1.0]
    assert outcome["webhook"].endswith("HTTP 503 (after 3 attempt(s))")


def test_a_client_error_is_not_retried():
    waits: list[float] = []
    with FlakyHook(failing=100, status=400) as hook:
        outcome = _sinks(f"{hook.url}/hook", 3, waits).deliver(RECORD)
    assert len(hook.bodies) == 1 and waits == [] and "HTTP 400" in outcome["webhook"]


def _alarming_stream(tmp_path, hook_url: str):
    watched = project(
        tmp_path,
        "reference = { target = { answer_relevance_token_recall = 0.9 } }\n"
        f'sinks = {{ stderr = false, jsonl = "alarms.jsonl", webhook = "{hook_url}", webhook_retries = 1 }}\n',
    )
    watch(watched, load_statistics(), stop=StopRule(seconds=0), say=lambda _: None)
    store_traces(watched, traces_file(tmp_path / "v1.jsonl", range(1, 11), "1", GOOD))
    store_traces(watched, traces_file(tmp_path / "v2.jsonl", range(11, 11 + DEGRADED), "2", BAD))
    return watched


@pytest.mark.timeout(300)
def test_an_alarm_the_webhook_refused_is_delivered_to_it_by_the_next_session(tmp_path):
    lines: list[str] = []
    with FlakyHook(failing=2) as hook:  # the session's two attempts fail; the next session's post succeeds
        watched = _alarming_stream(tmp_path, f"{hook.url}/hook")
        first = watch(watched, load_statistics(), stop=StopRule(traces=10 + DEGRADED), say=lines.append)
        assert len(first.alarms) == 1 and len(hook.bodies) == 2
        alarm = first.alarms[0]
        assert alarm["metric"] == METRIC and not alarm["delivered"]
        assert alarm["sinks"]["jsonl"] == "ok" and "HTTP 503 (after 2 attempt(s))" in alarm["sinks"]["webhook"]
        assert any("did not reach the webhook sink" in line for line in lines)
        second = watch(watched, load_statistics(), stop=StopRule(seconds=0), say=lines.append)
        assert len(hook.bodies) == 3 and hook.bodies[2]["text"] == alarm["text"]
        assert [a["text"] for a in second.alarms] == [alarm["text"]] and second.alarms[0]["delivered"]
        third = watch(watched, load_statistics(), stop=StopRule(seconds=0), say=lines.append)
    assert third.alarms == [] and len(hook.bodies) == 3  # delivered: never sent again
    written = (tmp_path / "alarms.jsonl").read_text().splitlines()
    assert [json.loads(line)["text"] for line in written] == [alarm["text"]]  # the jsonl sink had it once
    assert list(json.loads(written[0])["versions"]["service.version"])[0] == "2"  # the first suspect stays first
