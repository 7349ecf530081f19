"""``ragassay watch`` bad input: one line naming the key or option, exit 2, before anything starts."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli


def _run(tmp_path, config: str, *args: str):
    (tmp_path / "ragassay.toml").write_text(config, encoding="utf-8")
    return CliRunner().invoke(cli, ["watch", "-c", str(tmp_path), "--from-store", "--for", "0", *args])


@pytest.mark.parametrize(
    ("config", "args", "expected"),
    [
        ("[watch]\nbudjet = {}\n", (), "watch.budjet: unknown key; did you mean 'budget'?"),
        ("[watch]\nreference = { run = 'a', target = { x = 1 } }\n", (), "give exactly one of run, since/until"),
        ("[watch]\nwhere = { since = '2025-01-01' }\n", (), "where since/until do not apply"),
        ("[watch]\nsinks = { webhook = 'ftp://x' }\n", (), "webhook must be an http:// or https:// URL"),
        ("", ("--budget", "calls_per_week=3"), "--budget calls_per_week: not a limit"),
        ("", ("--target", "k_precision"), "--target 'k_precision': write KEY=VALUE"),
        ("", ("--until", "tomorrow"), "--until 'tomorrow': not an ISO 8601"),
        ("[watch]\nmetrics = ['k_precision']\n", (), "the watch needs a reference"),
        (
            "[watch]\nmetrics = ['k_precision']\nreference = { target = { token_recall = 0.9 } }\n",
            (),
            "token_recall not watched",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, config, args, expected):
    result = _run(tmp_path, config, *args)
    assert result.exit_code == 2, result.output
    assert expected in result.output
    assert "Traceback" not in result.output


def test_with_no_trace_and_no_alarm_the_gate_exits_0(tmp_path):
    result = _run(
        tmp_path, "[watch]\nmetrics = ['k_precision']\nreference = { target = { k_precision = 0.9 } }\n", "--json"
    )
    assert result.exit_code == 0, result.output
    assert '"decided": {}' in result.output
