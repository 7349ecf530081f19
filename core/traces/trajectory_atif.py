"""ATIF trajectory files (the Agent Trajectory Interchange Format that Arize Phoenix imports) as trajectories.

Specification: Harbor RFC 0001, "Agent Trajectory Interchange Format (ATIF) Specification", v1.7 (April 2026;
https://github.com/laude-institute/harbor/blob/main/docs/rfcs/0001-trajectory-format.md). Files of ATIF-v1.0 to
v1.7 are read (later fields are optional). A trajectory's ``steps`` map to :class:`~ragassay.Step` as follows:

* ``source: "user"`` and ``"system"`` steps are no steps (the first user message is the question); counted in
  ``skipped``;
* an ``agent`` step is one ``model_call`` (id ``"<step_id>"``; ``model_name`` or the agent's as name, its
  ``message`` as output, ``metrics.prompt_tokens`` / ``completion_tokens`` / ``cached_tokens`` as usage, with
  ``calls`` = ``llm_call_count`` or 1; ``timestamp`` as started_at), unless ``llm_call_count`` is 0 (a deterministic
  dispatch: no model call), then one ``tool_call`` per ``tool_calls`` entry (id ``"<step_id>.<n>"``;
  ``function_name``, ``tool_call_id``, ``arguments``, the observation result whose ``source_call_id`` is that call
  as result);
* an observation result with ``subagent_trajectory_ref`` is an ``agent`` step (id ``"<step_id>.a<n>"``) followed
  by the subagent's own steps (ids prefixed ``"<agent step id>/"``, ``parent_id`` the agent step): embedded ones
  resolved by ``trajectory_id`` in the root's ``subagent_trajectories``, file refs by ``trajectory_path`` relative
  to the file's folder; an unresolvable ref leaves the agent step without steps and says why in its attributes;
* the final ``answer`` step (id ``"answer"``) holds the message of the last agent step that has one.

ATIF records no tool error; a result whose ``extra`` has ``"error"`` (a string) or ``"is_error": true`` (then its
content is the error) is read as one, a convention of this reader, not of the specification.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import DatasetError
from ..models import Step, TokenUsage
from .trajectory import ANSWER_STEP_ID

MAX_DEPTH = 8  # nested subagents followed at most


class AtifTrajectory(BaseModel):
    """One ATIF file read: its question, answer, steps, usage and identity."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The first user step's message ('' when none).")
    answer: str = Field(description="The last agent step's message ('' when none).")
    steps: list[Step] = Field(default_factory=list, description="The trajectory, the answer step last.")
    usage: TokenUsage = Field(
        default_factory=TokenUsage, description="Summed over the model calls, the subagents' included."
    )
    session_id: str = Field(default="", description="The root's session_id.")
    trajectory_id: str = Field(default="", description="The root's trajectory_id.")
    agent: dict[str, Any] = Field(default_factory=dict, description="The root's agent object.")
    schema_version: str = Field(default="", description="e.g. 'ATIF-v1.7'.")
    skipped: dict[str, int] = Field(default_factory=dict, description="Steps that are no step, by source.")
    latency_s: float | None = Field(default=None, description="Last minus first timestamp, when both are given.")


