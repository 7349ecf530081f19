"""The labelling pages of ``ragassay label``: routes mounted into the ``ragassay serve`` app (``extra``).

One item at a time: the question, the retrieved contexts and the answer (for a pairwise rubric two answers side
by side, in the order recorded with the label), never the system name or anything a judge or metric said.
Number keys give the rubric's values, ``s`` skips, ``u`` undoes, ``?`` shows the keys (``static/labelling.js``;
every action is also a plain button or link). The labelling POSTs are the app's only writing endpoints: each
checks the CSRF token (:mod:`.csrf`) and that the item it names is the item of this queue at that position, and
the label is built here from the queue's own run, so it cannot reach another run.

While labelling, the app shows nothing but the queue (:func:`blind_routes`): the results pages, with the
systems' names and the judges' verdicts, are not served.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import secrets
import time
from collections.abc import Sequence
from typing import Any

from ...errors import ConfigError
from ...labels.model import Label
from ...labels.queue import Item, QueueState, next_index, queue_state
from ...labels.rubrics import Rubric
from .csrf import Csrf


@dataclasses.dataclass
class LabelQueue:
    """An annotator's queue over a run: its items in order, the rubric, and the store holding the labels."""

    store: Any
    run_id: str
    rubric: Rubric
    annotator: str
    items: Sequence[Item]
    csrf: Csrf = dataclasses.field(default_factory=Csrf)
    secret: bytes = dataclasses.field(default_factory=lambda: secrets.token_bytes(32))

    def state(self) -> QueueState:
        """Where the annotator stands, read from the store now."""
        from ...results import read_labels

        return queue_state(self.items, read_labels(self.store, self.run_id, self.rubric.name, annotator=self.annotator))

    def item_id(self, index: int) -> str:
        """The opaque id of the item at ``index`` carried by its form (names neither system nor sample)."""
        key = f"{self.run_id}\x1f{self.rubric.name}\x1f{self.items[index].key}".encode()
        return hmac.new(self.secret, key, hashlib.sha256).hexdigest()[:24]

    def label(self, index: int, value: float) -> Label:
        """This annotator's label with ``value`` on the item at ``index`` of this queue's run."""
        item = self.items[index]
        return Label(
            run_id=self.run_id,
            sample_id=item.sample_id,
            system=item.system,
            systems=item.systems,
            rubric=self.rubric.name,
            rubric_version=self.rubric.version,
            annotator=self.annotator,
            value=value,
            labelled_at=time.time(),
        )


def labelling_routes(queue: LabelQueue) -> list:
    """The routes of the queue under ``/label`` (``create_app(store, token=..., extra=labelling_routes(q))``)."""
    from starlette.routing import Route

    async def start(request):
        return _redirect(request, _next(queue, None))

    async def skip(request):
        return _redirect(request, _next(queue, _index(queue, request.query_params.get("after"))))

    async def show(request):
        return _item_page(request, queue, _index(queue, request.path_params["index"]))

    async def post_label(request):
        index = _index(queue, request.path_params["index"])
        form = await _checked_form(request, queue)
        if form.get("item") != queue.item_id(index):
            _refuse(409, "this form names another item than the queue holds at its position; reload the page")
        value = _value(queue.rubric, form.get("value"))
        queue.store.add_label(queue.label(index, value))
        return _redirect(request, next_index(queue.items, queue.state(), index))

    async def undo(request):
        await _checked_form(request, queue)
        undone = queue.store.undo_label(queue.run_id, queue.rubric.name, queue.annotator)
        keys = [item.key for item in queue.items]
        back = keys.index(undone.item_key) if undone is not None and undone.item_key in keys else None
        return _redirect(request, back if back is not None else _next(queue, None))

    async def done(request):
        return _done_page(request, queue)

    return [
        Route("/label", start, methods=["GET"]),
        Route("/label/next", skip, methods=["GET"]),
        Route("/label/done", done, methods=["GET"]),
        Route("/label/undo", undo, methods=["POST"]),
        Route("/label/item/{index:int}", show, methods=["GET"]),
        Route("/label/item/{index:int}", post_label, methods=["POST"]),
    ]


