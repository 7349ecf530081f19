"""A claim run to and from the stored layout: :class:`~.model.ClaimChecks` plus what ragassay adds beside it.

Stored by the claim metric that made the run, in its details (docs/judges.md, "Claim checks")::

    checks        ClaimChecks.model_dump(mode="json"): claims, the four label lists (None: not computed), chunk_ids
    explanations  the judge's explanation of each label, the same shapes as the label lists; and of each extraction
    missing       {part: reason} for every part not computed (a failed call, no reference answer, not asked for)
    failures      [{call, error, raw}] for every call that stayed unusable after its re-asks
    calls         the judge questions asked for this output (re-asks and provider retries not included)
"""

from __future__ import annotations

from typing import Any

from .checking import PARTS, ClaimRun
from .model import ClaimChecks


def replayed(stored: Any) -> ClaimRun:
    """A claim run from checks stored in ``output.trace["ragchecker"]`` (the ClaimChecks layout: RAGChecker's
    result keys plus ``chunk_ids``); a part that is None there is missing ("not in the replayed checks").

    :raises ValueError: the stored checks are not a valid ClaimChecks (the metric is then unscored with why).
    """
    checks = stored if isinstance(stored, ClaimChecks) else ClaimChecks.model_validate(stored)
    run = ClaimRun(
        response_claims=None if checks.response_claims is None else list(checks.response_claims),
        gt_answer_claims=None if checks.gt_answer_claims is None else list(checks.gt_answer_claims),
        chunk_ids=list(checks.chunk_ids),
    )
    for part in PARTS:
        labels = getattr(checks, part)
        setattr(run, part, None if labels is None else [list(x) if isinstance(x, list) else x for x in labels])
        if labels is None:
            run.missing[part] = "not in the replayed checks"
    return run


def stored_checks(run: ClaimRun) -> dict[str, Any]:
    """The details entries that store ``run`` (see the module docstring)."""
    return {
        "checks": run.checks().model_dump(mode="json"),
        "explanations": run.explanations,
        "missing": dict(run.missing),
        "failures": list(run.failures),
        "calls": run.calls,
    }
