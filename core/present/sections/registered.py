"""The sections registered through ``register_sections``, as the HTML report and ``ragassay serve`` use them.

:class:`Sections` takes them from a plugin host (the process-wide one by default), after adding ragassay's own
(:mod:`.shipped`, a plugin of the distribution ``ragassay``) to it: the shipped sections first, in their order of
registration, then each other plugin's, by plugin name and in its order of registration. The report shows them
by ``report_order``; a page shows its sections in that order of registration, and the pages (and tabs) come in
the order of their first section.

:class:`RunView` is what a section is given. A third-party section that raises, or returns something that is not
sections of blocks, shows as a note naming its plugin and the error (:func:`failed_section`); the shipped ones
raise as they always did (a :class:`ragassay.RagassayError` is the app's 400 page and the command's one line).
"""

from __future__ import annotations

import dataclasses
import math
import re
import threading
from collections.abc import Callable, Hashable
from typing import Any

from ..blocks import Items, Note, Plot, Section, Table

SHIPPED_PLUGIN = "ragassay_sections"
PAGE_NAME = re.compile(r"^([a-z][a-z0-9_-]*)?$")
RESERVED_PAGES = {"samples"}  # /runs/RUN/samples/ID is the page of one sample
_ADDING = threading.RLock()
_process_sections: Sections | None = None  # those of the process-wide plugin host


