"""The CLI against a real PostgreSQL results database: run, resume, runs, compare, report, show; no password leaks."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import create_engine, text

from ragassay import load_run

from conftest import BASIC_CONFIG, cli_env, ragassay_cli, write_project
from postgres_server import ROLE

pytestmark = pytest.mark.slow


def test_run_and_every_reader_on_postgresql_with_the_password_from_the_environment(
    postgres_server, postgres_url, tmp_path, monkeypatch
):
    database = postgres_url.rsplit("/", 1)[1]
    written = f"postgresql+psycopg://{ROLE}:${{RG_PG_PASSWORD}}@127.0.0.1:{postgres_server.port}/{database}"
    config = BASIC_CONFIG.replace('name = "t"', f'name = "t"\n    results = "{written}"')
    project = write_project(tmp_path, config)
    secret = postgres_server.password
    env = cli_env(RG_PG_PASSWORD=secret)
    monkeypatch.setenv("RG_PG_PASSWORD", secret)

    first = ragassay_cli("run", str(project), env=env)
    assert first.returncode == 0, first.stderr
    again = ragassay_cli("run", str(project), env=env)
    assert again.returncode == 0 and "resuming run" in again.stderr and "(6 already done)" in again.stderr
    assert not (tmp_path / "ragassay-results.db").exists()

    engine = create_engine(postgres_url)
    with engine.connect() as conn:
        run_id, config_json = conn.execute(text("SELECT id, config_json FROM runs")).one()
        stored = [str(value) for row in conn.execute(text("SELECT * FROM runs")) for value in row]
        assert conn.execute(text("SELECT count(*) FROM outputs")).scalar() == 6
    engine.dispose()
    assert json.loads(config_json)["project"]["results"] == written  # as written, the variable unexpanded
    assert not any(secret in value for value in stored)

    html = tmp_path / "report.html"
    readers = {
        "runs": ragassay_cli("runs", "--config", str(project), env=env),
        "compare": ragassay_cli("compare", run_id[:6], "--config", str(project), env=env),
        "report": ragassay_cli("report", run_id, "--config", str(project), env=env),
        "report --html": ragassay_cli("report", run_id, "--config", str(project), "--html", str(html), env=env),
        "show": ragassay_cli("show", run_id, "q2", "--config", str(project), env=env),
        "show --db": ragassay_cli("show", run_id, "q2", "--json", "--db", written, env=env),
        "breakdown": ragassay_cli("breakdown", "--config", str(project), "--by", "question", env=env),
        "cost": ragassay_cli("cost", "--config", str(project), env=env),
    }
    for name, result in readers.items():
        assert result.returncode == 0, f"{name}: {result.stderr}"
        assert secret not in result.stdout + result.stderr, name
    assert run_id in readers["runs"].stdout and "complete" in readers["runs"].stdout
    assert "judge:match" in readers["compare"].stdout and "Who fished salmon" in readers["show"].stdout
    assert {o["system"] for o in json.loads(readers["show --db"].stdout)["outputs"]} == {"keyword", "bm25"}
    frames = load_run(run_id[:8], db=written)  # the Python API reads the same URL (variable expanded)
    assert len(frames.outputs) == 6 and set(frames.outputs.index.get_level_values("system")) == {"keyword", "bm25"}
    assert html.exists() and secret not in html.read_text(encoding="utf-8") and "bm25" in html.read_text("utf-8")


def test_bad_postgresql_urls_are_one_line_and_exit_2(postgres_server, tmp_path):
    database_missing = postgres_server.url("no_such_db", "${RG_PG_PASSWORD}")
    literal = postgres_server.url("postgres", "literal-s3cret")
    cases = {
        database_missing: "Create the database first",
        literal: "Check the user and the password",
        postgres_server.url("x", "${RG_UNSET_VARIABLE}"): "RG_UNSET_VARIABLE, which is not set",
    }
    env = cli_env(RG_PG_PASSWORD=postgres_server.password)
    for url, expected in cases.items():
        result = ragassay_cli("runs", "--db", url, env=env)
        assert result.returncode == 2, result.stderr
        assert expected in result.stderr and "Traceback" not in result.stderr
        assert postgres_server.password not in result.stderr and "literal-s3cret" not in result.stderr
