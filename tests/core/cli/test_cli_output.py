"""Output a person can read: escaped names, tables readable at 80 columns with every number whole,
--format json|csv|markdown on every listing command, one way to name the project, exit codes with --debug."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from conftest import BASIC_CONFIG, cli_env, ragassay_cli, write_project

GRID_CONFIG = BASIC_CONFIG.replace(
    '[evaluation]\n    judges = ["match"]',
    """[grid.depth]
    extends = "bm25"
    "options.top_k" = [1, 2, 3]

    [evaluation]
    metrics = ["token_recall", "k_precision", "exact_match", "contains_answer", "context_mrr", "recall_at_k",
               "token_f1"]
    judges = ["match"]""",
)
GRID_SYSTEMS = ["keyword", "bm25", "depth[top_k=1]", "depth[top_k=2]", "depth[top_k=3]"]


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """A project with five systems (three of them grid systems with brackets in their names) after one run."""
    root = tmp_path_factory.mktemp("grid")
    config = write_project(root, GRID_CONFIG)
    result = ragassay_cli("run", str(config), "-q")
    assert result.returncode == 0, result.stderr
    run_id = result.stderr.split("run ")[1].split(":")[0]
    return root, run_id


def cli80(*args, cwd=None):
    """The CLI at 80 columns; asserts success, and that the rich view fits and cuts nothing."""
    result = ragassay_cli(*args, env=cli_env(COLUMNS="80"), cwd=cwd)
    assert result.returncode == 0, result.stderr
    if "--format" in args or "--json" in args:
        return result.stdout
    assert all(len(line) <= 80 for line in result.stdout.splitlines()), result.stdout
    assert "…" not in result.stdout
    return result.stdout


def numbers(value):
    """Every number in a JSON value (bools excluded)."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (int, float)):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from numbers(item)


