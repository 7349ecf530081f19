"""A sequential run: the comparisons it watches and when they are settled (:mod:`.plan`), and the batches it
judges in the seeded order until they are (:mod:`.pipeline`). The statistics are
:mod:`ragassay.analysis.sequential`'s; the settings are ``[evaluation.sequential]``
(:mod:`ragassay.config.sequential`)."""
