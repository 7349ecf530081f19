"""The presentation wing: what turns an analysis into something a person reads. Nothing here computes a
statistic (the analyses do) or opens a results store (the commands and the API pass a read run in).

- terminal tables: :mod:`.tables` (the 80-column table model), :mod:`.claim_view`, :mod:`.robustness_tables`,
  :mod:`.trend_tables`; :mod:`.frames` (a read run as pandas DataFrames);
- the blocks every page is made of (:mod:`.blocks`) and the one Jinja2 environment with its templates and
  static files (:mod:`.templating`), shared by
- the sections (:mod:`.sections`): comparison, verdicts, breakdowns, cost, robustness, drift, the failure
  browser, each registered through the ``register_sections`` hook by the wing's default plugin
  (:mod:`.sections.shipped`), as a third-party plugin registers its own; :mod:`.sections.registered` takes them
  from the plugin host for
- the static HTML report (:mod:`.html_report`), the live browser (:mod:`.serve`) and the labelling app
  (:mod:`.serve.label_app`).
"""
