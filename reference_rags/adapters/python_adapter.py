"""``python`` adapter: call the user's ``module:function`` for every sample.

A conversation turn reaches the callable with its conversation when the function names the parameters: one called
``history`` gets the turns before this one as ``[{"speaker": "user" | "agent", "text": ...}, ...]`` (oldest first,
``[]`` for a first turn or a single question), ``conversation_id`` the conversation's id and ``turn`` the 1-based
turn (None for a single question). A function naming none of them is called as before (``function(question)``,
or ``function(question, sample)`` with ``pass_sample``, the sample carrying ``history``); when the dataset has
turns with a history that such a function never sees, the run warns.

An agent returns its steps with the answer: ``{"answer": ..., "trajectory": [{"kind": "retrieval", "query": ...,
"context_ids": [...]}, {"kind": "tool_call", "name": ..., "arguments": {...}, "result": ...}, ...]}`` (the
fields of :class:`ragassay.Step`; docs/own-rag.md), stored as the output's trajectory.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragassay import ConfigError, Corpus, RAGOutput, RAGSystem, Sample

from .outputs import MIB, check_size, to_output

#: Keyword parameters a callable may name to receive a turn's conversation.
CONVERSATION_PARAMETERS = ("history", "conversation_id", "turn")


class PythonOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    callable: str = Field(description="'module:function' (or 'module:object.method') answering one question.")
    path: list[str] = Field(
        default_factory=list, description="Folders added to sys.path first, relative to the config's folder."
    )
    pass_sample: bool = Field(False, description="Call function(question, sample) instead of function(question).")
    in_thread: bool = Field(
        True,
        description="Run a synchronous function in a worker thread so samples overlap; "
        "set false for code that is not thread-safe.",
    )

    max_bytes: int = Field(
        10 * MIB,
        ge=1,
        description="Largest answer the callable may return, in bytes of text (answer, contexts, ids and trace; "
        "default 10 MiB): a larger one fails its unit with the reason and is not stored.",
    )

    @field_validator("callable")
    @classmethod
    def _form(cls, value: str) -> str:
        module, _, attr = value.partition(":")
        if not module or not attr:
            raise ValueError("must be 'module:function', e.g. 'my_rag.pipeline:answer'")
        return value


class PythonRAG(RAGSystem):
    """Your own RAG as a Python callable: returns an answer string, or a dict with answer/contexts/context_ids
    (and an agent's ``trajectory``: a list of step objects)."""

    name = "python"
    Options = PythonOptions

    @classmethod
    def content_key(cls, options: PythonOptions, context) -> str | None:
        """sha256 of the source file of the callable's module (found without importing it): editing your RAG's
        code makes a new run. Code in other modules it imports is not covered (use ``ragassay run --new``)."""
        module_name = options.callable.partition(":")[0]
        folders = [str(context.resolve(folder)) for folder in options.path]
        saved = list(sys.path)
        sys.path[:0] = [f for f in folders if f not in sys.path]
        try:
            spec = importlib.util.find_spec(module_name)
        except (ImportError, ValueError):
            spec = None
        finally:
            sys.path[:] = saved
        origin = Path(spec.origin) if spec is not None and spec.origin else None
        if origin is None or not origin.is_file():
            return None
        return hashlib.sha256(origin.read_bytes()).hexdigest()

    def prepare(self, corpus: Corpus) -> None:
        self.function = self._load()

    def check_samples(self, samples) -> list[str]:
        """A warning when turns have a history the callable never gets (it names no ``history`` parameter and
        does not take the sample)."""
        function = getattr(self, "function", None) or self._load()
        if self.options.pass_sample or "history" in conversation_parameters(function):
            return []
        count = sum(1 for sample in samples if sample.history)
        if not count:
            return []
        return [
            f"python adapter: {count} conversation turn(s) have a history, but {self.options.callable} takes no "
            "'history' parameter (nor the sample): it answers each turn without the conversation before it. Add a "
            "'history' parameter (docs/own-rag.md) or set pass_sample = true"
        ]

    def _load(self) -> Callable[..., Any]:
        for folder in reversed(self.options.path):
            resolved = str(self.context.resolve(folder))
            if resolved not in sys.path:
                sys.path.insert(0, resolved)
        module_name, _, attr = self.options.callable.partition(":")
        try:
            target: Any = importlib.import_module(module_name)
        except ImportError as exc:
            raise ConfigError(
                f"python adapter: cannot import '{module_name}': {exc}. Check options.callable and options.path."
            ) from None
        for part in attr.split("."):
            if not hasattr(target, part):
                raise ConfigError(f"python adapter: '{module_name}' has no attribute '{attr}'.")
            target = getattr(target, part)
        if not callable(target):
            raise ConfigError(f"python adapter: '{self.options.callable}' is not callable.")
        return target

    async def answer(self, sample: Sample) -> RAGOutput:
        function = getattr(self, "function", None) or self._load()
        args = (sample.question, sample) if self.options.pass_sample else (sample.question,)
        kwargs = conversation_arguments(sample, conversation_parameters(function))
        if inspect.iscoroutinefunction(function) or not self.options.in_thread:
            result = function(*args, **kwargs)
        else:
            result = await asyncio.to_thread(function, *args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return check_size(to_output(result, self.options.callable), self.options.max_bytes, self.options.callable)


def conversation_parameters(function: Callable[..., Any]) -> frozenset[str]:
    """Which of :data:`CONVERSATION_PARAMETERS` the function names as parameters it takes by keyword (``**kwargs``
    alone names none: an existing callable is called as before)."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):  # a builtin or C function without a signature
        return frozenset()
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return frozenset(n for n in CONVERSATION_PARAMETERS if n in parameters and parameters[n].kind in keyword)


def conversation_arguments(sample: Sample, names: frozenset[str]) -> dict[str, Any]:
    """The keyword arguments of ``names``: ``history`` as a list of ``{"speaker", "text"}`` dicts (oldest first),
    ``conversation_id`` and ``turn`` as the sample has them."""
    values = {
        "history": lambda: [turn.model_dump() for turn in sample.history],
        "conversation_id": lambda: sample.conversation_id,
        "turn": lambda: sample.turn,
    }
    return {name: values[name]() for name in names}
