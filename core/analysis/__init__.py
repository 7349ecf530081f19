"""Analyses over stored results: GRAMMAR semantic groups, robustness R and Acc, hypotheses, modular blame.

Generic over any samples that carry a ``group_id`` and free attributes (the ``grammar`` dataset source
produces such samples, but any source may): :mod:`.groups` (Eq. 1 and 2), :mod:`.sampling` (stratified and
unbalanced), :mod:`.modular` (context comparison), :mod:`.hypotheses` (Table 2), :mod:`.report`;
the systems x metrics comparison (:mod:`.comparison`), retrieval-decision scoring, and bootstrap
confidence intervals of a mean in Unitxt's scheme (:mod:`.bootstrap`).
"""
