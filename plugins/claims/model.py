"""Claims and their checks for one RAG output, in RAGChecker's own layout (:class:`ClaimChecks`).

RAGChecker (Ru et al., 2024, github.com/amazon-science/RAGChecker, ``ragchecker/container.py``) stores per
result: the claims of the response and of the reference ("ground-truth") answer, and four lists of labels, each
``"Entailment"``, ``"Neutral"`` or ``"Contradiction"``. The names say *premise2claims*: ``answer2response`` is
the reference answer checked as premise against each *response* claim, and so on::

    answer2response[i]        response claim i   checked against the reference answer
    response2answer[j]        reference claim j  checked against the response
    retrieved2response[i][c]  response claim i   checked against retrieved chunk c
    retrieved2answer[j][c]    reference claim j  checked against retrieved chunk c

:class:`ClaimChecks` holds exactly these fields (same names, same JSON), plus ``chunk_ids``, the ids of the
retrieved chunks in retrieval order (column ``c`` of the ``retrieved2*`` matrices). A check list that was not
computed is ``None`` (RAGChecker computes only what the requested metrics need); the metrics that need it are
then unscored with that reason (:mod:`ragassay.plugins.claims.formulas`).

Claim metrics store ``ClaimChecks.model_dump(mode="json")`` under ``details["checks"]``;
:func:`checks_from_details` reads it back.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: The three labels of a check, spelled as RAGChecker (and RefChecker) spell them.
Label = Literal["Entailment", "Neutral", "Contradiction"]
ENTAILMENT, NEUTRAL, CONTRADICTION = "Entailment", "Neutral", "Contradiction"
LABELS: tuple[str, ...] = (ENTAILMENT, NEUTRAL, CONTRADICTION)

#: A claim: a knowledge triplet (a list of strings, usually subject, predicate, object, as RefChecker extracts
#: them) or a short sentence.
Claim = list[str] | str

#: The key of a claim metric's details under which the checks are stored.
DETAILS_KEY = "checks"


def claim_text(claim: Claim) -> str:
    """A claim as one line of text: a triplet's parts joined by spaces, a sentence unchanged."""
    return claim if isinstance(claim, str) else " ".join(part.strip() for part in claim)


class ClaimChecks(BaseModel):
    """The claims of one response and its reference answer, and every check between them and the retrieved chunks.

    Field names and JSON layout are RAGChecker's (``RAGResult`` in ``ragchecker/container.py``), so one result of
    a RAGChecker output file, restricted to these keys (plus ``chunk_ids``), validates as a ClaimChecks.

    Validation: every label is one of :data:`LABELS`; ``answer2response`` and ``retrieved2response`` have one row
    per response claim, ``response2answer`` and ``retrieved2answer`` one row per reference claim, and each row of a
    ``retrieved2*`` matrix one label per entry of ``chunk_ids``. A mismatch is an error that names the list, its
    length and the length expected. Claims that were not extracted are None (RAGChecker extracts only what the
    requested metrics need: a retriever-only output has no response claims); the lists that check them must then
    be None too.
    """

    model_config = ConfigDict(extra="forbid")

    response_claims: list[Claim] | None = Field(
        None, description="Claims extracted from the response, in order (None: not extracted)."
    )
    gt_answer_claims: list[Claim] | None = Field(
        None, description="Claims extracted from the reference (ground-truth) answer (None: not extracted)."
    )
    answer2response: list[Label] | None = Field(
        None, description="Per response claim: its label against the reference answer (None: not checked)."
    )
    response2answer: list[Label] | None = Field(
        None, description="Per reference claim: its label against the response (None: not checked)."
    )
    retrieved2response: list[list[Label]] | None = Field(
        None, description="Per response claim, one label per retrieved chunk (in chunk_ids order; None: not checked)."
    )
    retrieved2answer: list[list[Label]] | None = Field(
        None, description="Per reference claim, one label per retrieved chunk (in chunk_ids order; None: not checked)."
    )
    chunk_ids: list[str] = Field(
        default_factory=list, description="Ids of the retrieved chunks in retrieval order: the columns of retrieved2*."
    )

    @model_validator(mode="after")
    def _aligned(self) -> ClaimChecks:
        """Each check list has one entry per claim it checks, each chunk row one label per chunk."""
        n_response, n_answer, k = _count(self.response_claims), _count(self.gt_answer_claims), len(self.chunk_ids)
        _rows("answer2response", self.answer2response, n_response, "response_claims")
        _rows("response2answer", self.response2answer, n_answer, "gt_answer_claims")
        _rows("retrieved2response", self.retrieved2response, n_response, "response_claims")
        _rows("retrieved2answer", self.retrieved2answer, n_answer, "gt_answer_claims")
        for name in ("retrieved2response", "retrieved2answer"):
            for index, row in enumerate(getattr(self, name) or []):
                if len(row) != k:
                    raise ValueError(
                        f"{name}[{index}] has {len(row)} label(s) but there are {k} retrieved chunk(s) (chunk_ids); "
                        "give one label per chunk, in chunk_ids order"
                    )
        return self

    @property
    def chunk_count(self) -> int:
        """The number of retrieved chunks (columns of the retrieved2* matrices)."""
        return len(self.chunk_ids)


def _count(claims: list | None) -> int | None:
    return None if claims is None else len(claims)


def _rows(name: str, rows: list | None, expected: int | None, claims: str) -> None:
    if rows is not None and expected is None:
        raise ValueError(f"{name} is given but {claims} is null; give the claims it checks")
    if rows is not None and len(rows) != expected:
        raise ValueError(f"{name} has {len(rows)} entries but {claims} has {expected}; give one entry per claim")


def checks_from_details(details: dict[str, Any] | None) -> ClaimChecks | None:
    """The :class:`ClaimChecks` stored in a claim metric's ``details`` (under ``details["checks"]``, as
    ``ClaimChecks.model_dump(mode="json")``), or None when the details hold none (an unscored value, a metric
    that stores no checks).

    :raises ValueError: ``details["checks"]`` is present but is not a valid ClaimChecks (the message says why).
    """
    raw = (details or {}).get(DETAILS_KEY)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError(f"details['{DETAILS_KEY}'] must be a JSON object, not {type(raw).__name__}")
    return ClaimChecks.model_validate(raw)
