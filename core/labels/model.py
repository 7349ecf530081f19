"""A human label: one annotator's value for one item of a stored run, under one rubric (``ragassay label``).

An item is one system's answer to one sample (``system``), or for a pairwise rubric two systems' answers to
one sample as they were shown (``systems`` = (first, second)). Labels are stored in the results store
(:meth:`ragassay.store.ResultsStore.add_label`) and exported / imported as JSONL, one :class:`Label` per line.
"""

from __future__ import annotations

import json
import math

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Label(BaseModel):
    """One annotator's value for one item of a run under one rubric (version), with when it was given."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str = Field(min_length=1, description="The run whose output(s) were labelled.")
    sample_id: str = Field(min_length=1, description="The sample's question_id in that run.")
    system: str | None = Field(None, description="The system whose answer was labelled (binary and ordinal).")
    systems: tuple[str, str] | None = Field(
        None, description="Pairwise rubrics: the two systems as shown, (first, second); the value rates the second."
    )
    rubric: str = Field(min_length=1, description="The rubric's name (e.g. correct, faithful, preference).")
    rubric_version: int = Field(ge=1, description="The rubric's version when the label was given.")
    annotator: str = Field(min_length=1, description="Who gave the label (a name or pseudonym).")
    value: float = Field(description="One of the rubric's values.")
    labelled_at: float = Field(description="When the label was given (seconds since the epoch).")
    output_digest: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{32}$",
        description="What was judged: :func:`ragassay.labels.digest.answers_digest` of the answer (a pairwise "
        "label: both answers) as shown; the results store fills it from the run's stored answers when it is "
        "missing. A label is reused on another run only where that run's answers have the same digest.",
    )
    probability: float | None = Field(
        None,
        gt=0.0,
        le=1.0,
        description="The probability with which an active labelling queue (``ragassay label --order active``) "
        "drew this item; None for a label of a random-order queue or given elsewhere. Estimates weight the label "
        "by its inverse (ragassay.analysis.ppi.ppi_active_mean).",
    )

    @model_validator(mode="after")
    def _one_target(self) -> Label:
        if (self.system is None) == (self.systems is None):
            raise ValueError("give exactly one of system (one answer) or systems (first, second: a pairwise label)")
        if self.systems is not None and self.systems[0] == self.systems[1]:
            raise ValueError(f"systems must be two different systems, got {list(self.systems)}")
        if not math.isfinite(self.value) or not math.isfinite(self.labelled_at):
            raise ValueError("value and labelled_at must be finite numbers")
        return self

    @property
    def item_key(self) -> str:
        """What was labelled, independent of the order a pair was shown in: two annotators who saw a pair in
        different orders labelled the same item."""
        target = [self.system] if self.system is not None else sorted(self.systems or ())
        return json.dumps([self.sample_id, *target], ensure_ascii=False)
