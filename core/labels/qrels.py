"""Relevance labels as qrels files: ``{query id: {document id: grade}}`` read from and written to TREC's format.

A TREC qrels file has one judgement per line, ``qid iter docid grade`` separated by white space (what trec_eval
reads; ``iter`` is ignored, written as 0). :func:`read_qrels` also reads BEIR's TSV (a first line
``query-id<TAB>corpus-id<TAB>score``, then three tab-separated columns). Grades are integers; a pair given twice,
a malformed line and an empty file are errors naming the file and the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..errors import ConfigError

Qrels = dict[str, dict[str, int]]
BEIR_HEADER = ("query-id", "corpus-id", "score")


def read_qrels(path: str | Path) -> Qrels:
    """The judgements of a TREC qrels file (or BEIR's TSV with its header)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"cannot read the qrels file {path}: {exc}; give a TREC qrels file (qid iter docid grade)"
        ) from None
    beir = bool(lines) and tuple(c.strip().lower() for c in lines[0].split("\t")) == BEIR_HEADER
    qrels: Qrels = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip() or (beir and number == 1):
            continue
        fields = line.split("\t") if beir else line.split()
        if len(fields) != (3 if beir else 4):
            raise ConfigError(
                f"{path}, line {number}: a qrels line has 4 fields (qid iter docid grade), or 3 tab-separated "
                f"columns after BEIR's header; got {line!r}"
            )
        qid, docid, grade = (fields[0], fields[1], fields[2]) if beir else (fields[0], fields[2], fields[3])
        qid, docid = qid.strip(), docid.strip()
        try:
            value = int(grade)
        except ValueError:
            raise ConfigError(f"{path}, line {number}: the grade must be an integer, got {grade!r}") from None
        if docid in qrels.get(qid, {}):
            raise ConfigError(f"{path}, line {number}: query '{qid}' judges document '{docid}' twice; keep one")
        qrels.setdefault(qid, {})[docid] = value
    if not qrels:
        raise ConfigError(f"{path} holds no judgement; give a TREC qrels file (qid iter docid grade per line)")
    return qrels


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path: str | Path) -> int:
    """Write ``qrels`` as TREC qrels (queries and documents sorted); returns the number of lines."""
    rows = [f"{qid} 0 {docid} {int(qrels[qid][docid])}\n" for qid in sorted(qrels) for docid in sorted(qrels[qid])]
    for qid, docid in ((q, d) for q in qrels for d in qrels[q]):
        if not qid or not docid or any(c.isspace() for c in qid + docid):
            raise ConfigError(f"cannot write query '{qid}', document '{docid}' as TREC qrels: ids need no blanks")
    Path(path).write_text("".join(rows), encoding="utf-8")
    return len(rows)
