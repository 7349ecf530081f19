"""The live pages of ``ragassay watch`` in ``ragassay serve``:

- ``/watch``: every watch of the results store (name, project, run, last commit, watched metrics, alarms), or what
  to run when there is none;
- ``/watch/{name}``: one watch (its name, or its run's id when two projects share a name): each watched metric over
  time with the detector's confidence sequence, the reference band and the alarms (:mod:`.watch_chart`), the
  detector now, the alarms with their change and interval, start, versions (first suspect first) and worst traces
  linked to their sample pages, the judge spend in the last hour and day against the budget, the traces unscored
  for budget, and the judge drift notes.

The watch writes to the store while serve reads it: each request reads the watch's stored progress as committed
(one statement; SQLite in WAL mode lets readers read a committed snapshot while the watch writes), and the page
reloads itself every ``?refresh=`` seconds (default :data:`REFRESH_S`; 0: never). Nothing here writes.
"""

from __future__ import annotations

import time

from starlette.exceptions import HTTPException
from starlette.routing import Route

from ..templating import render

REFRESH_S = 15  # seconds between two reloads of a watch page
SHOWN_TRACES = 5  # worst traces of an alarm shown at once (the others one click away)
MAX_REFRESH_S = 3600


def watches_page(request):
    """Every watch of the store, the newest first."""
    from ...results.watches import read_watches

    store = request.app.state.store
    return render(
        request,
        "watches.html",
        title="ragassay watches",
        watches=read_watches(store),
        kept=hasattr(store, "watch_state"),
        refresh=_refresh(request),
    )


def watch_page(request):
    """One watch, as its stored progress says now (module docstring); 404 naming the watches for an unknown one."""
    from ...analysis.watch_view import watch_view
    from ...results.watches import read_watch, read_watches
    from .watch_chart import metric_svg

    store = request.app.state.store
    ref = request.path_params["name"]
    refresh = _refresh(request)
    record = read_watch(store, ref)
    if record is None:
        known = ", ".join(sorted({w.name for w in read_watches(store)})) or "none"
        raise HTTPException(404, f"no watch '{ref}' in this results store (its watches: {known}); see /watch")
    view = watch_view(record, time.time())
    charts = {track.column: metric_svg(track) for track in view.metrics}
    title = f"Watch {view.name} ({view.project})"
    return render(
        request, "watch.html", title=title, view=view, charts=charts, refresh=refresh, shown_traces=SHOWN_TRACES
    )


def _refresh(request) -> int:
    """``?refresh=`` seconds between reloads (0: never); a ConfigError (a 400) for anything else."""
    from ...errors import ConfigError

    raw = request.query_params.get("refresh", str(REFRESH_S))
    try:
        seconds = int(raw)
    except ValueError:
        seconds = -1
    if not 0 <= seconds <= MAX_REFRESH_S:
        raise ConfigError(f"refresh takes whole seconds from 0 (never) to {MAX_REFRESH_S}, not {raw!r}")
    return seconds


ROUTES = [
    Route("/watch", watches_page, name="watches"),
    Route("/watch/{name:path}", watch_page, name="watch"),
]
