"""``[analysis]`` config section: correctness, hypotheses and sampling for the GRAMMAR report (section 4.2)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Hypothesis(BaseModel):
    """A split of samples by one attribute into a robust and a non-robust cluster.

    Example: ``{ name = "long queries", attribute = "query_length", robust = ["short"], non_robust = ["long"] }``
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Name shown in the report.")
    attribute: str = Field(description="Sample attribute (free field) the clusters are defined by.")
    robust: list[Any] = Field(description="Attribute values of the expected robust cluster (D_robust).")
    non_robust: list[Any] = Field(description="Attribute values of the expected non-robust cluster (D_non-robust).")
    systems: list[str] = Field(
        default_factory=list,
        description="Systems the hypothesis is about (only these are tested); empty: every system of the run.",
    )
    description: str = Field(default="", description="Free text.")

    @model_validator(mode="after")
    def _disjoint(self) -> Hypothesis:
        both = {str(v) for v in self.robust} & {str(v) for v in self.non_robust}
        if both:
            raise ValueError(f"values in both clusters: {', '.join(sorted(both))}; a value belongs to one cluster")
        if not self.robust or not self.non_robust:
            raise ValueError("robust and non_robust each need at least one attribute value")
        return self


class StratifiedSettings(BaseModel):
    """Stratified sampling (SS): the same number of text queries for every query logic (semantic group)."""

    model_config = ConfigDict(extra="forbid")

    per_group: int = Field(
        default=1,
        ge=1,
        description="Samples kept per group (per value of `by` when set); "
        "a group with fewer is left out so that every group has the same number.",
    )
    by: str | None = Field(
        default=None,
        description="Attribute balanced within each group, e.g. 'query_length': "
        "per_group samples are kept for each of its values present in the group.",
    )
    seed: int = Field(default=0, description="Seed of the random choice (reproducible).")


class UnbalancedSettings(BaseModel):
    """Unbalanced sampling (US): samples of some entities removed at random, as happens in the real world."""

    model_config = ConfigDict(extra="forbid")

    attribute: str = Field(
        default="table",
        description="Attribute naming the entity of a sample "
        "(the grammar source sets 'table' to the SQL template's table).",
    )
    reduce: dict[str, float] = Field(
        description="Attribute value -> fraction of its samples removed at random "
        "(0 keeps all, 1 removes all), e.g. { Client = 0.5, Employee = 0.5 }."
    )
    seed: int = Field(default=0, description="Seed of the random choice (reproducible).")

    @field_validator("reduce")
    @classmethod
    def _fractions(cls, reduce: dict[str, float]) -> dict[str, float]:
        return check_fractions(reduce)


def check_fractions(reduce: dict[str, float]) -> dict[str, float]:
    """Validate a reduction table: every fraction between 0 and 1."""
    bad = {k: v for k, v in reduce.items() if not 0 <= v <= 1}
    if bad:
        raise ValueError(f"reductions must be fractions between 0 and 1; got {bad}")
    return reduce


class SamplingSettings(BaseModel):
    """Subsets of the stored samples the report evaluates besides 'all samples' (the rows of Table 2)."""

    model_config = ConfigDict(extra="forbid")

    stratified: StratifiedSettings | None = Field(default=None, description="Stratified subset (SS); unset: none.")
    unbalanced: UnbalancedSettings | None = Field(default=None, description="Unbalanced subset (US); unset: none.")


class AnalysisSection(BaseModel):
    """[analysis]: which judge defines correctness, the hypotheses to test and the sampled subsets."""

    model_config = ConfigDict(extra="forbid")

    judge: str | None = Field(default=None, description="Judge whose verdicts define correctness (default: the first).")
    hypotheses: list[Hypothesis] = Field(default_factory=list, description="Hypotheses to test.")
    sampling: SamplingSettings = Field(
        default_factory=SamplingSettings, description="Stratified and unbalanced subsets evaluated by the report."
    )
    breakdowns: list[str] | None = Field(
        default=None,
        description="Sample fields the report breaks every metric down by (group_id, metadata.KEY, an attribute); "
        "default: the fields with 2 to 8 distinct values.",
    )
    correct_threshold: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="A judgement is correct when its verdict is 'correct' or its score is at least this.",
    )
    context_match: Literal["same_set", "superset"] = Field(
        default="same_set",
        description="Context comparison (section 3.4): a wrong answer's retrieved documents "
        "'match' a correct answer's when they are the same set (the paper's), or a superset of it.",
    )
