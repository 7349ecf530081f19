"""``ragassay serve`` and ``ragassay label`` as started from a terminal: the URL printed is one to open (the port
the system chose for ``--port 0``, this machine's name for 0.0.0.0), a token the user chose is never echoed, the
token can come from a file or the environment, and ``--host 127.1`` is the loopback address it is."""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import subprocess
import sys

import httpx
import pytest

from conftest import BASIC_CONFIG, cli_env, ragassay_cli, write_project

TOKEN = "a-token-of-the-users-own-0123456789"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project with one stored run: (config path, run id)."""
    root = tmp_path_factory.mktemp("listening-project")
    config = write_project(root, BASIC_CONFIG)
    result = ragassay_cli("run", str(config), "-q")
    assert result.returncode == 0, result.stderr
    import sqlite3

    with sqlite3.connect(root / "ragassay-results.db") as con:
        (run_id,) = con.execute("select id from runs").fetchone()
    return config, run_id


@contextlib.contextmanager
def started(*args: str, env=None):
    """The command running until the block ends (then Ctrl-C); yields its printed lines up to the ``open`` line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "ragassay", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env or cli_env(),
    )
    try:
        lines = []
        while not lines or "open http" not in lines[-1]:
            line = process.stdout.readline()  # the command prints the URL, or exits (then an empty line)
            assert line, f"no URL printed: {lines} {process.communicate(timeout=60)}"
            lines.append(line.strip())
        yield lines
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=120)
        assert process.returncode == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def url_of(lines: list[str]) -> str:
    return re.search(r"open (http://\S+)", lines[-1]).group(1)


def test_port_0_prints_the_port_taken_and_127_1_is_loopback(project):
    config, _ = project
    with started("serve", "--config", str(config), "--host", "127.1", "--port", "0") as lines:
        url = url_of(lines)
        port = int(re.search(r"http://127\.1:(\d+)/$", url).group(1))
        assert port != 0
        assert httpx.get(url, timeout=60).status_code == 200  # Host: 127.1:PORT, a loopback name


def test_a_wildcard_bind_prints_this_machines_name_and_not_the_users_token(project, tmp_path):
    config, _ = project
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    args = ("serve", "--config", str(config), "--host", "0.0.0.0", "--port", "0", "--token-file", str(token_file))
    with started(*args) as lines:
        url = url_of(lines)
        assert TOKEN not in "\n".join(lines)
        match = re.fullmatch(r"http://(.+):(\d+)/\?token=<your-token>", url)
        assert match and match.group(1) == socket.gethostname(), url
        local = f"http://127.0.0.1:{match.group(2)}/"
        assert httpx.get(local, timeout=60).status_code == 403
        assert httpx.get(local, headers={"X-Ragassay-Token": TOKEN}, timeout=60).status_code == 200


def test_the_token_from_the_environment_and_a_generated_one_printed_once(project):
    config, run_id = project
    env = cli_env(RAGASSAY_TOKEN="generate")
    args = ("label", run_id, "--config", str(config), "--rubric", "correct", "--annotator", "a", "--port", "0")
    with started(*args, env=env) as lines:
        url = url_of(lines)
        token = re.search(r"/label\?token=([\w-]+)$", url).group(1)
        assert len(token) >= 16 and token != "generate"
        with httpx.Client(timeout=60) as browser:
            assert browser.get(url, follow_redirects=True).status_code == 200  # the token, then its cookie
    with started("serve", "--config", str(config), "--port", "0", env=cli_env(RAGASSAY_TOKEN=TOKEN)) as lines:
        url = url_of(lines)
        assert url.endswith("/?token=<your-token>") and TOKEN not in "\n".join(lines)
        assert (
            httpx.get(url.split("?")[0], params={"token": TOKEN}, follow_redirects=True, timeout=60).status_code == 200
        )


def test_a_token_given_twice_or_an_empty_token_file_is_refused(project, tmp_path):
    config, _ = project
    empty = tmp_path / "empty"
    empty.write_text("\n", encoding="utf-8")
    twice = ragassay_cli("serve", "--config", str(config), "--token", TOKEN, "--token-file", str(empty))
    assert twice.returncode == 2 and "give the access token once" in twice.stderr
    result = ragassay_cli("serve", "--config", str(config), "--token-file", str(empty))
    assert result.returncode == 2 and result.stderr.startswith("error: --token-file") and "empty" in result.stderr