def load_atif(path: Path) -> AtifTrajectory:
    """Read one ATIF JSON file; a malformed one is a :class:`~ragassay.DatasetError` naming the file and field."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DatasetError(f"{path}: not a readable ATIF JSON file ({exc})") from None
    return read_atif(data, str(path), folder=Path(path).parent)


def read_atif(data: Any, where: str, folder: Path | None = None) -> AtifTrajectory:
    """An ATIF document (parsed JSON) as a trajectory; ``folder`` resolves subagent ``trajectory_path`` refs."""
    _check_root(data, where)
    reader = _Reader(data, where, folder)
    steps = reader.steps(data, prefix="", parent=None, depth=0)
    answer = _last_agent_message(data["steps"])
    if answer:
        steps.append(Step(id=ANSWER_STEP_ID, kind="answer", output=answer))
    usage = sum((s.usage for s in steps if s.usage is not None), TokenUsage())
    times = [t for t in (_time(s.get("timestamp")) for s in data["steps"] if isinstance(s, dict)) if t is not None]
    return AtifTrajectory(
        question=next((_text(s.get("message")) for s in data["steps"] if s.get("source") == "user"), ""),
        answer=answer,
        steps=steps,
        usage=usage,
        session_id=str(data.get("session_id") or ""),
        trajectory_id=str(data.get("trajectory_id") or ""),
        agent=data.get("agent") if isinstance(data.get("agent"), dict) else {},
        schema_version=str(data.get("schema_version") or ""),
        skipped=dict(sorted(reader.skipped.items())),
        latency_s=max(times) - min(times) if len(times) > 1 else None,
    )


def _check_root(data: Any, where: str) -> None:
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: an ATIF trajectory is a JSON object, not {type(data).__name__}")
    steps = data.get("steps")
    if not isinstance(steps, list):
        raise DatasetError(f"{where}: no 'steps' array (is this an ATIF trajectory file?)")
    for index, step in enumerate(steps):
        if not isinstance(step, dict) or step.get("source") not in ("user", "system", "agent"):
            raise DatasetError(
                f"{where}: steps[{index}] must be an object whose 'source' is 'user', 'system' or 'agent'"
            )


class _Reader:
    """Walks a root trajectory and the subagent trajectories it references."""

    def __init__(self, root: dict[str, Any], where: str, folder: Path | None):
        self.where = where
        self.folder = folder
        embedded = root.get("subagent_trajectories") or []
        self.embedded = {str(t.get("trajectory_id")): t for t in embedded if isinstance(t, dict)}
        self.skipped: dict[str, int] = {}

    def steps(self, trajectory: dict[str, Any], prefix: str, parent: str | None, depth: int) -> list[Step]:
        agent = trajectory.get("agent") if isinstance(trajectory.get("agent"), dict) else {}
        found: list[Step] = []
        for step in trajectory.get("steps") or []:
            if not isinstance(step, dict):
                continue
            if step.get("source") != "agent":
                key = str(step.get("source"))
                self.skipped[key] = self.skipped.get(key, 0) + 1
                continue
            found += self._agent_turn(step, agent, prefix, parent, depth)
        return found

    def _agent_turn(
        self, step: dict[str, Any], agent: dict[str, Any], prefix: str, parent: str | None, depth: int
    ) -> list[Step]:
        sid = f"{prefix}{step.get('step_id')}"
        started = _time(step.get("timestamp"))
        found: list[Step] = []
        if step.get("llm_call_count") != 0:
            found.append(_model_call(step, agent, sid, parent, started))
        results = [r for r in ((step.get("observation") or {}).get("results") or []) if isinstance(r, dict)]
        by_call = {r.get("source_call_id"): r for r in results if r.get("source_call_id")}
        for n, call in enumerate(c for c in step.get("tool_calls") or [] if isinstance(c, dict)):
            found.append(_tool_call(call, by_call.get(call.get("tool_call_id")), f"{sid}.{n + 1}", parent, started))
        refs = [ref for r in results for ref in (r.get("subagent_trajectory_ref") or []) if isinstance(ref, dict)]
        for n, ref in enumerate(refs):
            found += self._subagent(ref, f"{sid}.a{n + 1}", parent, started, depth)
        return found

    def _subagent(self, ref: dict[str, Any], sid: str, parent: str | None, started, depth: int) -> list[Step]:
        trajectory, problem = self._resolve(ref, depth)
        agent = (trajectory or {}).get("agent") or {}
        attributes = {k: ref[k] for k in ("trajectory_id", "trajectory_path", "session_id") if ref.get(k)}
        if problem:
            attributes["unresolved"] = problem
        step = Step(
            id=sid,
            kind="agent",
            parent_id=parent,
            name=str(agent.get("name") or ref.get("trajectory_id") or ""),
            output=_last_agent_message((trajectory or {}).get("steps") or []) or None,
            started_at=started,
            attributes=attributes,
        )
        inner = self.steps(trajectory, f"{sid}/", sid, depth + 1) if trajectory else []
        return [step, *inner]

    def _resolve(self, ref: dict[str, Any], depth: int) -> tuple[dict[str, Any] | None, str]:
        if depth >= MAX_DEPTH:
            return None, f"subagents nested deeper than {MAX_DEPTH}"
        if ref.get("trajectory_id") and str(ref["trajectory_id"]) in self.embedded:
            return self.embedded[str(ref["trajectory_id"])], ""
        path = ref.get("trajectory_path")
        if path and self.folder is not None and (self.folder / str(path)).is_file():
            try:
                data = json.loads((self.folder / str(path)).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                return None, f"{path}: not readable ({exc})"
            _check_root(data, f"{self.where} -> {path}")
            return data, ""
        wanted = ref.get("trajectory_id") or path or ref.get("session_id") or "?"
        return None, f"subagent trajectory {wanted} not found (not embedded, no such file)"


def _model_call(step: dict[str, Any], agent: dict[str, Any], sid: str, parent: str | None, started) -> Step:
    metrics = step.get("metrics") if isinstance(step.get("metrics"), dict) else {}
    calls = step.get("llm_call_count")
    usage = TokenUsage(
        input_tokens=_count(metrics.get("prompt_tokens")),
        output_tokens=_count(metrics.get("completion_tokens")),
        cached_tokens=_count(metrics.get("cached_tokens")),
        calls=calls if isinstance(calls, int) and calls > 0 else 1,
    )
    attributes = {"atif_step_id": step.get("step_id")}
    for key in ("reasoning_content", "reasoning_effort"):
        if step.get(key) not in (None, ""):
            attributes[key] = step[key]
    if metrics.get("cost_usd") is not None:
        attributes["cost_usd"] = metrics["cost_usd"]
    return Step(
        id=sid,
        kind="model_call",
        parent_id=parent,
        name=str(step.get("model_name") or agent.get("model_name") or ""),
        output=_text(step.get("message")) or None,
        usage=usage,
        started_at=started,
        attributes=attributes,
    )


def _tool_call(call: dict[str, Any], result: dict[str, Any] | None, sid: str, parent: str | None, started) -> Step:
    content = (result or {}).get("content")
    extra = (result or {}).get("extra") if isinstance((result or {}).get("extra"), dict) else {}
    error = extra.get("error") if isinstance(extra.get("error"), str) else None
    if error is None and extra.get("is_error") is True:
        error = _text(content) or "error"
    arguments = call.get("arguments")
    return Step(
        id=sid,
        kind="tool_call",
        parent_id=parent,
        name=str(call.get("function_name") or ""),
        call_id=str(call["tool_call_id"]) if call.get("tool_call_id") else None,
        arguments=arguments if isinstance(arguments, dict) else None,
        result=None if error or content is None else (_text(content) if isinstance(content, list) else content),
        error=error,
        started_at=started,
        attributes={"extra": extra} if extra else {},
    )


def _last_agent_message(steps: list[Any]) -> str:
    for step in reversed(steps):
        if isinstance(step, dict) and step.get("source") == "agent" and _text(step.get("message")):
            return _text(step.get("message"))
    return ""


def _text(message: Any) -> str:
    """A message: a string, or (v1.6+) content parts whose text parts are joined."""
    if isinstance(message, str):
        return message.strip()
    if isinstance(message, list):
        parts = [p.get("text") for p in message if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str) and p).strip()
    return ""


def _count(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else 0


def _time(value: Any) -> float | None:
    """An ISO 8601 timestamp as seconds since the epoch (a 'Z' suffix is UTC; no zone: UTC); None if unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()
