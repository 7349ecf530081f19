"""Human labels on stored runs: the :class:`Label` model, rubrics as data, JSONL export/import and the blind
labelling queue (``ragassay label``, ``ragassay labels export/import``; see docs/labelling.md).

Labels are stored in the results store (:class:`ragassay.store.protocols.LabelStore`: ``add_label``,
``add_labels``, ``undo_label``) and read with :func:`ragassay.results.read_labels` (the latest label per annotator
and item, after undo).
"""

from .jsonl import check_rubric, read_jsonl, write_jsonl
from .model import Label
from .rubrics import SHIPPED_RUBRICS, Rubric, load_rubric

__all__ = ["Label", "Rubric", "SHIPPED_RUBRICS", "check_rubric", "load_rubric", "read_jsonl", "write_jsonl"]
