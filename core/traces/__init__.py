"""Production traces: OTLP ingestion (``ragassay traces import`` / ``receive``), mapping spans to a question,
an answer and contexts (OpenInference and the OpenTelemetry GenAI semantic conventions), and the read API the
``traces`` dataset source and the ``trace_replay`` system use.

    from ragassay.traces import read_traces

    for trace in read_traces("path/to/project", sample="5%", where={"service.version": "1.2"}):
        print(trace.trace_id, trace.question, trace.answer)
"""

from __future__ import annotations

from .mapping import MappingFailure, TraceMapping, dataset_mapping, map_trace, span_kind
from .model import SpanEvent, Trace, TraceContext, TraceSpan, TraceTokens, Unmapped
from .reading import TraceLookup, describe_unmapped, open_traces_store, read_traces, scan_traces
from .select import parse_sample, parse_where, sampled
from .sessions import Session, SessionTurn, scan_sessions
from .trajectory import SpanTrajectory, spans_to_trajectory, trace_trajectory
from .trajectory_atif import AtifTrajectory, load_atif, read_atif
from .trajectory_steps import steps_from_dicts

__all__ = [
    "AtifTrajectory",
    "SpanTrajectory",
    "load_atif",
    "read_atif",
    "spans_to_trajectory",
    "steps_from_dicts",
    "trace_trajectory",
    "MappingFailure",
    "Session",
    "SessionTurn",
    "SpanEvent",
    "Trace",
    "TraceContext",
    "TraceLookup",
    "TraceMapping",
    "TraceSpan",
    "TraceTokens",
    "Unmapped",
    "dataset_mapping",
    "describe_unmapped",
    "map_trace",
    "open_traces_store",
    "parse_sample",
    "parse_where",
    "read_traces",
    "sampled",
    "scan_sessions",
    "scan_traces",
    "span_kind",
]
