"""The self-contained HTML report of stored runs (``ragassay report RUN... --html report.html``).

::

    from ragassay.present.html_report import build_report

    Path("report.html").write_text(build_report(store, [run_id]), encoding="utf-8")

See docs/results.md, section "HTML report", for what each section shows.
"""

from __future__ import annotations

from .build import build_report

__all__ = ["build_report"]
