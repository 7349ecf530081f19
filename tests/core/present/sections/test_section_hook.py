"""``register_sections`` in-process: a plugin's section shows in the HTML report and its page in ``ragassay serve``
(with its tab), after ragassay's own sections, which register through the same hook; plugin text is escaped; a
broken section is a note naming its plugin and the error, never a broken report or an error page."""

from __future__ import annotations

import re
import types

import pytest
from starlette.testclient import TestClient

from ragassay import Items, Note, RunSection, Section, Table, hookimpl
from ragassay.plugin_manager import load_plugins
from ragassay.present.html_report import build_report
from ragassay.present.serve import create_app

from html_report_helpers import PLANT, write_planted_run

RUN = "planted-run-0001"


class Lengths(RunSection):
    """Mean question length per run, on a page of its own."""

    name = "lengths"
    page = "lengths"
    tab = "question lengths"

    def sections(self, view):
        mean = sum(len(s.question) for s in view.run.samples) / len(view.run.samples)
        table = Table(["samples", "mean question length"], [[len(view.run.samples), f"{mean:.1f}"]])
        note = Note(f"alpha {view.alpha}, seed {view.seed}, by {view.params.get('by', '-')} {PLANT}")
        return Section("kit-lengths", f"Question lengths {PLANT}", [table, note], legend=PLANT)


class Systems(RunSection):
    """The systems, on the run's first page, first in the report."""

    name = "systems"
    report_order = 5

    def sections(self, view):
        return [Section("kit-systems", "Systems", [Items(list(view.run.systems))])]


class Broken(RunSection):
    """Raises on every run."""

    name = "broken"
    page = "lengths"

    def sections(self, view):
        raise RuntimeError("the broken section broke")


class NotBlocks(RunSection):
    """Returns something that is not sections."""

    name = "not_blocks"
    page = "lengths"

    def sections(self, view):
        return "<b>markup</b>"


class Never(RunSection):
    """Absent on every run: no tab, and its page answers 404 with the reason."""

    name = "never"
    page = "never"

    def absent(self, run):
        return "has nothing for the never section"

    def sections(self, view):
        return None


def kit(*classes):
    plugin = types.SimpleNamespace()

    @hookimpl
    def register_sections(register):
        for cls in classes:
            register(cls)

    plugin.register_sections = register_sections
    return load_plugins([("kit", plugin)], entry_points=False)


@pytest.fixture
def planted(tmp_path):
    store, _ = write_planted_run(tmp_path / "results.db")
    yield store
    store.close()


def anchors(page: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)">', page)


def test_hook_register_sections(planted):
    host = kit(Lengths, Systems)
    shipped = [i for i in host.registry.in_order("section") if i.distribution == "ragassay"]
    assert not shipped  # ragassay's own are added when the report or the app first needs sections
    page = build_report(planted, [RUN], host=host)
    names = [i.name for i in host.registry.in_order("section")]
    assert names[:3] == ["kit/lengths", "kit/systems", "conclusion"] and "failures" in names  # in order of registration
    shipped = [i for i in host.registry.in_order("section") if i.distribution == "ragassay"]
    assert [i.plugin for i in shipped] == ["ragassay_sections"] * 14  # through the hook, like any plugin's
    found = anchors(page)
    assert found[:3] == ["conclusion", "kit-systems", "verdicts"]  # report_order 5: after the conclusion (1), before
    # the verdicts (10)
    assert found[-3:] == ["grammar", "kit-lengths", "browser"]  # the default order: after every shipped section
    web = TestClient(create_app(planted, token=None, host=host, prepare=False), base_url="http://127.0.0.1")
    lengths = web.get(f"/runs/{RUN}/lengths?alpha=0.1&seed=3&by=week")
    assert lengths.status_code == 200
    assert "alpha 0.1, seed 3, by week" in lengths.text  # the page's settings and its other query parameters
    assert f'/runs/{RUN}/lengths" class="here">question lengths</a>' in lengths.text
    first = web.get(f"/runs/{RUN}").text
    assert f'<a href="/runs/{RUN}/lengths">question lengths</a>' in first  # the tab, after the shipped ones
    assert first.index(f"/runs/{RUN}/failures") < first.index(f"/runs/{RUN}/lengths")
    assert anchors(first) == ["conclusion", "verdicts", "comparison", "pairs", "kit-systems"]  # after the shipped


def test_plugin_text_is_escaped(planted):
    host = kit(Lengths)
    page = build_report(planted, [RUN], host=host)
    served = TestClient(create_app(planted, token=None, host=host, prepare=False), base_url="http://127.0.0.1")
    for text in (page, served.get(f"/runs/{RUN}/lengths").text):
        section = text.split('id="kit-lengths"')[1].split("</section>")[0]
        assert "<script>" not in section and "&lt;script&gt;alert(1)&lt;/script&gt;" in section
        assert "Question lengths &lt;script&gt;" in section and '<p class="legend">&lt;script&gt;' in section


def test_a_broken_section_is_a_note_naming_its_plugin_and_the_error(planted):
    host = kit(Lengths, Broken, NotBlocks)
    page = build_report(planted, [RUN], host=host)
    served = TestClient(create_app(planted, token=None, host=host, prepare=False), base_url="http://127.0.0.1")
    lengths = served.get(f"/runs/{RUN}/lengths")
    assert lengths.status_code == 200
    for text in (page, lengths.text):
        assert "Traceback" not in text and 'id="kit-lengths"' in text  # the plugin's good section is there
        assert (
            "The section kit/broken of plugin &#39;kit&#39; (kit in-process) failed: RuntimeError: the broken section "
            "broke" in text
        )
        assert "RAGASSAY_DISABLE_PLUGINS=kit" in text
        assert "The section kit/not_blocks of plugin &#39;kit&#39; (kit in-process) failed: TypeError:" in text
        assert "<b>markup</b>" not in text
    assert 'id="comparison"' in page and "Failure browser" in page  # the rest of the report is there


def test_an_absent_page_has_no_tab_and_answers_404_with_the_reason(planted):
    host = kit(Never)
    web = TestClient(create_app(planted, token=None, host=host, prepare=False), base_url="http://127.0.0.1")
    assert "/never" not in web.get(f"/runs/{RUN}").text
    missing = web.get(f"/runs/{RUN}/never")
    assert missing.status_code == 404 and f"run {RUN[:12]} has nothing for the never section" in missing.text
    assert web.get(f"/runs/{RUN}/nowhere").status_code == 404  # a page no section names
    assert 'id="never"' not in build_report(planted, [RUN], host=host)


class BadPage(RunSection):
    """Names a page that cannot be a path segment."""

    name = "bad_page"
    page = "a/b"

    def sections(self, view):
        return Section("bad", "Bad", [Note("never shown")])


def test_a_section_with_a_bad_page_name_says_so_on_the_first_page(planted):
    host = kit(BadPage)
    web = TestClient(create_app(planted, token=None, host=host, prepare=False), base_url="http://127.0.0.1")
    first = web.get(f"/runs/{RUN}").text
    assert "The section kit/bad_page of plugin &#39;kit&#39;" in first and "is not a page name" in first
    assert "never shown" not in first and "is not a page name" in build_report(planted, [RUN], host=host)
