"""Results URLs: environment variables expanded only when opened, passwords never shown, clear open errors."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import text

from ragassay.errors import ConfigError, StoreError
from ragassay.store import SCHEMA_VERSION, open_store
from ragassay.store.urls import expand, redact, redact_config, redact_text

from postgres_server import ROLE


def test_variables_are_expanded_and_a_missing_one_names_the_key(monkeypatch):
    monkeypatch.setenv("RG_PW", "s3cret")
    monkeypatch.setenv("RG_HOST", "db.example")
    assert (
        expand("postgresql+psycopg://me:${RG_PW}@$RG_HOST:5432/r") == "postgresql+psycopg://me:s3cret@db.example:5432/r"
    )
    monkeypatch.delenv("RG_PW")
    with pytest.raises(ConfigError, match=r"\[project\] results names the environment variable RG_PW, which is not"):
        expand("postgresql+psycopg://me:${RG_PW}@h/r")


def test_literal_passwords_are_redacted_and_variables_kept_as_written():
    assert redact("postgresql+psycopg://me:s3cret@h:5432/r") == "postgresql+psycopg://me:***@h:5432/r"
    assert redact("postgresql+psycopg://me:${PW}@h/r") == "postgresql+psycopg://me:${PW}@h/r"
    assert redact("sqlite:////tmp/a@b/results.db") == "sqlite:////tmp/a@b/results.db"
    assert redact_text("failed for me:s3cret", "postgresql://me:s3cret@h/r") == "failed for me:***"
    stored = json.dumps({"project": {"results": "postgresql://me:s3cret@h/r"}, "x": 1})
    assert "s3cret" not in redact_config(stored) and json.loads(redact_config(stored))["x"] == 1
    as_written = json.dumps({"project": {"results": "postgresql://me:${PW}@h/r"}})
    assert redact_config(as_written) == as_written


def test_a_missing_variable_when_opening_is_a_config_error(monkeypatch):
    monkeypatch.delenv("RG_NOT_SET", raising=False)
    with pytest.raises(ConfigError, match="RG_NOT_SET"):
        open_store("postgresql+psycopg://me:${RG_NOT_SET}@127.0.0.1:1/r")


def test_a_missing_driver_says_which_extra_to_install():
    with pytest.raises(StoreError) as info:  # pg8000 is not a dependency: its import fails for real
        open_store("postgresql+pg8000://me:s3cret@127.0.0.1:1/r")
    message = str(info.value)
    assert "pip install 'ragassay[postgres]'" in message and "me:***@" in message and "s3cret" not in message


def test_an_unreachable_server_is_one_line_without_the_password(postgres_server):
    from ray_cluster import free_port

    with pytest.raises(StoreError) as info:
        open_store(f"postgresql+psycopg://{ROLE}:s3cret@127.0.0.1:{free_port()}/r")
    message = str(info.value)
    assert message.startswith(f"cannot connect to results database postgresql+psycopg://{ROLE}:***@127.0.0.1:")
    assert "server is running" in message and "s3cret" not in message and "\n" not in message


def test_a_missing_database_and_a_wrong_password(postgres_server, monkeypatch):
    monkeypatch.setenv("RG_PW", postgres_server.password)
    with pytest.raises(StoreError, match=r"does not exist.*Create the database first") as info:
        open_store(postgres_server.url("nope", "${RG_PW}"))
    assert "${RG_PW}" in str(info.value) and postgres_server.password not in str(info.value)
    with pytest.raises(StoreError, match=r"password authentication failed.*Check the user and the password"):
        open_store(postgres_server.url("postgres", "wrong"))


def test_reading_a_server_database_without_results_says_to_run_first(postgres_url):
    with pytest.raises(StoreError, match="holds no results yet"):
        open_store(postgres_url, create=False)


def test_a_url_with_a_variable_opens_the_server_and_migrates(postgres_server, postgres_url, monkeypatch):
    monkeypatch.setenv("RG_PW", postgres_server.password)
    store = open_store(postgres_url.replace(postgres_server.password, "${RG_PW}"))
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT version FROM schema_version")).scalar() == SCHEMA_VERSION
    store.close()


def test_a_literal_password_never_reaches_the_stored_config(tmp_path):
    from ragassay.models import Sample

    store = open_store(f"sqlite:///{tmp_path / 'r.db'}")
    config = {"project": {"results": "postgresql+psycopg://me:s3cret@db.example/r", "name": "p"}}
    run = {
        "id": "r1",
        "fingerprint": "f",
        "project": "p",
        "config_path": "c",
        "config_json": json.dumps(config),
        "spec_json": "{}",
        "ragassay_version": "0",
        "sample_count": 1,
    }
    store.create_run(run, [("s", "{}")], [Sample(question_id="q", question="?")])
    stored = json.loads(store.get_run("r1")["config_json"])
    assert stored["project"] == {"results": "postgresql+psycopg://me:***@db.example/r", "name": "p"}
    store.close()


def test_sqlite_file_is_the_path_of_a_plain_sqlite_file_url_only(tmp_path, monkeypatch):
    from ragassay.store.urls import sqlite_file

    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    assert sqlite_file("sqlite:///${RESULTS_DIR}/r.db") == tmp_path / "r.db"
    assert sqlite_file(f"sqlite:///{tmp_path}/r.db") == tmp_path / "r.db"
    for url in ("sqlite:///:memory:", "sqlite://", f"sqlite:///{tmp_path}/r.db?timeout=5", "postgresql://h/db"):
        assert sqlite_file(url) is None, url