class RunView:
    """What a section's ``sections(view)`` is given: one run and the settings of the report or the page.

    ``run`` is the run read once (:class:`ragassay.results.RunData`); ``grouped_run`` the same run with every
    output's JSON where its samples carry a ``group_id`` (what the GRAMMAR view reads); ``payload_run`` the same
    run with every output's JSON whatever its samples (what the trajectories section reads), read when first
    asked for. ``baseline``, ``alpha`` and
    ``seed`` are the report's options or the page's query parameters; ``params`` the page's other query
    parameters (``by`` of the drift page), empty in the report. ``shared(key, compute)`` returns the value kept
    under ``key`` for this run and settings, or ``compute()`` kept there: the sections of a report share it, and
    ``ragassay serve`` keeps it with the run's version for every page.
    """

    def __init__(
        self,
        read: Callable[[bool], Any],
        *,
        baseline: str | None = None,
        alpha: float = 0.05,
        seed: int = 0,
        params: dict[str, str] | None = None,
        shared: Callable[[Hashable, Callable[[], Any]], Any] | None = None,
    ):
        self._read = read
        self.baseline, self.alpha, self.seed = baseline, alpha, seed
        self.params = dict(params or {})
        self._shared = shared or _kept({})

    @classmethod
    def of_run(cls, run, *, payloads: Callable[[], Any] | None = None, **settings: Any) -> RunView:
        """The view of a run already read (with its payloads where grouped, as the report reads it); ``payloads``
        reads it with every output's JSON when a section first asks for :attr:`payload_run` (None: the run as
        given)."""
        kept: dict[str, Any] = {}

        def read(mode):
            if mode != "all" or run.has_payloads or payloads is None:
                return run
            if "run" not in kept:
                kept["run"] = payloads()
            return kept["run"]

        return cls(read, **settings)

    @property
    def run(self):
        """The run, read once."""
        return self._read(False)

    @property
    def grouped_run(self):
        """The run with its outputs' JSON where its samples carry a ``group_id`` (else the same as :attr:`run`)."""
        return self._read(True)

    @property
    def payload_run(self):
        """The run with every output's JSON (read once, when first asked for)."""
        return self._read("all")

    @property
    def settings(self) -> tuple:
        """``(("alpha", ...), ("baseline", ...), ("seed", ...))``: the settings as a key."""
        return (("alpha", self.alpha), ("baseline", self.baseline), ("seed", self.seed))

    def shared(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The value kept under ``key`` for this run (include the settings it depends on in the key), else
        ``compute()``, kept."""
        return self._shared(key, compute)


def _kept(values: dict) -> Callable[[Hashable, Callable[[], Any]], Any]:
    def shared(key, compute):
        if key not in values:
            values[key] = compute()
        return values[key]

    return shared


@dataclasses.dataclass(frozen=True, eq=False)
class Placed:
    """A registered section: where it came from (:class:`ragassay.registry.ComponentInfo`), the section itself,
    and why it cannot be used, if it cannot (``problem``: a page that is not a page name, a report order that is
    not a number, a section that cannot be made)."""

    info: Any
    section: Any = None
    problem: str = ""
    page: str = ""  # its page; the run's first page for a section whose page is not a page name

    @property
    def cls(self):
        return self.info.cls

    @property
    def builtin(self) -> bool:
        return self.info.distribution == "ragassay"


class Sections:
    """The registered sections of a plugin host (the process-wide one when None), taken on first use."""

    def __init__(self, host: Any = None):
        self._host = host
        self._placed: list[Placed] | None = None

    @classmethod
    def of(cls, host: Any = None) -> Sections:
        """The sections of ``host``; for the process-wide plugin host (None), one object per process, so the pages
        of every app and its preparer key what they compute alike."""
        global _process_sections
        if host is not None:
            return cls(host)
        with _ADDING:
            _process_sections = _process_sections or cls()
            return _process_sections

    @property
    def placed(self) -> list[Placed]:
        if self._placed is None:
            with _ADDING:
                if self._placed is None:
                    self._placed = _placed(_with_shipped(self._host))
        return self._placed

    def register(self) -> None:
        """Have the sections registered: ragassay's own added to the host (``ragassay plugins`` lists them)."""
        self.placed  # noqa: B018 - taking them registers ragassay's own

    def report(self, view: RunView) -> list[Section]:
        """Every section with a ``report_order``, by it, of the view's run."""
        chosen = [p for p in self.placed if p.problem or p.cls.report_order is not None]
        found: list[Section] = []
        for p in sorted(chosen, key=_report_order):
            found += compute(p, view) or []
        return found

    def pages(self) -> list[tuple[str, str]]:
        """(page, tab label) of every page, in the order of its first section."""
        labels: dict[str, str] = {}
        for p in self.placed:
            if p.page not in labels:
                labels[p.page] = str(p.cls.tab or p.page)
        return list(labels.items())

    def on(self, page: str) -> list[Placed]:
        """The sections of ``page``, in order."""
        return [p for p in self.placed if p.page == page]

    def page(self, name: str, view: RunView) -> list[Section] | None:
        """The sections of page ``name`` for the view's run; None when none of them has anything to show."""
        found = [compute(p, view) for p in self.on(name)]
        if all(f is None for f in found):
            return None
        return [s for f in found for s in f or []]

    def tabs(self, run) -> list[tuple[str, str]]:
        """The pages of ``run``: those with a section that is not absent for it (:meth:`RunSection.absent`)."""
        return [(page, label) for page, label in self.pages() if any(not absent(p, run) for p in self.on(page))]

    def absence(self, name: str, run) -> str:
        """Why page ``name`` has nothing for ``run`` (its first section's reason)."""
        reasons = [absent(p, run) for p in self.on(name)]
        return next((r for r in reasons if r), f"has nothing to show on page {name!r}")


def _with_shipped(host: Any) -> Any:
    """``host`` (the process-wide one when None) with the shipped sections registered on it."""
    from ... import __version__
    from ...errors import PluginError
    from ...plugin_manager import get_plugin_host
    from . import shipped

    host = host or get_plugin_host()
    if host.pm.get_plugin(SHIPPED_PLUGIN) is shipped:
        return host
    if not host.add_plugin(shipped, name=SHIPPED_PLUGIN, distribution="ragassay", version=__version__):
        raise PluginError(f"ragassay's own report sections could not be registered: {host.failures[-1].error}")
    return host


def _placed(host: Any) -> list[Placed]:
    infos = host.registry.in_order("section")
    return [_place(info) for info in sorted(infos, key=lambda info: (info.distribution != "ragassay", info.plugin))]


def _place(info: Any) -> Placed:
    cls = info.cls
    order = cls.report_order
    if not (isinstance(cls.page, str) and PAGE_NAME.match(cls.page) and cls.page not in RESERVED_PAGES):
        return Placed(
            info,
            page="",
            problem=f"its page {cls.page!r} is not a page name: lowercase letters, digits, '_' or '-', starting "
            f'with a letter (or "" for the run\'s first page), and not {", ".join(sorted(RESERVED_PAGES))}',
        )
    if order is not None and (isinstance(order, bool) or not isinstance(order, (int, float))):
        return Placed(info, page=cls.page, problem=f"its report_order {order!r} is neither a number nor None")
    try:
        return Placed(info, cls(), page=cls.page)
    except Exception as exc:
        if info.distribution == "ragassay":
            raise
        return Placed(info, page=cls.page, problem=f"{cls.__name__}() raised {type(exc).__name__}: {exc}")


def _report_order(placed: Placed) -> float:
    """Where a section goes in the report: its ``report_order``; one that cannot be used, at the end."""
    order = placed.cls.report_order
    usable = isinstance(order, (int, float)) and not isinstance(order, bool)
    return order if (not placed.problem or usable) else math.inf


def absent(placed: Placed, run) -> str:
    """The section's :meth:`absent` for ``run``; a third-party section that raises there counts as present (its
    page then shows the error)."""
    try:
        return placed.section.absent(run) if placed.section is not None else ""
    except Exception:
        if placed.builtin:
            raise
        return ""


def compute(placed: Placed, view: RunView) -> list[Section] | None:
    """The sections ``placed`` shows for the view's run (None: nothing to show); a third-party section's error is a
    section with a note."""
    try:
        if placed.problem:
            raise ValueError(placed.problem)
        return _checked(placed.section.sections(view))
    except Exception as exc:
        if placed.builtin:
            raise
        return [failed_section(placed.info, exc)]


BLOCKS = (Table, Note, Items, Plot)


def _checked(value: Any) -> list[Section] | None:
    if value is None:
        return None
    found = [value] if isinstance(value, Section) else value
    if not isinstance(found, (list, tuple)) or not all(isinstance(s, Section) for s in found):
        raise TypeError(f"sections() returned {value!r:.80}, not a ragassay.Section, a list of them or None")
    for section in found:
        wrong = [part for part in section.parts if not isinstance(part, BLOCKS)]
        if wrong:
            raise TypeError(
                f"section {section.anchor!r} has a part {wrong[0]!r:.80} that is not a ragassay.Table, Note, "
                "Items or Plot"
            )
    return list(found)


def failed_section(info: Any, exc: BaseException) -> Section:
    """A note in place of a section that failed: which one, its plugin, the error, how to disable it."""
    anchor = "section-" + re.sub(r"[^A-Za-z0-9_-]", "-", info.name)
    text = (
        f"The section {info.name} of plugin '{info.plugin}' ({info.distribution} {info.version}) failed: "
        f"{type(exc).__name__}: {exc}"
    )
    legend = f"Disable the plugin with RAGASSAY_DISABLE_PLUGINS={info.plugin}, or update it."
    return Section(anchor, f"{info.name}: failed", [Note(text)], legend)
