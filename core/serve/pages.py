"""The pages of ``ragassay serve``: each one reads the run afresh and renders the analyses the HTML report and
``compare`` show (nothing here computes a statistic)."""

from __future__ import annotations

from starlette.routing import Route

from .templating import render


def runs_page(request):
    """Every stored run, newest first: state, systems, samples, outputs, failures."""
    store = request.app.state.store
    runs = store.list_runs()
    for run in runs:
        run["expected"] = run["systems"] * run["sample_count"]
    return render(request, "runs.html", title="ragassay runs", runs=runs)


ROUTES = [
    Route("/", runs_page, name="runs"),
]
