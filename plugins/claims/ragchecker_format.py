"""RAGChecker's JSON layout (its ``RAGResults`` in ``ragchecker/container.py``), read and written.

One file: ``{"results": [result, ...], "metrics": {...}}``; a result holds ``query_id``, ``query``, ``gt_answer``,
``response``, ``retrieved_context`` (``[{"doc_id", "text"}]``) and, once RAGChecker has run on it, the claims and
checks (:class:`~.model.ClaimChecks` fields) and its per-result ``metrics``. RAGChecker's *input* files have the
first five keys only; its *output* files all of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragassay import DatasetError

from .model import ClaimChecks

TEXT_FIELDS = ("query_id", "query", "gt_answer", "response")
CHECK_FIELDS = ("answer2response", "response2answer", "retrieved2response", "retrieved2answer")
CLAIM_FIELDS = ("response_claims", "gt_answer_claims")


def read_results(path: Path) -> list[dict[str, Any]]:
    """The ``results`` of a RAGChecker input or output file, each checked for the fields every result needs.

    A ``query_id`` may repeat (RAGChecker allows it): :func:`result_ids` gives each result a unique sample id.

    :raises ragassay.DatasetError: the file is missing or not JSON, has no ``results`` list, or a result lacks a
        field or has one of the wrong type (the message names the file and the result's index).
    """
    if not path.is_file():
        raise DatasetError(f"{path}: RAGChecker file not found; check the 'path' option.")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DatasetError(f"{path}: not valid JSON ({exc}).") from None
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        raise DatasetError(f"{path}: expected RAGChecker's layout, an object with a 'results' list.")
    for index, result in enumerate(results):
        _check_result(result, f"{path}, results[{index}]")
    return results


def result_ids(results: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(a unique sample id per result, in order; a note per repeated ``query_id``). RAGChecker keys nothing on
    ``query_id`` and accepts repeats; a sample id must be unique, so a result whose ``query_id`` came before gets
    ``<query_id>#<n>`` (its n-th occurrence; further ``#`` if that id is taken too). The dataset source and the
    replay rag both use this, so a result is replayed as the sample it was read as."""
    taken = {str(result["query_id"]) for result in results}
    counts: dict[str, int] = {}
    ids, renamed = [], {}
    for result in results:
        key = str(result["query_id"])
        counts[key] = counts.get(key, 0) + 1
        if counts[key] == 1:
            ids.append(key)
            continue
        new = f"{key}#{counts[key]}"
        while new in taken:
            new += "#"
        taken.add(new)
        ids.append(new)
        renamed.setdefault(key, []).append(new)
    notes = [
        f"query_id '{key}' occurs {len(new) + 1} times; its later results are samples {', '.join(repr(n) for n in new)}"
        for key, new in renamed.items()
    ]
    return ids, notes


def _check_result(result: Any, where: str) -> None:
    if not isinstance(result, dict):
        raise DatasetError(f"{where}: expected a JSON object, not {type(result).__name__}.")
    for field in TEXT_FIELDS:
        value = result.get(field)
        if field == "query_id" and isinstance(value, int) and not isinstance(value, bool):
            continue
        if not isinstance(value, str) or (field in ("query_id", "query") and not value.strip()):
            raise DatasetError(f"{where}: '{field}' must be a{' non-empty' if field != 'gt_answer' else ''} string.")
    contexts = result.get("retrieved_context")
    if contexts is None:
        return
    if not isinstance(contexts, list):
        raise DatasetError(f"{where}: 'retrieved_context' must be a list of {{doc_id, text}} objects.")
    for position, doc in enumerate(contexts):
        if not isinstance(doc, dict) or not isinstance(doc.get("text"), str):
            raise DatasetError(f"{where}: retrieved_context[{position}] must be an object with a string 'text'.")
        if doc.get("doc_id") is not None and not isinstance(doc["doc_id"], (str, int)):
            raise DatasetError(f"{where}: retrieved_context[{position}].doc_id must be a string.")


def chunk_ids(result: dict[str, Any]) -> list[str]:
    """The ids of a result's retrieved chunks in order: ``doc_id``, or ``#<position>`` where it has none
    (RAGChecker allows ``doc_id: null``)."""
    docs = result.get("retrieved_context") or []
    return [str(doc["doc_id"]) if doc.get("doc_id") is not None else f"#{i}" for i, doc in enumerate(docs)]


def checks_of(result: dict[str, Any], where: str) -> ClaimChecks | None:
    """The claims and checks a result holds, or None when it holds none (a RAGChecker input file). A result that
    RAGChecker computed for some metrics only holds the claims and checks those needed, the others null (e.g. no
    response claims for retriever metrics): the metrics that need a null list are then unscored, saying which.

    :raises ragassay.DatasetError: the claims or checks are invalid or misaligned (the message says which).
    """
    if all(result.get(field) is None for field in CLAIM_FIELDS + CHECK_FIELDS):
        return None
    fields = {name: result.get(name) for name in CLAIM_FIELDS + CHECK_FIELDS}
    try:
        return ClaimChecks(**fields, chunk_ids=chunk_ids(result))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'checks'}: {e['msg']}" for e in exc.errors())
        raise DatasetError(f"{where}: invalid claims or checks ({problems}).") from None


def result_of(
    query_id: str,
    query: str,
    gt_answer: str,
    response: str,
    contexts: list[str],
    checks: ClaimChecks,
    metrics: dict[str, float],
) -> dict[str, Any]:
    """One result in RAGChecker's output layout (key order as RAGChecker writes it)."""
    docs = [{"doc_id": doc_id, "text": text} for doc_id, text in zip(checks.chunk_ids, contexts)]
    result: dict[str, Any] = {
        "query_id": query_id,
        "query": query,
        "gt_answer": gt_answer,
        "response": response,
        "retrieved_context": docs,
    }
    result.update(checks.model_dump(mode="json", exclude={"chunk_ids"}))
    result["metrics"] = metrics
    return result