def blind_routes() -> list:
    """Routes mounted after the queue's: the shipped assets, ``/`` to the queue, and nothing else (the results
    pages would show the systems' names and the judges' verdicts)."""
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from ..templating import STATIC

    async def home(request):
        return _redirect(request, "start")

    async def hidden(request):
        _refuse(404, "while labelling only the queue is shown (the results pages would unblind it): open /label")

    return [
        Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
        Route("/", home, methods=["GET"]),
        Route("/{path:path}", hidden, methods=["GET", "HEAD", "POST"]),
    ]


def _next(queue: LabelQueue, after: int | None) -> int | None:
    return next_index(queue.items, queue.state(), after)


def _index(queue: LabelQueue, raw: Any) -> int:
    try:
        index = int(raw)
    except (TypeError, ValueError):
        _refuse(404, f"no item '{raw}' in this queue")
    if not 0 <= index < len(queue.items):
        _refuse(404, f"no item {index} in this queue of {len(queue.items)} items")
    return index


def _value(rubric: Rubric, raw: Any) -> float:
    try:
        value = float(raw)
        rubric.index_of(value)
    except (TypeError, ValueError, ConfigError):
        shown = ", ".join(f"{v:g}" for v in rubric.values)
        _refuse(400, f"'{raw}' is not a value of rubric '{rubric.name}' ({shown})")
    return value


async def _checked_form(request, queue: LabelQueue) -> Any:
    form = await request.form()
    why = queue.csrf.refusal(request, form.get("csrf"))
    if why is not None:
        _refuse(403, f"refused: {why}")
    return form


def _refuse(status: int, message: str):
    from starlette.exceptions import HTTPException

    raise HTTPException(status_code=status, detail=message)


def _redirect(request, target: int | str | None):
    from starlette.responses import RedirectResponse

    root = request.scope.get("root_path", "").rstrip("/")
    path = {None: "/label/done", "start": "/label"}.get(target) if not isinstance(target, int) else None
    return RedirectResponse(root + (path or f"/label/item/{target}"), status_code=303)


def _item_page(request, queue: LabelQueue, index: int):
    from ...results import read_sample
    from ..templating import render

    item = queue.items[index]
    state = queue.state()
    run, payloads = read_sample(queue.store, queue.run_id, item.sample_id)
    outputs = {system: output for (system, _), output in payloads.items()}
    headings = ["Answer"] if item.system is not None else ["First answer", "Second answer"]
    answers = [
        {"heading": heading, "text": outputs[name].answer, "contexts": [c for c in outputs[name].contexts if c]}
        for heading, name in zip(headings, item.shown_systems)
    ]
    current = state.values.get(item.key)
    session, new = queue.csrf.session_of(request)
    response = render(
        request,
        "label.html",
        title=f"Label: {queue.rubric.name}",
        rubric=queue.rubric,
        choices=_choices(queue.rubric, current),
        question=run.samples[0].question,
        answers=answers,
        index=index,
        position=index + 1,
        total=len(queue.items),
        done=state.done,
        labelled=current is not None,
        item_id=queue.item_id(index),
        csrf=queue.csrf.token(session),
        annotator=queue.annotator,
    )
    if new:
        queue.csrf.set_cookie(response, session)
    return response


def _choices(rubric: Rubric, current: float | None) -> list[dict[str, Any]]:
    return [
        {"key": n, "value": f"{v:g}", "label": label, "description": text, "current": v == current}
        for n, (v, label, text) in enumerate(zip(rubric.values, rubric.labels, rubric.descriptions), start=1)
    ]


def _done_page(request, queue: LabelQueue):
    from ..templating import render

    session, new = queue.csrf.session_of(request)
    state = queue.state()
    response = render(
        request,
        "label_done.html",
        title=f"Label: {queue.rubric.name}",
        total=len(queue.items),
        done=state.done,
        left=next_index(queue.items, state, None),
        csrf=queue.csrf.token(session),
        annotator=queue.annotator,
    )
    if new:
        queue.csrf.set_cookie(response, session)
    return response


def labelling_app(queue: LabelQueue, *, token: str | None):
    """The ``ragassay serve`` app showing only ``queue`` (its routes, then :func:`blind_routes`). It prepares no
    results page in the background: a labeller sees none."""
    from . import create_app

    extra = [*labelling_routes(queue), *blind_routes()]
    return create_app(queue.store, token=token, extra=extra, prepare=False)
