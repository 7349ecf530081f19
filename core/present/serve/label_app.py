"""The labelling pages of ``ragassay label``: routes mounted into the ``ragassay serve`` app (``extra``).

One item at a time: the question, the retrieved contexts and the answer (for a pairwise rubric two answers side
by side, in the order recorded with the label), never the system name or anything a judge or metric said.
Number keys give the rubric's values, ``s`` skips, ``u`` undoes, ``?`` shows the keys (``static/labelling.js``;
every action is also a plain button or link). The labelling POSTs are the app's only writing endpoints: each
checks the CSRF token (:mod:`.csrf`) and that the item it names is the item of this queue at that position, and
the label is built here from the queue's own run, so it cannot reach another run.

A submitted label is never lost: when the results store cannot take it (a SQLite file locked by another writer
for longer than the store waits, a server down), the queue keeps it (:attr:`LabelQueue.pending`), counts it as
given, says so on every page, and stores it before the next label; what is still not stored when ``ragassay
label`` stops is written to a JSONL file for ``ragassay labels import`` (:meth:`LabelQueue.close`).

While labelling, the app shows nothing but the queue (:func:`blind_routes`): the results pages, with the
systems' names and the judges' verdicts, are not served.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Sequence
from pathlib import Path
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
    #: labels given but not stored yet (the store could not take them), oldest first: stored before the next one
    pending: list[Label] = dataclasses.field(default_factory=list)
    #: why the pending labels are not stored yet (the store's one-line error)
    unstored: str = ""
    _writing: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)

    def state(self) -> QueueState:
        """Where the annotator stands, read from the store now, with the labels still pending."""
        from ...results import read_labels

        stored = read_labels(self.store, self.run_id, self.rubric.name, annotator=self.annotator)
        return queue_state(self.items, [*stored, *self.pending])

    def submit(self, label: Label) -> bool:
        """Keep ``label``, then store every pending label in order (blocking: call it from a worker thread);
        False when the store could not take them now (they stay pending, :attr:`unstored` says why)."""
        with self._writing:
            self.pending.append(label)
        return self.flush()

    def flush(self) -> bool:
        """Store the pending labels, oldest first; False (and :attr:`unstored` set) when the store is unavailable."""
        from ...errors import StoreUnavailableError

        with self._writing:
            while self.pending:
                try:
                    self.store.add_label(self.pending[0])
                except StoreUnavailableError as exc:
                    self.unstored = str(exc)
                    return False
                self.pending.pop(0)
            self.unstored = ""
            return True

    def undo(self) -> Label | None:
        """Undo this annotator's last label: a pending one is dropped, else the store marks it undone."""
        with self._writing:
            if self.pending:
                return self.pending.pop()
        return self.store.undo_label(self.run_id, self.rubric.name, self.annotator)

    def close(self, folder: Path) -> Path | None:
        """Store what is pending; what still cannot be stored is written to a JSONL file in ``folder`` for
        ``ragassay labels import`` (returned; None when nothing was left)."""
        if self.flush():
            return None
        from ...labels.jsonl import write_jsonl

        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = folder / f"unstored-labels-{self.run_id[:12]}-{stamp}.jsonl"
        write_jsonl(self.pending, path)
        return path

    def item_id(self, index: int) -> str:
        """The opaque id of the item at ``index`` carried by its form (names neither system nor sample)."""
        key = f"{self.run_id}\x1f{self.rubric.name}\x1f{self.items[index].key}".encode()
        return hmac.new(self.secret, key, hashlib.sha256).hexdigest()[:24]

    def digest(self, index: int) -> str | None:
        """The digest of the answer(s) of the item at ``index`` as stored (what its page shows), read now; None when
        the store cannot be read (it then fills the digest itself when it takes the label)."""
        from ...errors import StoreUnavailableError
        from ...labels.digest import answers_digest, item_systems
        from ...results import read_payloads

        item = self.items[index]
        try:
            outputs = read_payloads(self.store, self.run_id, [item.sample_id])
        except StoreUnavailableError:
            return None
        found = [outputs.get((name, item.sample_id)) for name in item_systems(item.system, item.systems)]
        return None if any(output is None for output in found) else answers_digest([o.answer for o in found])

    def label(self, index: int, value: float, digest: str | None = None) -> Label:
        """This annotator's label with ``value`` on the item at ``index`` of this queue's run, with the digest of
        the answer(s) it judged (:meth:`digest`) and the probability an active queue drew the item with."""
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
            output_digest=digest,
            probability=item.probability,
        )


def labelling_routes(queue: LabelQueue) -> list:
    """The routes of the queue under ``/label`` (``create_app(store, token=..., extra=labelling_routes(q))``)."""
    from starlette.routing import Route

    async def start(request):
        return _redirect(request, _next(queue, None))

    async def skip(request):
        return _redirect(request, _next(queue, _index(queue, request.query_params.get("after"))))

    async def show(request):
        await _flush(queue)
        return _item_page(request, queue, _index(queue, request.path_params["index"]))

    async def post_label(request):
        from starlette.concurrency import run_in_threadpool

        index = _index(queue, request.path_params["index"])
        form = await _checked_form(request, queue)
        if form.get("item") != queue.item_id(index):
            _refuse(409, "this form names another item than the queue holds at its position; reload the page")
        value = _value(queue.rubric, form.get("value"))
        digest = await run_in_threadpool(queue.digest, index)
        await run_in_threadpool(queue.submit, queue.label(index, value, digest))  # kept even when the store is busy
        return _redirect(request, next_index(queue.items, queue.state(), index))

    async def undo(request):
        from starlette.concurrency import run_in_threadpool

        await _checked_form(request, queue)
        undone = await run_in_threadpool(queue.undo)
        keys = [item.key for item in queue.items]
        back = keys.index(undone.item_key) if undone is not None and undone.item_key in keys else None
        return _redirect(request, back if back is not None else _next(queue, None))

    async def done(request):
        await _flush(queue)
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


async def _flush(queue: LabelQueue) -> None:
    """Try again to store the labels still pending (in a worker thread: the store may wait for a lock)."""
    if queue.pending:
        from starlette.concurrency import run_in_threadpool

        await run_in_threadpool(queue.flush)


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
        pending=len(queue.pending),
        unstored=queue.unstored,
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
        pending=len(queue.pending),
        unstored=queue.unstored,
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
