"""Comparing the tool calls of a trajectory with the expected ones: which steps are calls, when two calls' arguments
match, a one-to-one pairing of expected and made calls, and the four trajectory match modes.

- The calls of a trajectory are its ``tool_call`` steps in order (nested agents' included); with
  ``count_retrievals`` its ``retrieval`` steps too, as a call of the tool named by the step (``retrieval`` when it
  has no name) with arguments ``{"query": <its query>}``.
- Argument match modes, as LangChain agentevals' ``tool_args_match_mode`` (``agentevals/trajectory/utils.py``):
  ``exact`` (equal dicts), ``ignore`` (any), ``subset`` (every argument of the made call is in the expected call
  with the same value), ``superset`` (every expected argument is in the made call with the same value); a per-tool
  override is one of these modes or a list of argument names that must be equal (agentevals'
  ``tool_args_match_overrides``, without callables: a config holds no code). A nested name ``"a.b"`` reads
  ``{"a": {"b": ...}}``, and a name absent on both sides is equal (as agentevals' partial matcher reads it).
- Pairing: a maximum one-to-one matching of expected calls to made calls with the same name whose arguments match
  (augmenting paths, Kuhn's algorithm; deterministic: lower indices first). agentevals pairs first-fit greedily;
  both find a complete pairing whenever one exists for ``exact`` and ``ignore`` (equality is transitive), while
  with ``subset``/``superset`` greedy can miss one that exists and we do not.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from ragassay import RAGOutput, Sample, ScoringUnit, Step, ToolCall, Unscored

ArgsMode = Literal["exact", "ignore", "subset", "superset"]
MatchMode = Literal["strict", "unordered", "subset", "superset"]


class CallOptions(BaseModel):
    """Options every metric that compares tool calls has: which steps are calls, how arguments match."""

    model_config = ConfigDict(extra="forbid")

    count_retrievals: bool = Field(
        False,
        description="Also count retrieval steps as tool calls (name: the step's name, or 'retrieval'; arguments: "
        "{'query': its query}), for agents whose retrieval tool is recorded as retrieval steps.",
    )
    args_mode: ArgsMode = Field(
        "exact",
        description="When a made call's arguments match the expected ones (agentevals' tool_args_match_mode): exact, "
        "ignore, subset (the call's arguments are among the expected) or superset (the expected are among the "
        "call's).",
    )
    args_overrides: dict[str, ArgsMode | list[str]] = Field(
        default_factory=dict,
        description="Per tool name: another args mode, or the argument names that must be equal (nested 'a.b'); "
        "agentevals' tool_args_match_overrides without callables.",
    )


class MadeCall(NamedTuple):
    """A call of the trajectory: the step it comes from, its position in the trajectory, name and arguments."""

    step: Step
    index: int
    name: str
    arguments: dict[str, Any]


def made_calls(trajectory: Sequence[Step], count_retrievals: bool = False) -> list[MadeCall]:
    """The tool calls of ``trajectory`` in order (module docstring)."""
    calls = []
    for index, step in enumerate(trajectory):
        if step.kind == "tool_call":
            calls.append(MadeCall(step, index, step.name, dict(step.arguments or {})))
        elif step.kind == "retrieval" and count_retrievals:
            calls.append(MadeCall(step, index, step.name or "retrieval", {"query": step.query}))
    return calls


def needs_trajectory(output: RAGOutput) -> Unscored | None:
    """Unscored when ``output`` carries no trajectory, else None."""
    if output.trajectory:
        return None
    return Unscored(reason="the output has no trajectory (RAGOutput.trajectory is empty): nothing to compare")


def needs_expected(sample: Sample) -> Unscored | None:
    """Unscored when ``sample`` names no expected tool call, else None."""
    if sample.expected_tool_calls:
        return None
    return Unscored(reason="the sample has no expected_tool_calls: nothing to compare the calls with")


def _nested(arguments: dict[str, Any], path: str) -> Any:
    current: Any = arguments
    for part in path.split("."):
        if not isinstance(current, dict):
            return None
        current = current.get(part)
        if current is None:
            return None
    return current


def _mode_matcher(mode: str) -> Callable[[dict, dict], bool]:
    if mode == "exact":
        return lambda made, expected: made == expected
    if mode == "subset":
        return lambda made, expected: all(k in expected and expected[k] == v for k, v in made.items())
    if mode == "superset":
        return lambda made, expected: all(k in made and made[k] == v for k, v in expected.items())
    return lambda made, expected: True


def args_matcher(options: CallOptions, tool: str) -> Callable[[dict, dict], bool]:
    """``matches(made_arguments, expected_arguments)`` for calls of ``tool`` under ``options``."""
    override = options.args_overrides.get(tool)
    if isinstance(override, list):
        keys = list(override)
        return lambda made, expected: all(_nested(made, k) == _nested(expected, k) for k in keys)
    return _mode_matcher(override or options.args_mode)


def calls_match(options: CallOptions, made: MadeCall, expected: ToolCall) -> bool:
    """Same name, and arguments that match under ``options``."""
    return made.name == expected.name and args_matcher(options, made.name)(made.arguments, dict(expected.arguments))


def pairing(expected: Sequence[Any], made: Sequence[Any], fits: Callable[[int, int], bool]) -> dict[int, int]:
    """A maximum one-to-one pairing {expected index: made index} where ``fits(e, m)`` (Kuhn's augmenting paths):
    each expected call in turn takes the first free made call that fits, else frees one along an augmenting path;
    deterministic."""
    owner: dict[int, int] = {}  # made index -> expected index
    candidates = range(len(made))
    for e in range(len(expected)):
        _place(e, set(), owner, candidates, fits)
    return {e: m for m, e in sorted(owner.items())}


def _place(e: int, seen: set[int], owner: dict[int, int], candidates: range, fits: Callable[[int, int], bool]) -> bool:
    """Give expected call ``e`` a made call in ``owner`` (made -> expected): a free one that fits, else one whose
    owner can move along an augmenting path. A module function, not a closure calling itself: such a closure is a
    reference cycle that only the garbage collector frees, with everything it holds."""
    for m in candidates:
        if m not in owner and m not in seen and fits(e, m):
            owner[m] = e
            return True
    for m in candidates:
        if m in seen or not fits(e, m):
            continue
        seen.add(m)
        if _place(owner[m], seen, owner, candidates, fits):
            owner[m] = e
            return True
    return False


def call_row(made: MadeCall) -> dict[str, Any]:
    """A made call as a details row: the step id, its 0-based index in the trajectory, name and arguments."""
    return {"step": made.step.id, "step_index": made.index, "name": made.name, "arguments": made.arguments}


_SCALARS = frozenset({str, int, float, bool, type(None)})


class _NotPlain(Exception):
    """A value that is not JSON's own types (:func:`_plain_copy`)."""


def _plain_copy(value: Any) -> Any:
    """A fresh copy of ``value`` when it is JSON's own types already (exactly str, int, float, bool, None, lists,
    dicts with str keys), which the JSON round trip would give back equal; else raises :class:`_NotPlain`."""
    kind = type(value)
    if kind is dict:
        copied = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            copied[key] = item if type(item) in _SCALARS else _plain_copy(item)
        return copied
    if kind is list:
        return [item if type(item) in _SCALARS else _plain_copy(item) for item in value]
    if kind in _SCALARS:
        return value
    raise _NotPlain


def jsonable(arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` as stored JSON (anything not JSON becomes its text)."""
    try:
        return _plain_copy(arguments)
    except _NotPlain:
        return json.loads(json.dumps(arguments, default=str))


def _args_key(options: CallOptions) -> tuple:
    overrides = options.args_overrides.items()
    return options.args_mode, tuple(sorted((t, tuple(o) if isinstance(o, list) else o) for t, o in overrides))


class ComparedCalls:
    """The expected and made calls of one (sample, output) (:func:`compared_calls`), with their argument comparisons,
    pairings and arguments as stored JSON (:func:`jsonable`) computed once per set of options. Read only (the
    JSON arguments too: the details rows of the unit's metrics share them); pairings are copies."""

    def __init__(self, expected: list[ToolCall], made: list[MadeCall]) -> None:
        self.expected = expected
        self.made = made
        self.expected_arguments = [call.arguments for call in expected]
        self._fits: dict[tuple, dict[tuple[int, int], bool]] = {}
        self._pairings: dict[tuple, dict[int, int]] = {}
        self._expected_json: list[dict[str, Any] | None] = [None] * len(expected)
        self._made_json: list[dict[str, Any] | None] = [None] * len(made)
        self._rows: dict[tuple[int, int | None], dict[str, Any]] = {}

    def same_name(self, e: int, m: int) -> bool:
        """Whether expected call ``e`` and made call ``m`` name the same tool."""
        return self.expected[e].name == self.made[m].name

    def fits(self, options: CallOptions) -> Callable[[int, int], bool]:
        """``fits(e, m)``: :func:`calls_match` of made call ``m`` and expected call ``e`` under ``options``."""
        cache = self._fits.setdefault(_args_key(options), {})
        matchers: dict[str, Callable[[dict, dict], bool]] = {}  # tool name -> its args_matcher under options

        def fits(e: int, m: int) -> bool:
            found = cache.get((e, m))
            if found is None:
                name = self.made[m].name
                found = name == self.expected[e].name
                if found:
                    matcher = matchers.get(name) or matchers.setdefault(name, args_matcher(options, name))
                    found = matcher(self.made[m].arguments, self.expected_arguments[e])
                cache[(e, m)] = found
            return found

        return fits

    def by_name(self) -> dict[int, int]:
        """A maximum one-to-one pairing of expected and made calls by tool name (:func:`pairing`)."""
        if "name" not in self._pairings:
            self._pairings["name"] = pairing(self.expected, self.made, self.same_name)
        return dict(self._pairings["name"])

    def matching(self, options: CallOptions) -> dict[int, int]:
        """A maximum one-to-one pairing of calls that match under ``options`` (name and arguments)."""
        key = ("match", _args_key(options))
        if key not in self._pairings:
            self._pairings[key] = pairing(self.expected, self.made, self.fits(options))
        return dict(self._pairings[key])

    def expected_json(self, e: int) -> dict[str, Any]:
        """:func:`jsonable` of expected call ``e``'s arguments (read only)."""
        found = self._expected_json[e]
        if found is None:
            found = self._expected_json[e] = jsonable(self.expected[e].arguments)
        return found

    def made_json(self, m: int) -> dict[str, Any]:
        """:func:`jsonable` of made call ``m``'s arguments (read only)."""
        found = self._made_json[m]
        if found is None:
            found = self._made_json[m] = jsonable(self.made[m].arguments)
        return found

    def row(self, e: int, m: int | None) -> dict[str, Any]:
        """Expected call ``e`` as a details row, with made call ``m`` paired with it (None: unpaired): index, name,
        expected arguments, the made call's step id, 0-based index in the trajectory and arguments; a fresh dict
        (its argument dicts are shared, read only)."""
        found = self._rows.get((e, m))
        if found is None:
            paired = None if m is None else self.made[m]
            found = self._rows[(e, m)] = {
                "index": e,
                "name": self.expected[e].name,
                "expected_arguments": self.expected_json(e),
                "step": None if paired is None else paired.step.id,
                "step_index": None if paired is None else paired.index,
                "arguments": None if m is None else self.made_json(m),
            }
        return dict(found)


def compared_calls(sample: Sample, output: RAGOutput, count_retrievals: bool) -> ComparedCalls:
    """The sample's expected calls and the output's made calls (retrieval steps too with ``count_retrievals``)."""
    return ComparedCalls(list(sample.expected_tool_calls), made_calls(output.trajectory, count_retrievals))


def unit_calls(unit: ScoringUnit, count_retrievals: bool) -> ComparedCalls:
    """:func:`compared_calls` of the unit's sample and output, made once per unit for every metric that compares
    calls (their argument comparisons and pairings too, once per set of options)."""
    key = ("trajectory_calls", "compared", count_retrievals)
    return unit.shared(key, lambda: compared_calls(unit.sample, unit.output, count_retrievals))
