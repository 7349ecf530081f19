"""``ragassay serve``'s conversation pages on a hand-built conversational run: the listing with each system's
first failing turn, a conversation turn by turn (queries, references marked, claims with support, first failure),
the link from a turn's sample page, planted markup shown as text, 404 and 400 pages."""

from __future__ import annotations

import html
import re

import pytest

from conversation_runs import MARKUP, PLANT, RUN_ID, write_conversation_run
from serve_helpers import client, text_of
from written_runs import write_run

RUN = f"/runs/{RUN_ID}"


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    store, _ = write_conversation_run(tmp_path_factory.mktemp("conversation-pages") / "results.db")
    yield client(store)
    store.close()


def test_the_listing_links_every_conversation_with_its_first_failure(web):
    page = web.get(f"{RUN}/conversations")
    assert page.status_code == 200, page.text
    assert f'href="{RUN}/conversations" class="here">conversations' in page.text  # its tab
    assert "0.433 <small>[0.333, 0.750] n=8 (3)</small>" in page.text  # the section, as in the report
    rows = re.findall(r'<tr><td><a href="([^"]+)">(\w+)</a></td><td>(\w+)</td><td class="num">(\d)</td>', page.text)
    assert [(link, cid, system) for link, cid, system, _ in rows][:2] == [
        (f"{RUN}/conversations/c1", "c1", "last"),
        (f"{RUN}/conversations/c1", "c1", "rewrite"),
    ]
    text = text_of(page.text)
    assert "c3 last 3 answerable, unanswerable 1 retrieval retrieval at turn 1" in text
    assert "c3 rewrite 3 answerable, unanswerable 3 context_loss context_loss at turn 3" in text


def test_a_conversation_turn_by_turn(web):
    page = web.get(f"{RUN}/conversations/c1")
    assert page.status_code == 200, page.text
    text = text_of(page.text)
    assert text.index("Turn 1 c1::1") < text.index("Turn 2 c1::2") < text.index("Turn 3 c1::3")
    assert "last: first failed at turn 2 (retrieval: retrieval at turn 2)" in text
    assert "rewrite: no failing turn" in text and "user: hello agent: hi!" in text
    turn2 = text[text.index("Turn 2 c1::2") : text.index("Turn 3 c1::3")]
    assert "last ok, FIRST FAILURE, blame: retrieval (retrieval at turn 2) Query: (the question itself)" in turn2
    assert "[1] doc-a#0 (doc-a): Text of A. [2] doc-b#3 (doc-b) REFERENCE: Text of B." in turn2
    assert "history It opened in 1999 turn 1 said at turn 1" in turn2
    assert "context It has three floors context [2]" in turn2  # 0-based index 1, listed as [2]
    assert f"Query: rewritten: {MARKUP} is it? {PLANT}" in turn2
    assert PLANT not in page.text and html.escape(PLANT, quote=False) in page.text  # markup only as text
    assert f'href="{RUN}/samples/c1%3A%3A2"' in page.text


def test_only_the_systems_asked_for(web):
    text = text_of(web.get(f"{RUN}/conversations/c3?system=rewrite").text)
    assert "rewrite: first failed at turn 3 (context_loss: context_loss at turn 3)" in text
    assert "last ok" not in text and "last:" not in text


def test_a_turn_sample_links_to_its_conversation(web):
    page = web.get(f"{RUN}/samples/c2::2")
    assert page.status_code == 200
    assert f'Turn 2 of conversation <a href="{RUN}/conversations/c2">c2</a>' in page.text
    assert "of conversation" not in web.get(f"{RUN}/samples/single").text


def test_unknown_conversation_is_404_and_unknown_system_400(web):
    missing = web.get(f"{RUN}/conversations/zz")
    assert missing.status_code == 404 and "has no conversation &#39;zz&#39;; it has: c1, c2, c3" in missing.text
    wrong = web.get(f"{RUN}/conversations/c1?system=nope")
    assert wrong.status_code == 400 and "system &#39;nope&#39; is not in this run" in wrong.text


def test_a_run_without_turns_has_no_conversations_tab(tmp_path):
    store, run_id = write_run(tmp_path / "plain.db", {"a": [{"metrics": {"m": 1.0}}]})
    try:
        web = client(store)
        assert ">conversations</a>" not in web.get(f"/runs/{run_id}").text
        page = web.get(f"/runs/{run_id}/conversations")
        assert page.status_code == 404 and "has no conversation turn" in page.text
    finally:
        store.close()
