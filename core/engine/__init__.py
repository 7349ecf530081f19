"""The engine wing: how a run is planned, executed, scored and stored.

- :mod:`.project` (the loaded project and its store), :mod:`.systems` and :mod:`.datasets` (components built
  from the config), :mod:`.reference_check` (reference ids that match no document);
- :mod:`.runner` (plan, lease, fingerprint, resume), :mod:`.work` and :mod:`.spool` (the units and the samples,
  streamed), :mod:`.processing` and :mod:`.scoring` (one unit: answer, metrics, judges), :mod:`.flushing`
  (writing batches), :mod:`.interruptible` (Ctrl-C), :mod:`.executor` (the seam: local or
  :mod:`.distributed`);
- :mod:`.sequential` (stopping when every comparison is settled) and :mod:`.estimate` (calls, tokens and cost
  before a run).

The engine imports the contract (the root modules), the model layer (:mod:`ragassay.llm`) and the store's
protocols; it never imports the read model, the analyses or the presentation (one exception, declared in the
layering table of ``tests/test_meta.py``: a sequential run checks the anytime-valid procedure of
:mod:`ragassay.analysis.sequential` after each batch).
"""