def shown(value, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def test_compare_at_80_columns_shows_every_number_whole_and_escaped_names(grid):
    root, run_id = grid
    text = cli80("compare", run_id, "-c", str(root))
    tables = json.loads(cli80("compare", run_id, "-c", str(root), "--format", "json"))
    assert list(tables) == ["comparison", "verdicts", "latency", "frontier", "hidden"]
    data = tables["comparison"]
    assert [row["system"] for row in data] == GRID_SYSTEMS
    for system in GRID_SYSTEMS:
        assert f"│ {system} " in text
    for row in data:
        for key, value in row.items():
            if value is None or key in ("system", "run"):
                continue
            digits = 4 if key in ("latency s", "cost $") else 0 if key.endswith("tokens") else 3
            assert shown(value, digits) in text, (key, value)
        assert f"{row['token_recall']:.3f} ({row['token_recall n']})" in text
        low, high = row["token_recall ci_low"], row["token_recall ci_high"]
        assert low <= row["token_recall"] <= high and f"[{low:.3f}, {high:.3f}]" in text
    assert "+Nu: N outputs unscored" in text  # the legend of the notation
    assert "verdicts, run " in text and "against keyword (baseline)" in text
    hidden = " ".join(text.split())
    assert "exact_match (0.000 on every system and sample)" in hidden and "--all-columns shows them" in hidden
    assert "exact_match" in cli80("compare", run_id, "-c", str(root), "--all-columns")


def test_paired_table_has_a_legend_and_whole_numbers(grid):
    root, run_id = grid
    text = cli80("compare", run_id, "-c", str(root), "--against", "keyword")
    flat = " ".join(text.split())
    assert "W/T/L = samples where the system scores better/the same/worse than keyword" in flat
    assert "The same pair results as the verdicts below" in flat and "against keyword (baseline)" in flat
    data = json.loads(cli80("compare", run_id, "-c", str(root), "--against", "keyword", "--json"))
    paired = data["pairs"]
    assert [row["system"] for row in paired] == GRID_SYSTEMS[1:]
    verdicts = {(v["system"], v["metric"]): v for v in data["verdicts"]}
    for row in paired:
        diff, wins, ties, losses, n = (row[f"token_recall {p}"] for p in ("mean_diff", "wins", "ties", "losses", "n"))
        assert f"{diff:+.3f}" in text and f"{wins}/{ties}/{losses} n={n}" in text
        same = verdicts[(row["system"], "token_recall")]  # one procedure: the pair table is the verdicts' numbers
        assert (same["mean_diff"], same["ci_low"], same["ci_high"]) == tuple(
            row[f"token_recall {p}"] for p in ("mean_diff", "ci_low", "ci_high")
        )
    two = ragassay_cli("compare", run_id, "-c", str(root), "--against", "keyword", "--baseline", "bm25", env=cli_env())
    assert two.returncode == 2 and "name two baselines" in two.stderr


def test_runs_tells_runs_apart(grid):
    root, run_id = grid
    text = cli80("runs", cwd=root)
    assert run_id in text and "keyword, bm25, +3" in text and "ragassay.toml" in text and "description" in text
    data = json.loads(cli80("runs", "--format", "json", cwd=root))
    assert data[0]["systems"] == ", ".join(GRID_SYSTEMS) and data[0]["config"] == "ragassay.toml"
    for value in numbers(data):
        assert shown(value) in text
    rows = list(csv.DictReader(io.StringIO(cli80("runs", "--format", "csv", cwd=root))))
    assert rows[0]["run"] == run_id and rows[0]["samples"] == "3" and rows[0]["outputs"] == "15"


def test_report_escapes_names_and_shows_every_number(grid):
    root, run_id = grid
    text = cli80("report", run_id, "--config", str(root))
    for system in GRID_SYSTEMS:
        assert f"│ {system} " in text
    assert "GRAMMAR" not in text and "Eq." not in text  # plain QA data: no group_id, no GRAMMAR section
    assert "verdicts, run " in text and "cost view of run" in text
    (report,) = json.loads(cli80("report", run_id, "-c", str(root), "--format", "json"))
    assert report["grammar"] is None and "no sample has a group_id" in report["grammar_reason"]
    for row in report["cost"]["rows"]:
        assert shown(row["quality"]) in text
    markdown = cli80("report", run_id, "-c", str(root), "--format", "markdown")
    assert "| depth[top\\_k=1] |" in markdown or "| depth[top_k=1] |" in markdown
    table = cli80("report", run_id, "-c", str(root), "--format", "csv", "--table", "cost")
    assert list(csv.DictReader(io.StringIO(table)))[0]["system"] == GRID_SYSTEMS[0]


def test_show_formats(grid):
    root, run_id = grid
    text = cli80("show", run_id, "q2", "-c", str(root))
    assert "depth[top_k=2]" in text
    detail = json.loads(cli80("show", run_id, "q2", "-c", str(root), "--format", "json"))
    for output in detail["outputs"]:
        for metric in output["metrics"]:
            assert metric["value"] is None or f"{metric['value']:.3f}" in text
    rows = list(csv.DictReader(io.StringIO(cli80("show", run_id, "q2", "-c", str(root), "--format", "csv"))))
    assert {row["system"] for row in rows} == set(GRID_SYSTEMS)
    assert {row["score"] for row in rows} >= {"token_recall", "judge:match"}


def test_a_project_folder_given_as_run_id_gets_one_clear_line(grid):
    root, _ = grid
    for args in (
        ("report", str(root)),
        ("compare", str(root)),
        ("show", str(root), "q1"),
        ("report", str(root / "ragassay.toml"), "-c", str(root)),
    ):
        result = ragassay_cli(*args, cwd=root.parent)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.startswith("error: '") and "not a run id; name the project with --config" in result.stderr
        assert "Traceback" not in result.stderr


def test_run_takes_the_project_once(grid, tmp_path):
    root, _ = grid
    twice = ragassay_cli("run", str(root), "--config", str(tmp_path))
    assert twice.returncode == 2 and "named twice" in twice.stderr
    dry = ragassay_cli("generate", "-c", str(root), "--dry-run")
    assert "cannot tell in advance" in dry.stderr  # the files source read from --config, not from '.'


def test_debug_keeps_the_exit_code(tmp_path):
    result = ragassay_cli("--debug", "run", "--config", str(tmp_path / "missing.toml"))
    assert result.returncode == 2
    assert "Traceback" in result.stderr and "config file not found" in result.stderr


def test_json_alias_and_format_must_agree(grid):
    root, run_id = grid
    result = ragassay_cli("compare", run_id, "-c", str(root), "--json", "--format", "csv")
    assert result.returncode == 2 and "--json contradicts --format csv" in result.stderr


def test_plugins_options_are_readable_at_80_columns():
    text = cli80("plugins", "--options")
    for internal in ("PydanticUndefined", "<class", "FieldInfo(", "annotation="):
        assert internal not in text
    flat = " ".join(text.split())
    assert "Cite the sources you use as [n]." in flat
    assert "needs [llm] cache" in flat
    assert "chunker recursive (recursive_chunker" in flat and "chunker kenneweg" in flat
    assert "tie_breaker (float; default 0.0)" in flat and "generator (GeneratorRef; required)" in flat
    data = json.loads(cli80("plugins", "--format", "json"))
    for component in data["components"]:
        for option in component["option_list"]:
            assert f"{option['option']} ({option['type']}; " in flat
    for value in numbers([p.get("default") for c in data["components"] for p in c["options"]["properties"].values()]):
        assert re.search(rf"default [^)]*\b{re.escape(str(value))}\b", flat), value
    rows = list(csv.DictReader(io.StringIO(cli80("plugins", "--options", "--format", "csv"))))
    assert {
        "kind": "retriever",
        "component": "bm25",
        "option": "tie_breaker",
        "type": "float",
        "default": "0.0",
    }.items() <= next(r for r in rows if r["component"] == "bm25" and r["option"] == "tie_breaker").items()
