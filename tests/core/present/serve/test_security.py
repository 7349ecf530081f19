"""The gate of ``ragassay serve``: loopback by default, a token for anything else, no writing endpoint."""

from __future__ import annotations

import pytest

from ragassay.errors import ConfigError
from ragassay.present.serve.server import check_bind

from html_report_helpers import write_planted_run
from serve_helpers import client

TOKEN = "s3cret-token-0123456789"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    store, _ = write_planted_run(tmp_path_factory.mktemp("serve-security") / "results.db")
    yield store
    store.close()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "example.org", "::"])
def test_a_non_loopback_bind_without_a_token_is_refused(host):
    with pytest.raises(ConfigError, match="--token"):
        check_bind(host, None)
    check_bind(host, TOKEN)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_loopback_needs_no_token(host):
    check_bind(host, None)


def test_a_short_token_is_refused():
    with pytest.raises(ConfigError, match="at least 16"):
        check_bind("0.0.0.0", "short")


def test_without_a_token_only_loopback_host_names_are_answered(store):
    assert client(store).get("/").status_code == 200
    assert client(store, base_url="http://localhost:8000").get("/").status_code == 200
    assert client(store, base_url="http://attacker.example").get("/").status_code == 403


def test_a_wrong_or_missing_token_is_403_and_the_right_one_sets_a_cookie(store):
    web = client(store, token=TOKEN, base_url="http://example.org")
    assert web.get("/").status_code == 403
    assert web.get("/", params={"token": "x" * 23}).status_code == 403
    assert web.get("/", headers={"X-Ragassay-Token": "nope"}).status_code == 403
    assert web.get("/static/style.css").status_code == 403  # assets too
    assert web.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    moved = web.get("/", params={"token": TOKEN}, follow_redirects=False)
    assert moved.status_code == 303 and moved.headers["location"] == "/"
    assert "HttpOnly" in moved.headers["set-cookie"] and "SameSite=strict" in moved.headers["set-cookie"]
    assert web.get("/").status_code == 200  # the cookie now carries it


def test_every_answer_forbids_foreign_scripts_and_caching(store):
    page = client(store).get("/")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store" and page.headers["x-frame-options"] == "DENY"


def test_no_route_writes(store):
    from ragassay.present.serve import create_app

    app = create_app(store, token=None)
    methods = {m for route in app.routes for m in (getattr(route, "methods", None) or ())}
    assert methods <= {"GET", "HEAD"}, methods
    web = client(store)
    for path in ("/", "/runs/planted-run-0001", "/runs/planted-run-0001/failures"):
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            assert web.request(method, path).status_code == 405, (method, path)


def test_the_command_refuses_a_network_bind_without_a_token(tmp_path):
    from click.testing import CliRunner

    from ragassay.cli.main import cli

    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--db", f"sqlite:///{tmp_path / 'none.db'}"])
    assert result.exit_code == 2 and "--token" in result.output and "Traceback" not in result.output
    short = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--token", "abc"])
    assert short.exit_code == 2 and "at least 16" in short.output
    assert not (tmp_path / "none.db").exists()  # refused before opening anything
