"""Which stored traces to read: ``sample`` (a fraction picked by a hash of the trace id, so the same subset on
every run, process and ``PYTHONHASHSEED``) and ``where`` (attribute filters and a time window)."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ConfigError
from .model import Trace

WINDOW_KEYS = ("since", "until")
_FIELDS = {
    "model": "model",
    "service.name": "service_name",
    "service_name": "service_name",
    "service.version": "service_version",
    "service_version": "service_version",
    "version": "service_version",
    "session.id": "session_id",
    "session_id": "session_id",
}
_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


def parse_sample(sample: str | float | None) -> float | None:
    """A fraction in (0, 1] from "5%" or 0.05; None keeps every trace."""
    if sample is None or sample == "":
        return None
    if isinstance(sample, str):
        match = _PERCENT.match(sample)
        try:
            fraction = float(match[1]) / 100 if match else float(sample)
        except ValueError:
            raise ConfigError(
                f'sample = {sample!r}: give a percentage such as "5%" or a fraction such as 0.05'
            ) from None
    else:
        fraction = float(sample)
    if not 0 < fraction <= 1:
        raise ConfigError(f"sample = {sample!r}: must be above 0% and at most 100%")
    return fraction


def sampled(trace_id: str, fraction: float | None) -> bool:
    """Whether the trace (or the session, by its id) is in the sample: the first 8 bytes of sha256(id, UTF-8) as a
    number in [0, 1)."""
    if fraction is None:
        return True
    draw = int.from_bytes(hashlib.sha256(trace_id.encode("utf-8")).digest()[:8], "big") / 2**64
    return draw < fraction


def parse_where(items: Iterable[str]) -> dict[str, list[str]]:
    """``key=value`` strings (``--where route=/ask``) as filters; the same key twice means either value."""
    where: dict[str, list[str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--where {item!r}: write KEY=VALUE, e.g. service.version=1.2 or since=2025-01-01")
        where.setdefault(key.strip(), []).append(value.strip())
    return where


def _instant(value: str, key: str) -> int:
    """Nanoseconds since the epoch of an ISO 8601 date or datetime (UTC when no offset is given)."""
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(
            f"where {key} = {value!r}: not an ISO 8601 date or datetime (e.g. 2025-01-31T12:00)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1_000


class Filter:
    """A compiled ``where``: every key must match (values of one key: any of them)."""

    def __init__(self, where: Mapping[str, Any] | None):
        self.values: dict[str, set[str]] = {}
        self.since = self.until = None
        for key, value in (where or {}).items():
            values = [str(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
            if key in WINDOW_KEYS:
                if len(values) != 1:
                    raise ConfigError(f"where {key}: give one instant, not {len(values)}")
                setattr(self, key, _instant(values[0], key))
            else:
                self.values[key] = set(values)

    def __bool__(self) -> bool:
        return bool(self.values) or self.since is not None or self.until is not None

    def matches(self, trace: Trace) -> bool:
        if self.since is not None and trace.start_ns < self.since:
            return False
        if self.until is not None and trace.start_ns >= self.until:
            return False
        return all(self._value(trace, key) & allowed for key, allowed in self.values.items())

    @staticmethod
    def _value(trace: Trace, key: str) -> set[str]:
        """Every value the trace has for ``key``: a mapped field, a resource attribute, or a span attribute."""
        if key in _FIELDS:
            return {str(getattr(trace, _FIELDS[key]))}
        found = {str(trace.resource_attributes[key])} if key in trace.resource_attributes else set()
        return found | {str(s.attributes[key]) for s in trace.spans if key in s.attributes}
